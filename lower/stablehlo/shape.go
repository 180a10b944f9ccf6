package stablehlo

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// shape lowers the shape ops and dot_general; all but dot_general are one to one.
func (e *emitter) shape(in *ir.Instr, args []hv) hv {
	t := in.Results[0].Type
	x := hv{}
	if len(args) > 0 {
		x = args[0]
	}
	switch in.Op {
	case ir.OpReshape:
		return e.reshape(x, t)
	case ir.OpConvert:
		return e.convertOp(x, t)
	case ir.OpCopy:
		// Only the layout changes, and XLA chooses its own layouts: the
		// operand's value stands for the result.
		return x
	case ir.OpBroadcast:
		return e.broadcast(x, t, in.Attr.(*ir.DimsAttr).Dims)
	case ir.OpTranspose:
		return e.def(t, "stablehlo.transpose ", x.ref, ", dims = ", ints(in.Attr.(*ir.PermAttr).Perm), " : ", funcType(args, []ir.Type{t}))
	case ir.OpSlice:
		a := in.Attr.(*ir.SliceAttr)
		return e.slice(x, a.Start, a.Limit, a.Stride)
	case ir.OpConcat:
		return e.def(t, "stablehlo.concatenate ", refs(args), ", dim = ", strconv.FormatInt(in.Attr.(*ir.AxisAttr).Axis, 10), " : ", funcType(args, []ir.Type{t}))
	case ir.OpPad:
		a := in.Attr.(*ir.PadAttr)
		return e.def(t, "stablehlo.pad ", refs(args), ", low = ", ints(a.Low), ", high = ", ints(a.High),
			", interior = ", ints(a.Interior), " : ", funcType(args, []ir.Type{t}))
	case ir.OpIota:
		return e.iotaOp(t, in.Attr.(*ir.AxisAttr).Axis)
	case ir.OpDotGeneral:
		return e.dot(in.Attr.(*ir.DotAttr), args[0], args[1], t)
	case ir.OpConvolution:
		return e.conv(in.Attr.(*ir.ConvAttr), args[0], args[1], t)
	}
	panic("stablehlo: shape called for " + in.Op.String())
}

// byteWide is the eight-bit type that holds every value of a sub-byte dtype
// (i8 for i2 and i4, u8 for u2 and u4); other dtypes are their own.
func byteWide(d ir.DType) ir.DType {
	switch {
	case !d.IsSubByte():
		return d
	case d.IsSigned():
		return ir.I8
	}
	return ir.U8
}

// exactByte is x in eight bits (byteWide), for the ops that order values:
// a sub-byte value's number is rebuilt from its low bits (shifted up and
// back, sign-extending a signed one; masked, an unsigned one). XLA:CPU
// may hold a sub-byte value it computed unwrapped in a fusion: the maximum
// of popcnt over i2 values took popcnt 2 (which is -2 in i2) for the
// largest (oracle seed 60326). Other dtypes are returned as they are.
func (e *emitter) exactByte(x hv) hv {
	d := x.t.DType
	if !d.IsSubByte() {
		return x
	}
	w := e.convert(x, byteWide(d))
	if d.IsUnsigned() {
		return e.op2("stablehlo.and", w, e.iconst(w.t, 1<<d.Bits()-1))
	}
	sh := e.iconst(w.t, int64(8-d.Bits()))
	return e.op2("stablehlo.shift_right_arithmetic", e.op2("stablehlo.shift_left", w, sh), sh)
}

// iotaOp lowers iota. On f16 and bf16 the indices are made in f32 and rounded
// once, so that large indices round to nearest even as the contract says.
func (e *emitter) iotaOp(t ir.Type, axis int64) hv {
	if t.DType.IsComplex() { // the indices in the part type, imaginary parts 0
		return e.convert(e.iota(t.WithDType(t.DType.ComplexPart()), axis), t.DType)
	}
	if isHalf(t.DType) {
		return e.convert(e.iota(t.WithDType(ir.F32), axis), t.DType)
	}
	return e.iota(t, axis)
}

// dot lowers dot_general. Half-precision operands multiply and accumulate in
// f32: the dot_general's result type is f32 (bf16 x bf16 -> f32 is legal
// StableHLO) and a convert rounds once. When ir asks for a wider result than the
// operands (i8 x i8 -> i32, f32 x f32 -> f64), the operands are converted to the
// result dtype first, which computes exactly what the wider type promises.
//
// Sub-byte products run in eight bits (XLA:CPU has no s2 dot and miscompiles
// others): the product wraps modulo 2^8 there, and the convert back keeps the
// low bits, which is the product modulo 2^2 or 2^4.
func (e *emitter) dot(a *ir.DotAttr, l, r hv, t ir.Type) hv {
	acc := t.DType
	switch {
	case isHalf(l.t.DType) && (isHalf(acc) || acc == ir.F32):
		acc = ir.F32
	case l.t.DType.IsNarrowFloat(): // the products and their sum in f32 (or the wider result's type)
		if acc.IsNarrowFloat() || isHalf(acc) {
			acc = ir.F32
		}
		l, r = e.convert(l, acc), e.convert(r, acc)
	case acc.IsSubByte():
		acc = byteWide(acc)
		l, r = e.convert(l, acc), e.convert(r, acc)
	case acc != l.t.DType:
		l, r = e.convert(l, acc), e.convert(r, acc)
	}
	var b strings.Builder
	b.WriteString("stablehlo.dot_general ")
	b.WriteString(l.ref + ", " + r.ref)
	if len(a.LhsBatch) > 0 {
		b.WriteString(", batching_dims = " + ints(a.LhsBatch) + " x " + ints(a.RhsBatch))
	}
	b.WriteString(", contracting_dims = " + ints(a.LhsContract) + " x " + ints(a.RhsContract))
	if alg := a.Algorithm; alg != nil {
		// The algorithm fixes the precision, which must then be DEFAULT.
		b.WriteString(fmt.Sprintf(", precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = %s, rhs_precision_type = %s, "+
			"accumulation_type = %s, lhs_component_count = %d, rhs_component_count = %d, num_primitive_operations = %d, "+
			"allow_imprecise_accumulation = %t> : ", elemType(alg.Lhs), elemType(alg.Rhs), elemType(alg.Acc),
			alg.LhsComponents, alg.RhsComponents, alg.Primes, alg.ImpreciseAccumulation))
	} else {
		b.WriteString(", precision = [" + e.precision + ", " + e.precision + "] : ")
	}
	res := e.def(t.WithDType(acc), b.String(), funcType([]hv{l, r}, []ir.Type{t.WithDType(acc)}))
	return e.convert(res, t.DType)
}
