package stablehlo

import "github.com/tpucc/tpucc/ir"

// complexMaxMin reads maximum and minimum of complex values as the
// specification orders them, lexicographically on (real, imaginary): a
// select of a or b by compares of their parts. An operand with a NaN part
// is the result (a first), as a NaN is for floats. ir's max and min stay
// real-only: XLA:CPU's complex maximum compares real parts alone, and
// XLA:TPU cannot compile it, while this form compiles and runs on both.
func (bd *builder) complexMaxMin(o *op, code ir.Op, a, b *ir.Value) *ir.Value {
	cmp := func(dir ir.CmpDir, x, y *ir.Value) *ir.Value {
		return bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: dir}, nil, x, y)
	}
	logic := func(op ir.Op, x, y *ir.Value) *ir.Value { return bd.emit(o, op, nil, nil, x, y) }
	ra, ia := bd.emit(o, ir.OpReal, nil, nil, a), bd.emit(o, ir.OpImag, nil, nil, a)
	rb, ib := bd.emit(o, ir.OpReal, nil, nil, b), bd.emit(o, ir.OpImag, nil, nil, b)
	nan := func(r, i *ir.Value) *ir.Value { return logic(ir.OpOr, cmp(ir.CmpNE, r, r), cmp(ir.CmpNE, i, i)) }
	dir := ir.CmpGT
	if code == ir.OpMin {
		dir = ir.CmpLT
	}
	// a goes first: its real part, or else its imaginary part, is beyond b's.
	first := logic(ir.OpOr, cmp(dir, ra, rb), logic(ir.OpAnd, cmp(ir.CmpEQ, ra, rb), cmp(dir, ia, ib)))
	nanB := nan(rb, ib)
	notNaNB := bd.emit(o, ir.OpNot, nil, nil, nanB)
	pickA := logic(ir.OpOr, nan(ra, ia), logic(ir.OpAnd, notNaNB, first))
	return bd.emit(o, ir.OpSelect, nil, nil, pickA, a, b)
}

// unsignedOfWidth is the unsigned integer dtype of bits bits.
var unsignedOfWidth = map[int]ir.DType{8: ir.U8, 16: ir.U16, 32: ir.U32, 64: ir.U64}

// bitcastConvert reads stablehlo.bitcast_convert. ir's bitcast_convert
// has no i1 (it keeps a bool in a byte), so a bitcast from or to i1 is
// read as what the specification makes it, one bit per i1 element, the
// first element the least significant bit: i1[..., W] packs into a W-bit
// value by shifting each 0/1 to its place and summing (the places are
// disjoint), and a W-bit value unpacks by shifting each place down.
func (bd *builder) bitcastConvert(o *op, args []*ir.Value) *ir.Value {
	r := bd.result(o)
	if len(args) == 1 && args[0].Type.DType.IsComplex() && r.DType.IsComplex() && args[0].Type.DType != r.DType {
		return bd.complexBitcast(o, args[0], r)
	}
	if len(args) != 1 || (args[0].Type.DType != ir.I1) == (r.DType != ir.I1) {
		return bd.emit(o, ir.OpBitcastConvert, nil, []ir.Type{r}, args...)
	}
	x, wide, packing := args[0], r, true
	if r.DType == ir.I1 {
		wide, packing = x.Type, false
	}
	u, ok := unsignedOfWidth[wide.DType.Bits()]
	bits := append(append([]ir.Dim{}, wide.Shape...), ir.D(int64(wide.DType.Bits())))
	if !ok || !(ir.Type{DType: ir.I1, Shape: bits}).Equal(map[bool]ir.Type{true: x.Type, false: r}[packing]) {
		bd.s.failf(o.pos, "%s: a bitcast between %s and %s needs %s on the i1 side (an i1 per bit)",
			o.name, mlirType(x.Type), mlirType(r), mlirType(ir.Type{DType: ir.I1, Shape: bits}))
	}
	ut := ir.Type{DType: u, Shape: bits}
	last := int64(len(bits) - 1)
	places := bd.emit(o, ir.OpIota, &ir.AxisAttr{Axis: last}, []ir.Type{ut})
	if packing {
		b := bd.emit(o, ir.OpConvert, nil, []ir.Type{ut}, x)
		sum := bd.emit(o, ir.OpReduceSum, &ir.AxesAttr{Axes: []int64{last}}, nil, bd.emit(o, ir.OpShiftLeft, nil, nil, b, places))
		if u == r.DType {
			return sum
		}
		return bd.emit(o, ir.OpBitcastConvert, nil, []ir.Type{r}, sum)
	}
	if x.Type.DType != u {
		x = bd.emit(o, ir.OpBitcastConvert, nil, []ir.Type{ir.Type{DType: u, Shape: x.Type.Shape}}, x)
	}
	dims := make([]int64, last)
	for i := range dims {
		dims[i] = int64(i)
	}
	spread := bd.emit(o, ir.OpBroadcast, &ir.DimsAttr{Dims: dims}, []ir.Type{ut}, x)
	one := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: ir.NewIntLiteral(ut, []int64{1})}, []ir.Type{ut})
	bit := bd.emit(o, ir.OpAnd, nil, nil, bd.emit(o, ir.OpShiftRightLogical, nil, nil, spread, places), one)
	return bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpEQ}, nil, bit, one)
}

