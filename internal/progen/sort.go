package progen

import "github.com/tpucc/tpucc/ir"

// genSort sorts a sortable value along a random axis by a comparator
// region of one compare (ascending or descending), the value's analysis
// carried over: a sort permutes, so its range and exactness hold.
func (g *gen) genSort() bool {
	x := g.get(sortable)
	if x == nil {
		return false
	}
	axis := int64(g.r.IntN(x.rank()))
	in := g.emit(ir.OpSort, &ir.SortAttr{Dimension: axis, Stable: g.r.IntN(2) == 0}, nil, x)
	if in == nil {
		return false
	}
	dir := ir.CmpLT
	if g.r.IntN(2) == 0 {
		dir = ir.CmpGT
	}
	f := g.fn.f
	s := ir.Scalar(x.dt())
	blk := f.NewRegion(in, []ir.Type{s, s})
	c := f.NewInstr(ir.OpCompare, &ir.CompareAttr{Dir: dir}, blk.Params, []ir.Type{ir.Scalar(ir.I1)}, in.Pos)
	blk.Append(c)
	blk.Append(f.NewInstr(ir.OpReturn, nil, c.Results, nil, in.Pos))
	y := *x
	y.prod = false
	y.v = in.Results[0]
	g.add(&y)
	return true
}
