package stablehlo

import (
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// scatterOne maps a scatter of one update window (the indices hold one start
// index: x.at[i].set(v), .at[i].max(v), .at[:, i].set(col) with a traced i)
// whose body is any elementwise computation of the operand's and the
// update's element (a set returns the update): the window is read with
// dynamic_slice, combined with the update by the body, and written back
// with dynamic_update_slice; a window that does not fit is dropped whole, as
// XLA drops it (where dynamic_update_slice would clamp its start). ok is
// false for a scatter of several windows or with batching dimensions.
func (bd *builder) scatterOne(o *op, args []*ir.Value) (v *ir.Value, ok bool) {
	f := bd.indexForm(o, "scatter_dimension_numbers", [5]string{"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims", "scatter_indices_batching_dims"})
	x, idx, upd := args[0], args[1], args[2]
	if n, ok := idx.Type.NumElements(); !ok || n != int64(len(f.toOperand)) || len(f.batching) > 0 || len(o.regions) != 1 {
		return nil, false
	}
	if len(o.outs) != 1 || !o.outs[0].Equal(x.Type) || upd.Type.DType != x.Type.DType {
		bd.s.failf(o.pos, "unsupported form of %s: the operands and result type do not agree", o.name)
	}
	// The window's extent along each operand dimension: 1 where inserted,
	// else the next of the update's window dimensions.
	xd, ud := x.Type.Dims(), upd.Type.Dims()
	sizes := make([]int64, len(xd))
	w := 0
	for d := range xd {
		switch {
		case slices.Contains(f.collapsed, int64(d)):
			sizes[d] = 1
		case w < len(f.window) && f.window[w] >= 0 && f.window[w] < int64(len(ud)) && ud[f.window[w]] <= xd[d]:
			sizes[d] = ud[f.window[w]]
			w++
		default:
			bd.s.failf(o.pos, "unsupported form of %s: the dimension numbers, operands and result type do not agree", o.name)
		}
	}
	window := ir.Tensor(x.Type.DType, sizes...)
	if m, _ := upd.Type.NumElements(); w != len(f.window) || m != elements(sizes) {
		bd.s.failf(o.pos, "unsupported form of %s: the dimension numbers, operands and result type do not agree", o.name)
	}
	starts, valid := bd.scatterStarts(o, f, idx, xd, sizes)
	cur := bd.emit(o, ir.OpDynamicSlice, &ir.SizesAttr{Sizes: sizes}, nil, append([]*ir.Value{x}, starts...)...)
	u := bd.emit(o, ir.OpReshape, nil, []ir.Type{window}, upd)
	next := bd.elementwiseBody(o, o.regions[0], []*ir.Value{cur, u})
	if !next.Type.Equal(window) {
		bd.s.failf(o.pos, "unsupported form of %s: the body returns %s, want tensor<%s>", o.name, next.Type.DType, x.Type.DType)
	}
	y := bd.emit(o, ir.OpDynamicUpdateSlice, nil, nil, append([]*ir.Value{x, next}, starts...)...)
	keep := bd.emit(o, ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, []ir.Type{x.Type.WithDType(ir.I1)}, valid)
	return bd.emit(o, ir.OpSelect, nil, nil, keep, y, x), true
}

// scatterStarts are the window's start along each operand dimension as i32
// scalars (the index's element for a dimension it maps to, else 0), and
// whether the window fits: 0 <= start <= dim - size along each mapped one.
func (bd *builder) scatterStarts(o *op, f indexForm, idx *ir.Value, xd, sizes []int64) ([]*ir.Value, *ir.Value) {
	k := int64(len(f.toOperand))
	flat := bd.emit(o, ir.OpReshape, nil, []ir.Type{ir.Tensor(idx.Type.DType, k)}, idx)
	flat = bd.emit(o, ir.OpConvert, nil, []ir.Type{ir.Tensor(ir.I32, k)}, flat)
	i32 := ir.Scalar(ir.I32)
	starts := make([]*ir.Value, len(xd))
	for d := range starts {
		starts[d] = bd.splat(o, i32, 0)
	}
	valid := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Ints: []int64{1}}}, []ir.Type{ir.Scalar(ir.I1)})
	for j, d := range f.toOperand {
		if d < 0 || d >= int64(len(xd)) {
			bd.s.failf(o.pos, "unsupported form of %s: scatter_dims_to_operand_dims names dimension %d of a rank-%d operand", o.name, d, len(xd))
		}
		s := bd.emit(o, ir.OpSlice, &ir.SliceAttr{Start: []int64{int64(j)}, Limit: []int64{int64(j) + 1}, Stride: []int64{1}}, nil, flat)
		s = bd.emit(o, ir.OpReshape, nil, []ir.Type{i32}, s)
		starts[d] = s
		lo := bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpGE}, nil, s, bd.splat(o, i32, 0))
		hi := bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLE}, nil, s, bd.splat(o, i32, xd[d]-sizes[d]))
		valid = bd.emit(o, ir.OpAnd, nil, nil, valid, bd.emit(o, ir.OpAnd, nil, nil, lo, hi))
	}
	return starts, valid
}