// complexBitcast reads a bitcast between c128[S] and c64[S, 2]: each c128
// element's bytes (real part, then imaginary part, each an f64) are two
// c64 elements. XLA:CPU cannot compile a bitcast of complex values of
// different widths, so it is read part by part with ops ir has: the f64
// parts bitcast to pairs of f32, which pair up again as c64 elements (and
// back).
func (bd *builder) complexBitcast(o *op, x *ir.Value, r ir.Type) *ir.Value {
	wide, narrow := x.Type, r
	if x.Type.DType == ir.C64 {
		wide, narrow = r, x.Type
	}
	pairs := append(append([]ir.Dim{}, wide.Shape...), ir.D(2))
	if wide.DType != ir.C128 || narrow.DType != ir.C64 || !narrow.Equal(ir.Type{DType: ir.C64, Shape: pairs}) {
		bd.s.failf(o.pos, "%s: a bitcast of complex values is between tensor<...xcomplex<f64>> and tensor<...x2xcomplex<f32>>, got %s to %s",
			o.name, mlirType(x.Type), mlirType(r))
	}
	last := int64(len(pairs) - 1)
	half := func(v *ir.Value, k int64) *ir.Value { // v[..., k:k+1]
		start, limit := make([]int64, len(pairs)), v.Type.Dims()
		limit = append([]int64{}, limit...)
		start[last], limit[last] = k, k+1
		return bd.emit(o, ir.OpSlice, &ir.SliceAttr{Start: start, Limit: limit}, nil, v)
	}
	join := func(a, b *ir.Value) *ir.Value { return bd.emit(o, ir.OpConcat, &ir.AxisAttr{Axis: last}, nil, a, b) }
	f32s := ir.Type{DType: ir.F32, Shape: pairs}
	if x.Type.DType == ir.C128 {
		re := bd.emit(o, ir.OpBitcastConvert, nil, []ir.Type{f32s}, bd.emit(o, ir.OpReal, nil, nil, x))
		im := bd.emit(o, ir.OpBitcastConvert, nil, []ir.Type{f32s}, bd.emit(o, ir.OpImag, nil, nil, x))
		return join(bd.emit(o, ir.OpComplex, nil, nil, half(re, 0), half(re, 1)), bd.emit(o, ir.OpComplex, nil, nil, half(im, 0), half(im, 1)))
	}
	re, im := bd.emit(o, ir.OpReal, nil, nil, x), bd.emit(o, ir.OpImag, nil, nil, x)
	f64 := ir.Type{DType: ir.F64, Shape: wide.Shape}
	lo := bd.emit(o, ir.OpBitcastConvert, nil, []ir.Type{f64}, join(half(re, 0), half(im, 0)))
	hi := bd.emit(o, ir.OpBitcastConvert, nil, []ir.Type{f64}, join(half(re, 1), half(im, 1)))
	return bd.emit(o, ir.OpComplex, nil, nil, lo, hi)
}
