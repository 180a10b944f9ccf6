package autodiff

import "github.com/tpucc/tpucc/ir"

// takeVJP scatters the cotangent back to the rows taken. take clamps its indices and
// scatter_add drops out-of-range ones, so the indices are clamped first.
func takeVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	x, idx := in.Args[0], in.Args[1]
	axis := in.Attr.(*ir.AxisAttr).Axis
	it := ir.Scalar(idx.Type.DType)
	hi := x.Type.Dims()[axis] - 1
	clamped := e.b.Op1(ir.OpClamp, nil, e.b.Const(it, 0), idx, e.b.Const(it, float64(hi)))
	gx := e.b.Op1(ir.OpScatterAdd, &ir.AxisAttr{Axis: axis}, e.like(x, 0), clamped, g[0])
	return []*ir.Value{gx, nil}
}

// scatterAddVJP: x's cotangent passes through; an update's is the cotangent at its row,
// 0 for the rows scatter_add dropped as out of range.
func scatterAddVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	x, idx, upd := in.Args[0], in.Args[1], in.Args[2]
	axis := in.Attr.(*ir.AxisAttr).Axis
	taken := e.b.Op1(ir.OpTake, &ir.AxisAttr{Axis: axis}, g[0], idx)
	n := x.Type.Dims()[axis]
	valid := e.b.Op1(ir.OpAnd, nil,
		e.cmp(ir.CmpGE, idx, e.b.Const(idx.Type, 0)),
		e.cmp(ir.CmpLT, idx, e.b.Const(idx.Type, float64(n))))
	// idx's dims sit at axis.. in the update.
	dims := make([]int64, idx.Type.Rank())
	for i := range dims {
		dims[i] = axis + int64(i)
	}
	vt := upd.Type.WithDType(ir.I1)
	mask := e.b.Typed(ir.OpBroadcast, &ir.DimsAttr{Dims: dims}, &vt, valid)
	if idx.Type.SameShape(upd.Type) {
		mask = valid
	}
	return []*ir.Value{g[0], nil, e.where(mask, taken)}
}

func dynamicSliceVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	x := in.Args[0]
	args := append([]*ir.Value{e.like(x, 0), g[0]}, in.Args[1:]...)
	return []*ir.Value{e.b.Op1(ir.OpDynamicUpdateSlice, nil, args...)}
}

func dynamicUpdateSliceVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	upd, starts := in.Args[1], in.Args[2:]
	gx := e.b.Op1(ir.OpDynamicUpdateSlice, nil, append([]*ir.Value{g[0], e.like(upd, 0)}, starts...)...)
	gu := e.b.Op1(ir.OpDynamicSlice, &ir.SizesAttr{Sizes: upd.Type.Dims()}, append([]*ir.Value{g[0]}, starts...)...)
	return []*ir.Value{gx, gu}
}

// topKVJP sends each value's cotangent to the position it was taken from, through a
// one-hot of the indices contracted over k.
func topKVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	x, gv := in.Args[0], g[0]
	if gv == nil {
		return nil
	}
	idx := in.Results[1]
	r := x.Type.Rank()
	n := x.Type.Dims()[r-1]
	ot := ir.Tensor(x.Type.DType, append(idx.Type.Dims(), n)...)
	oh := e.b.Typed(ir.OpOneHot, &ir.DepthAttr{Depth: n}, &ot, idx)
	batch := iotaDims(r - 1)
	return []*ir.Value{e.b.Op1(ir.OpDotGeneral, &ir.DotAttr{LhsBatch: batch, RhsBatch: batch,
		LhsContract: []int64{int64(r - 1)}, RhsContract: []int64{int64(r - 1)}}, gv, oh)}
}
