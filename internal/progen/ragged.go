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
func (g *gen) genRaggedDot() bool { return g.genGrouped(ir.OpRaggedDot) }

// genRaggedContract draws lhs [m,k] and rhs [m,n] of one dtype and i32 group
// sizes [g] of any values. Each result element is a sum over one group's rows
// (at most m of them), or 0, so its bounds are those of a dot_general
// contracting m.
func (g *gen) genRaggedContract() bool { return g.genGrouped(ir.OpRaggedContract) }

// genGrouped draws the operands of op (ragged_dot or ragged_contract) as
// genRaggedDot and genRaggedContract say, in one order of draws.
func (g *gen) genGrouped(op ir.Op) bool {
	a := g.get(want{pred: func(x *val) bool { return x.dt().IsNumeric() && x.rank() == 2 }})
	if a == nil {
		return false
	}
	m, k := a.shape()[0], a.shape()[1]
	groups, n := 1+int64(g.r.IntN(4)), g.randomDim()
	if numElements([]int64{m, n}) > g.cfg.MaxElements || numElements([]int64{groups, k, n}) > g.cfg.MaxElements {
		return false
	}
	rhs, terms := []int64{groups, k, n}, k
	if op == ir.OpRaggedContract {
		rhs, terms = []int64{m, n}, m
	}
	b := g.get(want{dts: []ir.DType{a.dt()}}.withShape(rhs))
	sizes := g.get(want{dts: []ir.DType{ir.I32}}.withShape([]int64{groups}))
	if b == nil || sizes == nil {
		return false
	}
	y := g.contraction(a, b, terms)
	if y == nil {
		return false
	}
	in := g.emit(op, nil, nil, a, b, sizes)
	if in == nil {
		return false
	}
	y.v = in.Result()
	g.add(y)
	return true
}

// contraction bounds a sum of terms products of a's and b's elements (nil when
// its error bound is too loose to check).
func (g *gen) contraction(a, b *val, terms int64) *val {
	dt := a.dt()
	y := &val{nan: a.nan || b.nan}
	if !dt.IsFloat() {
		y.lo, y.hi = fullRange(dt)
		return y
	}
	s := float64(terms) * a.mag() * b.mag()
	if math.IsNaN(s) {
		s = math.Inf(1)
	}
	y.lo, y.hi = fitRange(dt, -s, s)
	y.nan = y.nan || math.IsInf(s, 0)
	if terms > 0 {
		y.ea = float64(terms)*(b.mag()*a.errMax()+a.mag()*b.errMax()) + 2*unit(dt)*s
		y.er = ulpRel(dt)
		if !g.ok(dt, y) {
			return nil
		}
	}
	return y
}
