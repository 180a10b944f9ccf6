package progen

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// genTriangularSolve draws b [batch..., rows, cols] of a float dtype and a
// finite a [batch..., m, m], m being b's rows (left side) or columns. A
// solve divides by a's diagonal, so a diagonal that may hold 0 is read as
// ones (unit_diagonal); otherwise either. Each step of the substitution adds
// at most mag(a)/d times the earlier unknowns (d the smallest |diagonal|),
// so |x| <= mag(b)/d·(1+mag(a)/d)^(m-1), and a drift in a, b or one
// step's rounding grows by that factor at most over the steps.
//
// b is finite and x's bound too: where a NaN or an infinity spreads in a
// solve is the algorithm's choice (XLA:CPU solves by blocks with matrix
// products, so a NaN in one element of b's row reaches the whole row; the
// executor's substitution leaves the unknowns solved before it alone).
func (g *gen) genTriangularSolve() bool {
	b := g.get(want{finite: true, pred: func(x *val) bool { return x.dt().IsFloat() && x.rank() >= 2 && x.rank() <= 3 }})
	if b == nil {
		return false
	}
	r := b.rank()
	attr := &ir.TriangularSolveAttr{LeftSide: g.coin(0.5), Lower: g.coin(0.5), TransposeA: g.coin(0.5)}
	m := b.shape()[r-1]
	if attr.LeftSide {
		m = b.shape()[r-2]
	}
	if m > 6 {
		return false
	}
	as := append(append([]int64{}, b.shape()[:r-2]...), m, m)
	a := g.get(want{dts: []ir.DType{b.dt()}, finite: true}.withShape(as))
	if a == nil {
		return false
	}
	d := a.minAbs()
	attr.UnitDiagonal = d == 0 || g.coin(0.3)
	if attr.UnitDiagonal {
		d = 1
	}
	dt := b.dt()
	grow := math.Pow(1+a.mag()/d, float64(m))
	s := b.mag() / d * grow
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return false
	}
	y := &val{zs: true}
	y.lo, y.hi = fitRange(dt, -s, s)
	fm := float64(m)
	y.ea = 2 * grow * ((b.errMax()+fm*a.errMax()*s)/d + 2*fm*unit(dt)*(b.mag()+fm*a.mag()*s)/d)
	y.er = ulpRel(dt)
	if math.IsNaN(y.ea) || !g.ok(dt, y) {
		return false
	}
	in := g.emit(ir.OpTriangularSolve, attr, nil, a, b)
	if in == nil {
		return false
	}
	y.v = in.Result()
	g.add(y)
	return true
}
