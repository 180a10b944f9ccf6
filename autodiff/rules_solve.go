package autodiff

import "github.com/tpucc/tpucc/ir"

// triangularSolveVJP: with t = op(a), x = t⁻¹·b (left side) or b·t⁻¹. The
// cotangent of b is the solve by tᵀ: tᵀ⁻¹·g, or g·tᵀ⁻¹, the same op with
// transpose_a flipped. That of t is -gb·xᵀ (left) or -xᵀ·gb (right),
// transposed back when t is aᵀ, and kept only where a is read: its
// triangle, without the diagonal when unit_diagonal.
func triangularSolveVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	at := *in.Attr.(*ir.TriangularSolveAttr)
	a, x := in.Args[0], in.Results[0]
	r := int64(a.Type.Rank())
	flipped := at
	flipped.TransposeA = !at.TransposeA
	gb := e.b.Op1(ir.OpTriangularSolve, &flipped, a, g[0])
	batch := iotaDims(int(r - 2))
	dot := &ir.DotAttr{LhsBatch: batch, RhsBatch: batch, LhsContract: []int64{r - 1}, RhsContract: []int64{r - 1}}
	lhs, rhs := gb, x
	if !at.LeftSide {
		dot.LhsContract, dot.RhsContract = []int64{r - 2}, []int64{r - 2}
		lhs, rhs = x, gb
	}
	gt := e.neg(e.b.Op1(ir.OpDotGeneral, dot, lhs, rhs))
	if at.TransposeA {
		perm := iotaDims(int(r))
		perm[r-2], perm[r-1] = r-1, r-2
		gt = e.transpose(gt, perm)
	}
	return []*ir.Value{e.where(e.triangle(a.Type, at.Lower, at.UnitDiagonal), gt), gb}
}

// triangle is true on the lower (or upper) triangle of the last two
// dimensions of t, the diagonal included unless strict.
func (e *emitter) triangle(t ir.Type, lower, strict bool) *ir.Value {
	it := t.WithDType(ir.I32)
	r := int64(t.Rank())
	rows := e.b.Typed(ir.OpIota, &ir.AxisAttr{Axis: r - 2}, &it)
	cols := e.b.Typed(ir.OpIota, &ir.AxisAttr{Axis: r - 1}, &it)
	dir := map[[2]bool]ir.CmpDir{{true, false}: ir.CmpGE, {true, true}: ir.CmpGT,
		{false, false}: ir.CmpLE, {false, true}: ir.CmpLT}[[2]bool{lower, strict}]
	return e.cmp(dir, rows, cols)
}

// reducePrecisionVJP: a format at least as wide as the operand's dtype is
// the identity, so the cotangent passes; a narrower one is piecewise
// constant, whose derivative is 0 wherever it exists, as for round. (JAX
// passes the cotangent through either way, rounded: a straight-through
// estimate, not the derivative.)
func reducePrecisionVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	a := in.Attr.(*ir.ReducePrecisionAttr)
	own := map[ir.DType][2]int64{ir.F64: {11, 52}, ir.F32: {8, 23}, ir.F16: {5, 10}, ir.BF16: {8, 7}}[in.Args[0].Type.DType]
	if a.ExponentBits >= own[0] && a.MantissaBits >= own[1] {
		return []*ir.Value{g[0]}
	}
	return nil
}
