package autodiff

import "github.com/tpucc/tpucc/ir"

// dotVJP contracts the cotangent with the other operand over that operand's free
// dimensions, then transposes the result into the operand's dimension order.
func dotVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	a := in.Attr.(*ir.DotAttr)
	lhs, rhs := in.Args[0], in.Args[1]
	lFree := without(lhs.Type.Rank(), append(append([]int64{}, a.LhsBatch...), a.LhsContract...))
	rFree := without(rhs.Type.Rank(), append(append([]int64{}, a.RhsBatch...), a.RhsContract...))
	nb := int64(len(a.LhsBatch))
	gBatch := iotaDims(int(nb))
	gl := make([]int64, len(lFree)) // g's lhs-free dims
	for i := range gl {
		gl[i] = nb + int64(i)
	}
	gr := make([]int64, len(rFree))
	for i := range gr {
		gr[i] = nb + int64(len(lFree)+i)
	}
	// Mixed dtypes (a bf16 weight in an f32 product): the cotangent's dtype throughout,
	// then each gradient in its operand's.
	dt := g[0].Type.DType
	var dl, dr *ir.Value
	if lhs.Type.DType.IsFloat() {
		d := e.b.Op1(ir.OpDotGeneral, &ir.DotAttr{LhsBatch: gBatch, RhsBatch: a.RhsBatch, LhsContract: gr, RhsContract: rFree}, g[0], e.convertTo(rhs, dt))
		dl = e.convertTo(e.transpose(d, dotPerm(lhs.Type.Rank(), a.LhsBatch, lFree, a.LhsContract, a.RhsContract)), lhs.Type.DType)
	}
	if rhs.Type.DType.IsFloat() {
		d := e.b.Op1(ir.OpDotGeneral, &ir.DotAttr{LhsBatch: gBatch, RhsBatch: a.LhsBatch, LhsContract: gl, RhsContract: lFree}, g[0], e.convertTo(lhs, dt))
		dr = e.convertTo(e.transpose(d, dotPerm(rhs.Type.Rank(), a.RhsBatch, rFree, a.RhsContract, a.LhsContract)), rhs.Type.DType)
	}
	return []*ir.Value{dl, dr}
}

// dotPerm orders a cotangent dot's result (batch, own free dims, then the other
// operand's contracting dims in increasing order) as the operand's dimensions: own
// contracting dim k sits where the other's contracting dim k falls in that order.
func dotPerm(rank int, batch, free, contract, other []int64) []int64 {
	pos := make([]int64, rank)
	for i, d := range batch {
		pos[d] = int64(i)
	}
	for i, d := range free {
		pos[d] = int64(len(batch) + i)
	}
	for k, d := range contract {
		rankK := 0
		for _, o := range other {
			if o < other[k] {
				rankK++
			}
		}
		pos[d] = int64(len(batch) + len(free) + rankK)
	}
	return pos
}

// raggedDotVJP: d lhs is itself a grouped matmul with each group's rhs transposed;
// d rhs[i] is lhsᵀ·g over the rows of group i, computed with a row-to-group mask.
func raggedDotVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	lhs, rhs, sizes := in.Args[0], in.Args[1], in.Args[2]
	gz := g[0]
	dt := gz.Type.DType
	rt := e.transpose(e.convertTo(rhs, dt), []int64{0, 2, 1})
	dl := e.convertTo(e.b.Op1(ir.OpRaggedDot, nil, gz, rt, sizes), lhs.Type.DType)
	mask := groupMask(e, sizes, lhs.Type.Dims()[0], lhs.Type.DType)
	// masked[i,r,k] = mask[r,i]*lhs[r,k]
	gN, m, k := rhs.Type.Dims()[0], lhs.Type.Dims()[0], lhs.Type.Dims()[1]
	t3 := ir.Tensor(dt, gN, m, k)
	masked := e.mul(e.broadcast(e.convertTo(mask, dt), t3, []int64{1, 0}), e.broadcast(e.convertTo(lhs, dt), t3, []int64{1, 2}))
	dr := e.b.Op1(ir.OpDotGeneral, &ir.DotAttr{LhsContract: []int64{1}, RhsContract: []int64{0}}, masked, gz)
	dr = e.convertTo(dr, rhs.Type.DType)
	return []*ir.Value{dl, dr, nil}
}

// groupMask is [m, g]: 1 where row r belongs to group i (end[i-1] <= r < end[i], the
// ends being the running sum of the sizes with negative sizes taken as 0).
func groupMask(e *emitter, sizes *ir.Value, m int64, dt ir.DType) *ir.Value {
	st := sizes.Type
	pos := e.b.Op1(ir.OpMax, nil, sizes, e.b.Const(st, 0))
	end := e.b.Op1(ir.OpCumsum, &ir.AxisAttr{Axis: 0}, pos)
	start := e.sub(end, pos)
	gN := st.Dims()[0]
	t := ir.Tensor(st.DType, m, gN)
	rows := e.b.Typed(ir.OpIota, &ir.AxisAttr{Axis: 0}, &t)
	in := e.b.Op1(ir.OpAnd, nil,
		e.cmp(ir.CmpGE, rows, e.broadcast(start, t, []int64{1})),
		e.cmp(ir.CmpLT, rows, e.broadcast(end, t, []int64{1})))
	return e.indicator(in, ir.Tensor(dt, m, gN))
}
