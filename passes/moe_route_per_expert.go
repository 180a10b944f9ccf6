package passes

import (
	"github.com/tpucc/tpucc/ir"
)

// The per-expert formulation: one branch per expert, each taking its
// expert's weights out of the stacks and its column of the combine weights,
// summed over experts:
//
// Pattern: add(..., mul(down(act(x·w_up[e])), broadcast(combine[:, e])), ...) over e = 0..E-1 -> ragged_dot form
//
// A weight w[e] is a slice of the stack reshaped to a matrix, or a take of
// the stack at the constant e; a column combine[:, e] a slice, a take, or a
// reshape of a slice. Every branch must compute the same activation
// expression as branch 0 (same ops, attributes and scalars), with its own
// expert's weights, and the E branches must cover every expert once. Weights
// held as E separate matrices (no stack) stay dense: stacking them would copy
// every weight on every call.

// branch is one expert's term of the sum.
type branch struct {
	e    int64
	out  *ir.Value // the down projection [T,H]
	comb *ir.Value // combine [T,E] the column came from
}

// matchPerExpertSum matches a sum (a tree of adds) of E expert branches.
func matchPerExpertSum(in *ir.Instr) *moeLayer {
	var terms []*ir.Value
	collectSum(in.Result(), &terms, 0)
	if len(terms) < 2 {
		return nil
	}
	byExpert := map[int64]branch{}
	for _, t := range terms {
		b, ok := matchBranch(t)
		if !ok {
			return nil
		}
		if _, dup := byExpert[b.e]; dup {
			return nil
		}
		byExpert[b.e] = b
	}
	first, ok := byExpert[0]
	if !ok {
		return nil
	}
	m := perExpertTemplate(first)
	if m == nil || int64(len(byExpert)) != m.e || first.comb.Type.Dims()[1] != m.e {
		return nil
	}
	for e := int64(1); e < m.e; e++ {
		b, ok := byExpert[e]
		if !ok || b.comb != first.comb || !sameBranch(m, first.out, b.out, e) {
			return nil
		}
	}
	return m.finish(in, first.comb)
}

// collectSum lists the leaves of a tree of same-shaped adds.
func collectSum(v *ir.Value, out *[]*ir.Value, depth int) {
	d := v.Def
	if d != nil && d.Op == ir.OpAdd && depth < 1024 {
		collectSum(d.Args[0], out, depth+1)
		collectSum(d.Args[1], out, depth+1)
		return
	}
	*out = append(*out, v)
}

// matchBranch: mul(out [T,H], broadcast(column e of combine)), either order.
func matchBranch(t *ir.Value) (branch, bool) {
	d := t.Def
	if d == nil || d.Op != ir.OpMul || t.Type.Rank() != 2 {
		return branch{}, false
	}
	for _, swap := range []bool{false, true} {
		out, bc := d.Args[0], d.Args[1]
		if swap {
			out, bc = bc, out
		}
		if bc.Def == nil || bc.Def.Op != ir.OpBroadcast {
			continue
		}
		col, dims := bc.Def.Args[0], bc.Def.Attr.(*ir.DimsAttr).Dims
		if !(col.Type.Rank() == 1 && len(dims) == 1 && dims[0] == 0) && !(col.Type.Rank() == 2 && len(dims) == 2 && dims[0] == 0) {
			continue
		}
		if comb, e, ok := combineColumn(col); ok && out.Def != nil && out.Def.Op == ir.OpDotGeneral {
			return branch{e: e, out: out, comb: comb}, true
		}
	}
	return branch{}, false
}

// combineColumn matches combine[:, e] as slice (maybe reshaped to [T]) or take.
func combineColumn(col *ir.Value) (*ir.Value, int64, bool) {
	d := col.Def
	if d != nil && d.Op == ir.OpReshape && col.Type.Rank() == 1 {
		d = d.Args[0].Def
	}
	if d == nil {
		return nil, 0, false
	}
	switch d.Op {
	case ir.OpSlice:
		a := d.Attr.(*ir.SliceAttr)
		src := d.Args[0]
		if src.Type.Rank() == 2 && a.Start[0] == 0 && a.Limit[0] == src.Type.Dims()[0] && a.Limit[1] == a.Start[1]+1 && a.Stride[1] == 1 {
			return src, a.Start[1], true
		}
	case ir.OpTake:
		if e, ok := constIndex(d.Args[1]); ok && d.Attr.(*ir.AxisAttr).Axis == 1 && d.Args[0].Type.Rank() == 2 {
			return d.Args[0], e, true
		}
	}
	return nil, 0, false
}

// constIndex is the value of a scalar integer constant.
func constIndex(v *ir.Value) (int64, bool) {
	d := v.Def
	if d == nil || d.Op != ir.OpConstant || v.Type.Rank() != 0 || v.Type.DType.IsFloat() {
		return 0, false
	}
	return d.Attr.(*ir.ConstAttr).Value.Int(0), true
}

