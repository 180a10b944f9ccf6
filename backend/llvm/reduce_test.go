package llvm

import (
	"fmt"
	"math"
	"testing"

	"github.com/tpucc/tpucc/backend"
)

// TestSoftmaxLineMax: softmax and log_softmax over lines of 5, 16, 37 and
// 128 elements, whose max is taken sixteen lanes at a time (lineMax), agree
// with the reference executor on rows built to catch a wrong max: NaN in
// the vector part and in the tail, +inf (inf - inf is NaN) and all -inf
// (each makes the row NaN), and a large value in the last lane of a
// vector or in the tail, which makes exp overflow if the max missed it.
func TestSoftmaxLineMax(t *testing.T) {
	b := testBackend(t)
	for _, n := range []int64{5, 16, 37, 128} {
		for _, op := range []string{"softmax", "log_softmax"} {
			src := fmt.Sprintf("func @f(%%x: f32[7,%d]) -> f32[7,%d] {\n  %%y = %s %%x {axis=1} : f32[7,%d]\n  return %%y\n}\n", n, n, op, n)
			m, f, x := compileSrc(t, b, src)
			vals := make([]float64, 7*n)
			for i := range vals {
				vals[i] = math.Sin(float64(i)) * 3
			}
			row := func(r, i int64) *float64 { return &vals[r*n+min(i, n-1)] }
			*row(0, 3) = math.NaN()
			*row(1, n-2) = math.NaN()
			*row(2, 10) = math.Inf(1)
			for i := range n {
				*row(3, i) = math.Inf(-1)
			}
			*row(4, 15) = 100
			*row(5, n-1) = 100
			*row(6, 0) = -0.0
			t.Run(fmt.Sprintf("%s/%d", op, n), func(t *testing.T) {
				agree(t, x, m, f, []*backend.Buffer{backend.FromFloats(f.Params[0].Type, vals...)})
			})
		}
	}
}
