package cpu

import (
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// TestRunFusion: a multi-output fusion runs its body: x*b+1 and the row sums
// of x, with the region's parameters bound to the operands.
func TestRunFusion(t *testing.T) {
	src := `func @f(%x: f32[2,3], %b: f32[3]) -> (f32[2,3], f32[2]) {
  %y, %s = fusion %x, %b {kind=input} : f32[2,3], f32[2] (%p: f32[2,3], %q: f32[3]) {
    %one = constant 1.0 : f32[2,3]
    %qb = broadcast %q {dims=[1]} : f32[2,3]
    %m = mul %p, %qb
    %y1 = add %m, %one
    %s1 = reduce_sum %p {axes=[1]}
    return %y1, %s1
  }
  return %y, %s
}
`
	m, err := tir.Parse("m.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x := F(ir.Tensor(ir.F32, 2, 3), 1, 2, 3, 4, 5, 6)
	b := F(ir.Tensor(ir.F32, 3), 10, 20, 30)
	out, err := Run(m, m.Entry(), []*backend.Buffer{x, b})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{11, 41, 91, 41, 101, 181}, {6, 15}}
	for i, w := range want {
		if len(out[i].Float32s()) != len(w) {
			t.Fatalf("result %d: %v, want %v", i, out[i], w)
		}
		for k := range w {
			if out[i].Float64At(k) != w[k] {
				t.Fatalf("result %d: %v, want %v", i, out[i], w)
			}
		}
	}
	if err := CheckMemory(m, m.Entry(), 1<<20); err != nil {
		t.Errorf("CheckMemory: %v", err)
	}
}
