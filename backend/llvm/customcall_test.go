package llvm

import (
	"bytes"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
)

const customCallSrc = `func @main(%x: f32[3,4], %y: f32[3,4], %n: i32[5]) -> (f32[3,4], i32[5]) {
  %a, %b = custom_call @kern(%x, %y, %n) {has_side_effect=true, fallback=@fb} : f32[3,4], i32[5]
  %e, %d = custom_call @kern(%x, %y, %n) {fallback=@fb, cost=27} : f32[3,4], i32[5]
  return %a, %d
}

func @fb(%p: f32[3,4], %q: f32[3,4], %k: i32[5]) -> (f32[3,4], i32[5]) {
  %r = add %p, %q : f32[3,4]
  %m = mul %k, %k : i32[5]
  %t = add %m, %k : i32[5]
  return %r, %t
}
`

// TestCustomCallFallback: through the one compile path (passes, then this
// backend), a custom_call runs its fallback inlined: the results are the
// fallback's on the reference executor, bit for bit. Without a fallback the
// compile refuses the call by its target, at its position.
func TestCustomCallFallback(t *testing.T) {
	b := testBackend(t)
	m, err := tir.Parse("cc.tir", []byte(customCallSrc))
	if err != nil {
		t.Fatal(err)
	}
	in := cpu.RandomInputs(m.Func("main"), 5)
	want, err := cpu.Run(m, m.Func("fb"), in)
	if err != nil {
		t.Fatal(err)
	}
	exe, _, err := engine.Compile(m, engine.Config{Target: "cpu", Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	got, err := exe.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !bytes.Equal(got[i].Bytes(), want[i].Bytes()) {
			t.Errorf("result %d is %v, want the fallback's %v", i, got[i], want[i])
		}
	}

	none := "func @f(%x: f32[4]) -> f32[4] {\n  %r = custom_call @tpu_custom_call(%x) : f32[4]\n  return %r\n}\n"
	m, err = tir.Parse("none.tir", []byte(none))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = engine.Compile(m, engine.Config{Target: "cpu", Backend: b})
	const refusal = "backend llvm: none.tir:2:3: error: custom_call @tpu_custom_call has no fallback: it runs only on a backend that has the kernel"
	if err == nil || err.Error() != refusal {
		t.Fatalf("got %v, want %s", err, refusal)
	}
}
