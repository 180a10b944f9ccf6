package stablehlo

import (
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// sortTIR sorts x descending along axis 1, stable, carrying i: ties (the
// two 3s, the two 5s) keep their order.
const sortTIR = `func @main(%x: f32[2,4], %i: i32[2,4]) -> (f32[2,4], i32[2,4]) {
  %s, %j = sort %x, %i {dimension=1, stable=true} (%a: f32[], %b: f32[], %c: i32[], %d: i32[]) {
    %gt = compare %a, %b {dir=gt}
    return %gt
  }
  return %s, %j
}
`

// TestSortXLA: XLA:CPU and the reference executor give the contract's
// numbers for a sort with a comparator region.
func TestSortXLA(t *testing.T) {
	h, err := xlacheck.Find()
	if err != nil {
		t.Fatal(err)
	}
	m, err := tir.Parse("sort.tir", []byte(sortTIR))
	if err != nil {
		t.Fatal(err)
	}
	text, err := Lower(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	vals := [][]float64{{3, 3, 2, 1, 5, 5, 0, -1}, {0, 2, 3, 1, 1, 3, 0, 2}}
	x := arr(ir.F32, sh(2, 4), 3, 1, 3, 2, 0, 5, -1, 5)
	i := arr(ir.I32, sh(2, 4), 0, 1, 2, 3, 0, 1, 2, 3)
	want := []*npy.Array{arr(ir.F32, sh(2, 4), vals[0]...), arr(ir.I32, sh(2, 4), vals[1]...)}
	res, err := h.Run([]xlacheck.Case{{ID: "sort", Module: text, Inputs: []*npy.Array{x, i}}})
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].OK {
		t.Fatalf("XLA %s failed: %s\n%s", res[0].Stage, res[0].Error, text)
	}
	ref, err := cpu.Run(m, m.Func("main"), []*backend.Buffer{
		backend.FromFloats(ir.Tensor(ir.F32, 2, 4), 3, 1, 3, 2, 0, 5, -1, 5),
		backend.FromInts(ir.Tensor(ir.I32, 2, 4), 0, 1, 2, 3, 0, 1, 2, 3)})
	if err != nil {
		t.Fatal(err)
	}
	for k, w := range want {
		if msg := compareArrays(res[0].Outputs[k], w, 0); msg != "" {
			t.Errorf("XLA output %d: %s", k, msg)
		}
		for e, v := range vals[k] {
			if got := ref[k].Float64At(e); got != v {
				t.Errorf("reference output %d element %d: got %v, want %v", k, e, got, v)
			}
		}
	}
}
