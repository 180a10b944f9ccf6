package cpu

import (
	"bytes"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
)

// customCallSrc calls a kernel twice, with a side effect and without, each
// with @fb as its fallback; @none has no fallback.
const customCallSrc = `func @main(%x: f32[3,4], %y: f32[3,4], %n: i32[5]) -> (f32[3,4], i32[5], f32[3,4]) {
  %a, %b = custom_call @kern(%x, %y, %n) {has_side_effect=true, fallback=@fb, cost=27} : f32[3,4], i32[5]
  %c, %d = custom_call @kern(%x, %y, %n) {fallback=@fb} : f32[3,4], i32[5]
  %s = add %a, %c : f32[3,4]
  return %s, %d, %a
}

func @fb(%p: f32[3,4], %q: f32[3,4], %k: i32[5]) -> (f32[3,4], i32[5]) {
  %r = add %p, %q : f32[3,4]
  %m = mul %k, %k : i32[5]
  %t = add %m, %k : i32[5]
  return %r, %t
}

func @none(%x: f32[3,4]) -> f32[3,4] {
  %r = custom_call @tpu_custom_call(%x) {backend_config="kernel"} : f32[3,4]
  return %r
}
`

// TestCustomCallFallback: the executor runs a custom_call's fallback, so
// @main's results are @fb's, bit for bit (twice, summed for the first).
func TestCustomCallFallback(t *testing.T) {
	m, err := tir.Parse("cc.tir", []byte(customCallSrc))
	if err != nil {
		t.Fatal(err)
	}
	main, fb := m.Func("main"), m.Func("fb")
	in := RandomInputs(main, 5)
	got, err := Run(m, main, in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Run(m, fb, in)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got[0].Float32s() {
		if w := want[0].Float32s()[i]; v != w+w {
			t.Fatalf("result 0 element %d is %v, want %v (the fallback's, doubled)", i, v, w+w)
		}
	}
	if !bytes.Equal(got[1].Bytes(), want[1].Bytes()) || !bytes.Equal(got[2].Bytes(), want[0].Bytes()) {
		t.Errorf("custom_call's results differ from its fallback's:\n got %v %v\nwant %v %v", got[2], got[1], want[0], want[1])
	}
}

// TestCustomCallRefused: without a fallback the executor refuses the call by
// its target, at its position.
func TestCustomCallRefused(t *testing.T) {
	m, err := tir.Parse("cc.tir", []byte(customCallSrc))
	if err != nil {
		t.Fatal(err)
	}
	f := m.Func("none")
	_, err = Run(m, f, RandomInputs(f, 1))
	const want = "cc.tir:16:3: error: custom_call @tpu_custom_call has no fallback: it runs only on a backend that has the kernel"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}
