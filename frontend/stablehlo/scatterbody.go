package stablehlo

import (
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// scatterBody maps a scatter whose body is any elementwise computation of
// the operand's and the update's element (a set returns the update:
// x.at[i].set(v), .max, .min, .multiply, jax.ops.segment_max, jnp.unique's
// and bincount's scatters): each update window in turn is read from the
// operand with dynamic_slice, combined with the update by the body, and
// written back with dynamic_update_slice; a window that does not fit is
// dropped whole, as XLA drops it (where dynamic_update_slice would clamp
// its start). One window is one such update; several are a while loop over
// them in the order of the indices, as XLA:CPU runs a scatter, so that of
// two updates of one element the later wins. ok is false with batching
// dimensions.
func (bd *builder) scatterBody(o *op, args []*ir.Value) (v *ir.Value, ok bool) {
	f := bd.indexForm(o, "scatter_dimension_numbers", [5]string{"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims", "scatter_indices_batching_dims"})
	x, idx, upd := args[0], args[1], args[2]
	if len(f.batching) > 0 || len(o.regions) != 1 {
		return nil, false
	}
	if len(o.outs) != 1 || !o.outs[0].Equal(x.Type) || upd.Type.DType != x.Type.DType {
		bd.s.failf(o.pos, "unsupported form of %s: the operands and result type do not agree", o.name)
	}
	sizes := bd.scatterWindow(o, f, x, upd)
	window := ir.Tensor(x.Type.DType, sizes...)
	k := int64(len(f.toOperand))
	ivd := f.ivd
	n, _ := idx.Type.NumElements()
	m, _ := upd.Type.NumElements()
	if k == 0 || ivd > int64(idx.Type.Rank()) || ivd < int64(idx.Type.Rank()) && idx.Type.Dims()[ivd] != k ||
		ivd == int64(idx.Type.Rank()) && k != 1 || m != n/k*elements(sizes) {
		bd.s.failf(o.pos, "unsupported form of %s: the dimension numbers, operands and result type do not agree", o.name)
	}
	if n == k {
		u := bd.emit(o, ir.OpReshape, nil, []ir.Type{window}, upd)
		return bd.updateWindow(o, f, x, idx, u, sizes), true
	}
	// The indices as rows of k, the updates as rows of a window's elements,
	// both in the order of the scatter dimensions.
	rows := bd.emit(o, ir.OpConvert, nil, []ir.Type{idx.Type.WithDType(ir.I32)}, idx)
	if ivd < int64(idx.Type.Rank()) {
		rows = bd.moveLast(o, rows, ivd)
	}
	rows = bd.emit(o, ir.OpReshape, nil, []ir.Type{ir.Tensor(ir.I32, n/k, k)}, rows)
	var perm []int64
	for d := range int64(upd.Type.Rank()) {
		if !slices.Contains(f.window, d) {
			perm = append(perm, d)
		}
	}
	ups := bd.emit(o, ir.OpTranspose, &ir.PermAttr{Perm: append(perm, f.window...)}, nil, upd)
	ups = bd.emit(o, ir.OpReshape, nil, []ir.Type{ir.Tensor(x.Type.DType, n/k, elements(sizes))}, ups)
	return bd.scatterLoop(o, f, x, rows, ups, sizes), true
}

// moveLast transposes dimension d of v to the end.
func (bd *builder) moveLast(o *op, v *ir.Value, d int64) *ir.Value {
	var perm []int64
	for i := range int64(v.Type.Rank()) {
		if i != d {
			perm = append(perm, i)
		}
	}
	return bd.emit(o, ir.OpTranspose, &ir.PermAttr{Perm: append(perm, d)}, nil, v)
}

// scatterWindow is the update window's extent along each operand dimension:
// 1 where inserted, else the next of the update's window dimensions.
func (bd *builder) scatterWindow(o *op, f indexForm, x, upd *ir.Value) []int64 {
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
	if w != len(f.window) {
		bd.s.failf(o.pos, "unsupported form of %s: the dimension numbers, operands and result type do not agree", o.name)
	}
	return sizes
}

// updateWindow combines the window of x at start index idx (k elements)
// with u by the body and writes it back, or leaves x where it does not fit.
func (bd *builder) updateWindow(o *op, f indexForm, x, idx, u *ir.Value, sizes []int64) *ir.Value {
	starts, valid := bd.scatterStarts(o, f, idx, x.Type.Dims(), sizes)
	cur := bd.emit(o, ir.OpDynamicSlice, &ir.SizesAttr{Sizes: sizes}, nil, append([]*ir.Value{x}, starts...)...)
	next := bd.elementwiseBody(o, o.regions[0], []*ir.Value{cur, u})
	if !next.Type.Equal(u.Type) {
		bd.s.failf(o.pos, "unsupported form of %s: the body returns %s, want tensor<%s>", o.name, next.Type.DType, x.Type.DType)
	}
	// Where the window does not fit, dynamic_slice and dynamic_update_slice
	// both clamp its start, so writing back the window read leaves x as it
	// was; the select is the window's size, not the operand's.
	keep := bd.emit(o, ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, []ir.Type{u.Type.WithDType(ir.I1)}, valid)
	next = bd.emit(o, ir.OpSelect, nil, nil, keep, next, cur)
	return bd.emit(o, ir.OpDynamicUpdateSlice, nil, nil, append([]*ir.Value{x, next}, starts...)...)
}

// scatterLoop is a while loop that updates x by each row of rows (start
// indices) and ups (the update windows' elements) in turn.
func (bd *builder) scatterLoop(o *op, f indexForm, x, rows, ups *ir.Value, sizes []int64) *ir.Value {
	i32 := ir.Scalar(ir.I32)
	n, k, e := rows.Type.Dims()[0], rows.Type.Dims()[1], ups.Type.Dims()[1]
	carried := []*ir.Value{bd.splat(o, i32, 0), x, rows, ups}
	in := bd.emitControl(o, ir.OpWhile, nil, carried)
	outer := bd.b
	defer func() { bd.b = outer }()
	cond := bd.b.F.NewRegion(in, valueTypes(carried))
	bd.b = ir.NewBuilder(outer.F)
	bd.b.SetAppend(cond)
	bd.b.Return(bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLT}, nil, cond.Params[0], bd.splat(o, i32, n)))
	body := bd.b.F.NewRegion(in, valueTypes(carried))
	bd.b = ir.NewBuilder(outer.F)
	bd.b.SetAppend(body)
	j, y, r, u := body.Params[0], body.Params[1], body.Params[2], body.Params[3]
	zero := bd.splat(o, i32, 0)
	row := bd.emit(o, ir.OpDynamicSlice, &ir.SizesAttr{Sizes: []int64{1, k}}, nil, r, j, zero)
	win := bd.emit(o, ir.OpDynamicSlice, &ir.SizesAttr{Sizes: []int64{1, e}}, nil, u, j, zero)
	win = bd.emit(o, ir.OpReshape, nil, []ir.Type{ir.Tensor(x.Type.DType, sizes...)}, win)
	y = bd.updateWindow(o, f, y, row, win, sizes)
	bd.b.Return(bd.emit(o, ir.OpAdd, nil, nil, j, bd.splat(o, i32, 1)), y, r, u)
	return in.Results[1]
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
