package autodiff_test

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/autodiff"
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// raggedVJP is ragged_dot's VJP; denseWeightGrad is its weight gradient as it
// was computed before ragged_contract: a row-to-group mask [m,g] multiplied
// into lhs for every group, contracted with the cotangent over all m rows.
const raggedVJP = `func @f(%x: f32[7,3], %w: f32[4,3,2], %s: i32[4]) -> f32[7,2] {
  %y = ragged_dot %x, %w, %s
  return %y
}
`

const denseWeightGrad = `func @dense(%x: f32[7,3], %dy: f32[7,2], %s: i32[4]) -> f32[4,3,2] {
  %z = constant 0 : i32[4]
  %p = max %s, %z
  %end = cumsum %p {axis=0}
  %start = sub %end, %p
  %rows = iota {axis=0} : i32[7,4]
  %sb = broadcast %start {dims=[1]} : i32[7,4]
  %eb = broadcast %end {dims=[1]} : i32[7,4]
  %ge = compare %rows, %sb {dir=ge}
  %lt = compare %rows, %eb {dir=lt}
  %in = and %ge, %lt
  %mask = convert %in : f32[7,4]
  %mb = broadcast %mask {dims=[1,0]} : f32[4,7,3]
  %xb = broadcast %x {dims=[1,2]} : f32[4,7,3]
  %masked = mul %mb, %xb
  %d = dot_general %masked, %dy {lhs_batch=[], lhs_contract=[1], rhs_batch=[], rhs_contract=[0]}
  return %d
}
`

// TestRaggedWeightGradMatchesDense: the grouped weight gradient (ragged_contract
// in ragged_dot's VJP) equals the dense masked product it replaced, for group
// sizes in order, with empty and negative groups, rows past the groups, and
// groups past m.
func TestRaggedWeightGradMatchesDense(t *testing.T) {
	m, err := tir.Parse("f.tir", []byte(raggedVJP))
	if err != nil {
		t.Fatal(err)
	}
	v, err := autodiff.Module(m)
	if err != nil {
		t.Fatal(err)
	}
	d, err := tir.Parse("dense.tir", []byte(denseWeightGrad))
	if err != nil {
		t.Fatal(err)
	}
	in := cpu.RandomInputs(v.Entry(), 3)
	x, ct := in[0], in[3]
	for _, sizes := range [][]int64{{2, 1, 3, 1}, {0, 4, 0, 3}, {2, -3, 1, 1}, {1, 1, 1, 1}, {5, 9, 2, 0}} {
		s := backend.New(ir.Tensor(ir.I32, 4))
		for i, v := range sizes {
			s.SetInt64(i, v)
		}
		got, err := cpu.Run(v, v.Entry(), []*backend.Buffer{x, in[1], s, ct})
		if err != nil {
			t.Fatal(err)
		}
		want, err := cpu.Run(d, d.Entry(), []*backend.Buffer{x, ct, s})
		if err != nil {
			t.Fatal(err)
		}
		g, w := got[2].Float32s(), want[0].Float32s()
		for i := range w {
			if diff := math.Abs(float64(g[i] - w[i])); diff > 1e-6*(1+math.Abs(float64(w[i]))) {
				t.Errorf("sizes %v: d w[%d] = %g, dense %g", sizes, i, g[i], w[i])
			}
		}
	}
}
