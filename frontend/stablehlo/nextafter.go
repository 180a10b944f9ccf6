package stablehlo

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// bitsOf is the signed integer type of each float type's width.
var bitsOf = map[ir.DType]ir.DType{ir.F16: ir.I16, ir.BF16: ir.I16, ir.F32: ir.I32, ir.F64: ir.I64}

// nextAfter maps chlo.next_after (jax.random.truncated_normal writes it) as
// CHLO's legalisation expands it: the float after x in y's direction, by one
// step of x's bits (toward zero where the magnitude falls or the signs
// differ); from ±0 the smallest subnormal of y's sign; y where x = y; NaN
// where either is NaN.
func (bd *builder) nextAfter(o *op, args []*ir.Value) *ir.Value {
	if _, ok := bitsOf[args[0].Type.DType]; len(args) != 2 || !ok || !args[0].Type.Equal(args[1].Type) {
		bd.s.failf(o.pos, "%s needs two operands of one type of f16, bf16, f32 or f64", o.name)
	}
	x, y := args[0], args[1]
	it := x.Type.WithDType(bitsOf[x.Type.DType])
	width := it.DType.Bits()
	c := func(t ir.Type, v int64) *ir.Value {
		return bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Ints: []int64{v}}}, []ir.Type{t})
	}
	bin := func(code ir.Op, a, b *ir.Value) *ir.Value { return bd.emit(o, code, nil, nil, a, b) }
	sel := func(p, a, b *ir.Value) *ir.Value { return bd.emit(o, ir.OpSelect, nil, nil, p, a, b) }
	cmp := func(d ir.CmpDir, a, b *ir.Value) *ir.Value {
		return bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: d}, nil, a, b)
	}
	cast := func(v *ir.Value, t ir.Type) *ir.Value { return bd.emit(o, ir.OpBitcastConvert, nil, []ir.Type{t}, v) }
	xb, yb := cast(x, it), cast(y, it)
	nan := bin(ir.OpOr, cmp(ir.CmpNE, x, x), cmp(ir.CmpNE, y, y))
	nanBits := cast(bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Floats: []float64{math.NaN()}}}, []ir.Type{x.Type}), it)
	magMask, signMask := c(it, int64(1)<<(width-1)-1), c(it, int64(-1)<<(width-1))
	xAbs, yAbs := bin(ir.OpAnd, xb, magMask), bin(ir.OpAnd, yb, magMask)
	zero := c(it, 0)
	xSign, ySign := bin(ir.OpAnd, xb, signMask), bin(ir.OpAnd, yb, signMask)
	down := bin(ir.OpOr, cmp(ir.CmpGT, xAbs, yAbs), cmp(ir.CmpNE, xSign, ySign))
	step := bin(ir.OpAdd, xb, sel(down, c(it, -1), c(it, 1)))
	fromZero := sel(cmp(ir.CmpEQ, yAbs, zero), yb, bin(ir.OpOr, ySign, c(it, 1)))
	r := sel(cmp(ir.CmpEQ, xAbs, zero), fromZero, step)
	r = sel(cmp(ir.CmpEQ, x, y), yb, r)
	return cast(sel(nan, nanBits, r), x.Type)
}
