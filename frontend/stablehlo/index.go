package stablehlo

import (
	"github.com/tpucc/tpucc/ir"
)

// indexForm is what a gather's or scatter's dimension numbers must say for
// the op to be a take (or scatter_add) along one axis: that axis alone is
// indexed and collapsed, every other operand axis is a whole window placed
// where jnp.take puts it.
type indexForm struct {
	window, collapsed, toOperand, batching []int64
	ivd                                    int64
}

func (bd *builder) indexForm(o *op, key string, names [5]string) indexForm {
	dn := bd.attr(o, key)
	if dn.kind != attrDict {
		bd.s.failf(dn.pos, "unsupported %s %s", key, dn.describe())
	}
	get := func(k string) []int64 {
		if v := dn.dict[k]; v != nil {
			return v.ints(bd.s, k)
		}
		return nil
	}
	f := indexForm{window: get(names[0]), collapsed: get(names[1]), toOperand: get(names[2]),
		batching: append(get(names[3]), get(names[4])...)}
	// An index_vector_dim not written is 0, the attribute's default (the
	// printer leaves a 0 out: x.at[i, j].add(v) has tensor<2xi32> indices).
	if v := dn.dict["index_vector_dim"]; v != nil {
		f.ivd = v.int(bd.s, "index_vector_dim")
	}
	return f
}

// axis checks the form against operand x and indices idx and returns the
// indexed axis and the indices as take wants them (a trailing index vector
// of length 1 reshaped away); ok is false for any other form.
func (bd *builder) axis(o *op, f indexForm, x, idx *ir.Value) (axis int64, flat *ir.Value, ok bool) {
	if len(f.batching) > 0 || len(f.collapsed) != 1 || len(f.toOperand) != 1 || f.collapsed[0] != f.toOperand[0] {
		return 0, nil, false
	}
	axis = f.collapsed[0]
	rank := int64(idx.Type.Rank())
	trailing := f.ivd == rank-1 && idx.Type.Dims()[rank-1] == 1
	switch {
	case f.ivd == rank:
	case trailing:
		rank--
	default:
		return 0, nil, false
	}
	xr := int64(x.Type.Rank())
	if axis < 0 || axis >= xr || int64(len(f.window)) != xr-1 {
		return 0, nil, false
	}
	i := 0
	for d := int64(0); d < xr; d++ {
		if d == axis {
			continue
		}
		want := d
		if d > axis {
			want = d - 1 + rank
		}
		if f.window[i] != want {
			return 0, nil, false
		}
		i++
	}
	if trailing {
		t := ir.Tensor(idx.Type.DType, idx.Type.Dims()[:rank]...)
		idx = bd.emit(o, ir.OpReshape, nil, []ir.Type{t}, idx)
	}
	return axis, idx, true
}

func (bd *builder) take(o *op, args []*ir.Value) *ir.Value {
	if len(args) != 2 {
		bd.s.failf(o.pos, "%s needs 2 operands", o.name)
	}
	f := bd.indexForm(o, "dimension_numbers", [5]string{"offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims", "start_indices_batching_dims"})
	axis, idx, ok := bd.axis(o, f, args[0], args[1])
	if !ok {
		return bd.gather(o, args)
	}
	sizes := bd.ints(o, "slice_sizes")
	for d, n := range args[0].Type.Dims() {
		if d < len(sizes) && (int64(d) == axis && sizes[d] != 1 || int64(d) != axis && sizes[d] != n) || len(sizes) != args[0].Type.Rank() {
			return bd.gather(o, args)
		}
	}
	return bd.emit(o, ir.OpTake, &ir.AxisAttr{Axis: axis}, nil, args[0], idx)
}

func (bd *builder) scatterAdd(o *op, args []*ir.Value) *ir.Value {
	if len(args) != 3 {
		bd.s.failf(o.pos, "unsupported form of %s: %d operands (only one input, indices and updates)", o.name, len(args))
	}
	if bd.body(o) != "stablehlo.add" {
		if v, ok := bd.scatterBody(o, args); ok {
			return v
		}
		bd.s.failf(o.pos, "unsupported form of %s: a body other than one add with batching dimensions", o.name)
	}
	f := bd.indexForm(o, "scatter_dimension_numbers", [5]string{"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims", "scatter_indices_batching_dims"})
	axis, idx, ok := bd.axis(o, f, args[0], args[1])
	if !ok {
		return bd.scatter(o, args)
	}
	return bd.emit(o, ir.OpScatterAdd, &ir.AxisAttr{Axis: axis}, nil, args[0], idx, args[2])
}
