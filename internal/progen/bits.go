package progen

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// genShift: shift_left, shift_right_logical, shift_right_arithmetic of
// integers by amounts of any value (negative and past the width included:
// the results are defined).
func (g *gen) genShift(op ir.Op) bool {
	a, b := g.operands(want{pred: func(x *val) bool { return x.dt().IsInt() }}, want{})
	if a == nil {
		return false
	}
	y := &val{}
	dt := a.dt()
	switch {
	case op == ir.OpShiftRightArithmetic && !dt.IsUnsigned():
		y.lo, y.hi = math.Min(a.lo, -1), math.Max(a.hi, 0) // toward 0 or -1
	case op == ir.OpShiftRightLogical && a.lo >= 0:
		y.lo, y.hi = 0, a.hi
	default:
		y.lo, y.hi = fullRange(dt)
	}
	return g.emit1(op, nil, nil, y, a, b) != nil
}

// genBitCount: popcnt and clz, between 0 and the bit width.
func (g *gen) genBitCount(op ir.Op) bool {
	x := g.get(want{pred: func(x *val) bool { return x.dt().IsInt() }})
	if x == nil {
		return false
	}
	y := &val{lo: 0, hi: float64(x.dt().Bits())}
	return g.emit1(op, nil, nil, y, x) != nil
}
