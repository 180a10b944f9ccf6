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

// genReducePrecision rounds an exact float to fewer mantissa bits (at most
// doubling its magnitude: 1.5 rounds to 2 with none left), and sometimes to
// fewer exponent bits, which may make infinities.
func (g *gen) genReducePrecision() bool {
	x := g.get(want{dts: floatDTypes, exact: true})
	if x == nil {
		return false
	}
	layout := map[ir.DType][2]int{ir.F64: {11, 52}, ir.F32: {8, 23}, ir.F16: {5, 10}, ir.BF16: {8, 7}}[x.dt()]
	exp, man := int64(layout[0]), int64(g.r.IntN(layout[1]+1))
	y := &val{nan: x.nan, zs: x.zs}
	y.lo, y.hi = fitRange(x.dt(), math.Min(x.lo/2, 2*x.lo), math.Max(x.hi/2, 2*x.hi))
	if g.coin(0.3) || x.nan && man == 0 { // NaN becomes ±inf without mantissa bits
		exp = 1 + int64(g.r.IntN(int(exp)))
		y.lo, y.hi = math.Inf(-1), math.Inf(1)
	}
	return g.emit1(ir.OpReducePrecision, &ir.ReducePrecisionAttr{ExponentBits: exp, MantissaBits: man}, nil, y, x) != nil
}

// genBitcast reinterprets an exact value's bits as an integer type of the
// same, half or double width (a float result could be a subnormal, which
// XLA:CPU may flush, or a signalling NaN).
func (g *gen) genBitcast() bool {
	x := g.get(want{exact: true, pred: func(x *val) bool { return x.dt().IsNumeric() && x.rank() >= 1 }})
	if x == nil {
		return false
	}
	var to []ir.DType
	for _, d := range intDTypes {
		if d.Bits() == x.dt().Bits() || d.Bits()*2 == x.dt().Bits() ||
			d.Bits() == 2*x.dt().Bits() && x.shape()[x.rank()-1] == 2 {
			to = append(to, d)
		}
	}
	if len(to) == 0 {
		return false
	}
	d := pick(g, to)
	s := x.shape()
	switch {
	case d.Bits() < x.dt().Bits():
		s = append(append([]int64{}, s...), 2)
	case d.Bits() > x.dt().Bits():
		s = s[:len(s)-1]
	}
	if len(s) > 4 || numElements(s) > g.cfg.MaxElements {
		return false
	}
	y := &val{}
	y.lo, y.hi = fullRange(d)
	t := ir.Tensor(d, s...)
	return g.emit1(ir.OpBitcastConvert, nil, &t, y, x) != nil
}

// rngDTypes are the bits rng_bit_generator is drawn with: integers only,
// since random float bits hold NaNs and infinities the value analysis
// cannot bound.
var rngDTypes = []ir.DType{ir.I8, ir.I16, ir.I32, ir.I64, ir.U8, ir.U16, ir.U32, ir.U64}

// genRng draws rng_bit_generator on a u64 state of a length its algorithm
// takes; both results join the pool with their types' full ranges.
func (g *gen) genRng() bool {
	alg := ir.RngAlgorithm(g.r.IntN(3))
	lo, hi := ir.RngStateWords(alg)
	n := lo + g.r.Int64N(hi-lo+1)
	s := g.get(want{dts: []ir.DType{ir.U64}, shape: []int64{n}, fixed: true, exact: true})
	if s == nil {
		return false
	}
	bits := ir.Tensor(pick(g, rngDTypes), g.shapeLike()...)
	in := g.emit(ir.OpRngBitGenerator, &ir.RngAttr{Algorithm: alg}, []ir.Type{s.v.Type, bits}, s)
	if in == nil {
		return false
	}
	for _, r := range in.Results {
		x := &val{v: r}
		x.lo, x.hi = fullRange(r.Type.DType)
		g.add(x)
	}
	return true
}