// expertMatrix matches w[e] taken out of a stack w [E,a,b]: reshape of a
// slice of one expert, or a take at a constant.
func expertMatrix(v *ir.Value) (stack *ir.Value, e int64, ok bool) {
	d := v.Def
	if d == nil || v.Type.Rank() != 2 {
		return nil, 0, false
	}
	switch d.Op {
	case ir.OpReshape:
		s := d.Args[0].Def
		if s == nil || s.Op != ir.OpSlice || s.Args[0].Type.Rank() != 3 {
			return nil, 0, false
		}
		a, dims := s.Attr.(*ir.SliceAttr), s.Args[0].Type.Dims()
		if a.Limit[0] != a.Start[0]+1 || a.Start[1] != 0 || a.Start[2] != 0 || a.Limit[1] != dims[1] || a.Limit[2] != dims[2] ||
			a.Stride[1] != 1 || a.Stride[2] != 1 {
			return nil, 0, false
		}
		return s.Args[0], a.Start[0], true
	case ir.OpTake:
		if e, ok := constIndex(d.Args[1]); ok && d.Attr.(*ir.AxisAttr).Axis == 0 && d.Args[0].Type.Rank() == 3 {
			return d.Args[0], e, true
		}
	}
	return nil, 0, false
}

// branchDot matches a per-expert matmul of lhs [T,a] by w[e] ([a,b] or
// [b,a]), lhs first; it returns the stack, e, and the projection.
func branchDot(v *ir.Value) (lhs *ir.Value, p projection, e int64, ok bool) {
	d := v.Def
	if d == nil || d.Op != ir.OpDotGeneral || v.Type.Rank() != 2 {
		return nil, p, 0, false
	}
	a := d.Attr.(*ir.DotAttr)
	if len(a.LhsBatch) != 0 || len(a.LhsContract) != 1 || a.LhsContract[0] != 1 {
		return nil, p, 0, false
	}
	stack, e, ok := expertMatrix(d.Args[1])
	if !ok {
		return nil, p, 0, false
	}
	// w[e] contracted on its dim c is the stack contracted on c+1.
	return d.Args[0], projection{w: stack, contract: int(a.RhsContract[0]) + 1}, e, true
}

// perExpertTemplate matches branch 0: out = down(act) with act an
// elementwise expression of projections of one x by expert-0 matrices.
func perExpertTemplate(b branch) *expertsMatch {
	act, down, e, ok := branchDot(b.out)
	if !ok || e != 0 {
		return nil
	}
	m := &expertsMatch{}
	m.leaves = map[*ir.Value]projection{}
	m.act = act
	if !walkAct(act, act.Type, 0, m.branchLeaf) || len(m.leaves) == 0 {
		return nil
	}
	m.e = down.w.Type.Dims()[0]
	m.roles = []byte("TF")
	m.down = down
	for _, p := range m.leaves {
		if p.w.Type.Dims()[0] != m.e {
			return nil
		}
	}
	return m
}

// branchLeaf records v when it is x·w_i[0], a projection of branch 0.
func (m *expertsMatch) branchLeaf(v *ir.Value) (isLeaf, ok bool) {
	x, p, e, found := branchDot(v)
	if !found {
		return false, true
	}
	if e != 0 || (m.x != nil && m.x != x) || x.Type.Rank() != 2 {
		return true, false
	}
	m.x = x
	m.leaves[v] = p
	return true, true
}

// sameBranch checks that out (branch e) computes branch 0's expression with
// expert e's matrices of the same stacks.
func sameBranch(m *expertsMatch, out0, out *ir.Value, e int64) bool {
	act0, d0, _, _ := branchDot(out0)
	act, d, ee, ok := branchDot(out)
	if !ok || ee != e || d != d0 {
		return false
	}
	return sameExpr(m, act0, act, e, 0)
}

func sameExpr(m *expertsMatch, a, b *ir.Value, e int64, depth int) bool {
	if a == b && scalarLike(a) {
		return true
	}
	if p, isLeaf := m.leaves[a]; isLeaf {
		x, q, ee, ok := branchDot(b)
		return ok && x == m.x && q == p && ee == e
	}
	da, db := a.Def, b.Def
	if depth > maxActDepth || da == nil || db == nil || da.Op != db.Op || len(da.Args) != len(db.Args) ||
		!a.Type.Equal(b.Type) || !sameAttr(da, db) {
		return false
	}
	for i := range da.Args {
		if !sameExpr(m, da.Args[i], db.Args[i], e, depth+1) {
			return false
		}
	}
	return true
}

// matchStacked matches expert outputs [E,T,H] computed one expert at a time
// and stacked: each operand of a concat along axis 0 is expert e's output
// [T,H] reshaped to [1,T,H], a branch (as the per-expert sum's) on expert e's
// matrices of the same stacks.
//
// Pattern: concat(reshape(down(act(x·w[e]))) for e = 0..E-1, axis=0) -> experts [E,T,H]
func matchStacked(eo *ir.Value) *expertsMatch {
	d := eo.Def
	if d == nil || d.Op != ir.OpConcat || d.Attr.(*ir.AxisAttr).Axis != 0 || eo.Type.Rank() != 3 {
		return nil
	}
	outs := make([]*ir.Value, len(d.Args))
	for i, a := range d.Args {
		r := a.Def
		if r == nil || r.Op != ir.OpReshape || a.Type.Dims()[0] != 1 || r.Args[0].Type.Rank() != 2 {
			return nil
		}
		outs[i] = r.Args[0]
	}
	m := perExpertTemplate(branch{out: outs[0]})
	if m == nil || int64(len(outs)) != m.e {
		return nil
	}
	for e := 1; e < len(outs); e++ {
		if !sameBranch(m, outs[0], outs[e], int64(e)) {
			return nil
		}
	}
	m.outRoles = []byte("ETH")
	return m
}
