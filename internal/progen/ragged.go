package progen

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// genRaggedDot draws lhs [m,k] and rhs [g,k,n] of one dtype and i32 group
// sizes [g] of any values: negative sizes, sizes past m and rows past every
// group all have defined results (docs/ops.md). Each result element is one
// row's dot product with one group's column, or 0, so its bounds are those
// of a dot_general contracting k.
func (g *gen) genRaggedDot() bool {
	a := g.get(want{pred: func(x *val) bool { return x.dt().IsNumeric() && x.rank() == 2 }})
	if a == nil {
		return false
	}
	m, k := a.shape()[0], a.shape()[1]
	groups, n := 1+int64(g.r.IntN(4)), g.randomDim()
	if numElements([]int64{m, n}) > g.cfg.MaxElements || numElements([]int64{groups, k, n}) > g.cfg.MaxElements {
		return false
	}
	b := g.get(want{dts: []ir.DType{a.dt()}}.withShape([]int64{groups, k, n}))
	sizes := g.get(want{dts: []ir.DType{ir.I32}}.withShape([]int64{groups}))
	if b == nil || sizes == nil {
		return false
	}
	dt := a.dt()
	y := &val{nan: a.nan || b.nan}
	if !dt.IsFloat() {
		y.lo, y.hi = fullRange(dt)
	} else {
		s := float64(k) * a.mag() * b.mag()
		if math.IsNaN(s) {
			s = math.Inf(1)
		}
		y.lo, y.hi = fitRange(dt, -s, s)
		y.nan = y.nan || math.IsInf(s, 0)
		if k > 0 {
			y.ea = float64(k)*(b.mag()*a.errMax()+a.mag()*b.errMax()) + 2*unit(dt)*s
			y.er = ulpRel(dt)
			if !g.ok(dt, y) {
				return false
			}
		}
	}
	in := g.emit(ir.OpRaggedDot, nil, nil, a, b, sizes)
	if in == nil {
		return false
	}
	y.v = in.Result()
	g.add(y)
	return true
}
