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

// raggedDotVJP: d lhs is itself a grouped matmul with each group's rhs
// transposed, and d rhs[i] is lhsᵀ·g over the rows of group i: ragged_contract,
// a grouped product (jax.lax.ragged_dot's transpose), not a dense one over every
// group's mask.
func raggedDotVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	lhs, rhs, sizes := in.Args[0], in.Args[1], in.Args[2]
	gz := g[0]
	dt := gz.Type.DType
	rt := e.transpose(e.convertTo(rhs, dt), []int64{0, 2, 1})
	dl := e.convertTo(e.b.Op1(ir.OpRaggedDot, nil, gz, rt, sizes), lhs.Type.DType)
	dr := e.convertTo(e.b.Op1(ir.OpRaggedContract, nil, e.convertTo(lhs, dt), gz, sizes), rhs.Type.DType)
	return []*ir.Value{dl, dr, nil}
}

// raggedContractVJP: result[i] = Σ over group i's rows of lhs[r]ᵀ·rhs[r], so
// d lhs[r] = g[i]·rhs[r] and d rhs[r] = lhs[r]·g[i] for the group i of row r:
// both are ragged_dot, one with each g[i] transposed. Rows past the groups get
// 0, as ragged_dot gives them.
func raggedContractVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	lhs, rhs, sizes := in.Args[0], in.Args[1], in.Args[2]
	gz := g[0]
	dt := gz.Type.DType
	gt := e.transpose(gz, []int64{0, 2, 1})
	dl := e.convertTo(e.b.Op1(ir.OpRaggedDot, nil, e.convertTo(rhs, dt), gt, sizes), lhs.Type.DType)
	dr := e.convertTo(e.b.Op1(ir.OpRaggedDot, nil, e.convertTo(lhs, dt), gz, sizes), rhs.Type.DType)
	return []*ir.Value{dl, dr, nil}
}
