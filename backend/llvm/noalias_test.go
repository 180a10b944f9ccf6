package llvm

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
)

// inPlaceLoop carries a cache %c through a loop that updates one row of
// it in place each iteration (as a decode step's KV cache) and then reads
// the updated cache in kernels, at another index (a transpose) and at its
// own.
const inPlaceLoop = `func @main(%c0: f32[8,8], %x0: f32[8,8]) -> (f32[8,8], f32[8,8]) {
  %z = constant 0 : i32[]
  %i, %c, %x = while %z, %c0, %x0 cond (%i: i32[], %c: f32[8,8], %x: f32[8,8]) {
      %n = constant 8 : i32[]
      %go = compare %i, %n {dir=lt}
      return %go
    } do (%i: i32[], %c: f32[8,8], %x: f32[8,8]) {
      %row = slice %x {start=[0, 0], limit=[1, 8], stride=[1, 1]}
      %t = tanh %row
      %zero = constant 0 : i32[]
      %c1 = dynamic_update_slice %c, %t, %i, %zero
      %ct = transpose %c1 {perm=[1, 0]}
      %s = add %x, %ct
      %m = mul %s, %s
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      return %i1, %c1, %m
    }
  return %c, %x
}
`

// TestKernelOutputsAliasNothing checks the guarantee noalias.go's
// metadata rests on, on plans that update in place (a donated cache, a
// carried one), read a value twice and read views of a stacked weight:
// every kernel output is a new temporary or result, named once among the
// step's buffers, and its arena overlaps no other buffer's.
func TestKernelOutputsAliasNothing(t *testing.T) {
	b := testBackend(t)
	srcs := map[string]string{"donate": donateSrc, "loop": inPlaceLoop, "scan": scanRows,
		"twice": "func @main(%x: f32[4,4]) -> f32[4,4] {\n  %y = mul %x, %x\n  %t = transpose %y {perm=[1, 0]}\n  %s = add %y, %t\n  return %s\n}\n"}
	for name, src := range srcs {
		m, err := tir.Parse(name+".tir", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		x, err := b.compileDonating(m, m.Entry(), nil, []int{0})
		if err != nil {
			t.Fatal(err)
		}
		p := x.plan
		mem := planMemory(p)
		kernels := 0
		for _, st := range p.steps {
			if st.kind != stepKernel {
				continue
			}
			kernels++
			for _, o := range st.bufs[:st.outs] {
				s := p.slots[o]
				if (s.kind != slotTemp && s.kind != slotResult) || s.view != nil {
					t.Errorf("%s: step %q writes slot %d, of kind %d", name, st.what, o, s.kind)
				}
				for j, c := range st.bufs {
					if j < st.outs && st.bufs[j] == o {
						continue
					}
					if c == o {
						t.Errorf("%s: step %q names its output %d again as buffer %d", name, st.what, o, j)
					}
					if overlaps(mem[o], mem[c]) {
						t.Errorf("%s: step %q writes slot %d over buffer %d (slot %d)", name, st.what, o, j, c)
					}
				}
			}
		}
		if kernels == 0 {
			t.Errorf("%s: no kernel step:\n%s", name, p)
		}
	}
}

// overlaps reports whether a and b share a byte.
func overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// TestNoAliasInPlace: the kernels carry the scoped noalias metadata, and
// programs whose storage is updated in place while kernels read it (a
// carried cache, a donated one, run donated and not) agree with the
// reference executor.
func TestNoAliasInPlace(t *testing.T) {
	b := testBackend(t)
	m, f, x := compileSrc(t, b, inPlaceLoop)
	if !strings.Contains(x.plan.String(), "update in place dynamic_update_slice") {
		t.Fatalf("the carried cache is not updated in place:\n%s", x.plan)
	}
	text := x.plan.gen.text()
	for _, want := range []string{"!alias.scope !", "!noalias !", `!"output 0"`} {
		if !strings.Contains(text, want) {
			t.Fatalf("the kernels carry no %q:\n%s", want, text)
		}
	}
	for seed := int64(1); seed <= 3; seed++ {
		agree(t, x, m, f, cpu.RandomInputs(f, seed))
	}
	dm, err := tir.Parse("step.tir", []byte(donateSrc))
	if err != nil {
		t.Fatal(err)
	}
	df := dm.Funcs[0]
	dx, err := b.compileDonating(dm, df, nil, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	for _, slot := range []int32{0, 3} {
		in := donateArgs(t, df, slot)
		want, err := cpu.Run(dm, df, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dx.RunWith(in, backend.RunOptions{Donate: []int{0}})
		if err != nil {
			t.Fatal(err)
		}
		checkResults(t, want, got)
	}
}
