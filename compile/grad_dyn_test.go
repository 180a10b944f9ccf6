package compile_test

import (
	"testing"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// TestGradNewShapes: a gradient called at other batch sizes gets the right gradients
// there (the runtime compiles each size; padding is refused as the loss sums over rows).
func TestGradNewShapes(t *testing.T) {
	g, err := compile.Grad(lossFn, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := tensor.Random(2, ir.F32, 4, 2)
	for _, n := range []int64{3, 5, 6} {
		x, y := tensor.Random(1, ir.F32, n, 4), tensor.Random(3, ir.F32, n, 2)
		out, err := g.Call(x, w, y)
		if err != nil {
			t.Fatalf("batch %d: %v", n, err)
		}
		_, want := lossGrads(x.Float64s(), w.Float64s(), y.Float64s(), int(n), 4, 2)
		gradNear(t, "d/dw", out[0], []int64{4, 2}, want)
	}
	if s := g.Stats(); s.Specialisations != 3 || s.PaddedCalls != 0 {
		t.Errorf("stats: %v, want 3 specialisations and no padded call", s)
	}
}
