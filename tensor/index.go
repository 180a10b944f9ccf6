package tensor

import "github.com/tpucc/tpucc/ir"

// Take gathers along axis as jnp.take: the result's shape is
// t.shape[:axis] + idx.shape + t.shape[axis+1:]; indices (an integer tensor)
// are clamped into range.
func (t *Tensor) Take(idx *Tensor, axis int) *Tensor {
	check("take", t, idx)
	return apply1("take", ir.OpTake, &ir.AxisAttr{Axis: normAxis("take", t.Type(), axis)}, nil, t, idx)
}

// ScatterAdd is t with upd added at the rows idx along axis, the transpose of
// Take: upd has Take's result shape; rows out of range are dropped and
// repeated rows accumulate.
func (t *Tensor) ScatterAdd(idx, upd *Tensor, axis int) *Tensor {
	check("scatter_add", t, idx, upd)
	a := &ir.AxisAttr{Axis: normAxis("scatter_add", t.Type(), axis)}
	return apply1("scatter_add", ir.OpScatterAdd, a, nil, t, idx, upd)
}

// DynamicSlice takes the window of the given sizes at runtime starts (one
// integer scalar per dimension, all of one dtype), each clamped so the window fits.
func (t *Tensor) DynamicSlice(starts []*Tensor, sizes []int64) *Tensor {
	check("dynamic_slice", t)
	check("dynamic_slice", starts...)
	a := &ir.SizesAttr{Sizes: append([]int64{}, sizes...)}
	return apply1("dynamic_slice", ir.OpDynamicSlice, a, nil, append([]*Tensor{t}, starts...)...)
}

// DynamicUpdateSlice is t with upd written at runtime starts (one integer
// scalar per dimension), each clamped so upd fits.
func (t *Tensor) DynamicUpdateSlice(upd *Tensor, starts []*Tensor) *Tensor {
	check("dynamic_update_slice", t, upd)
	check("dynamic_update_slice", starts...)
	return apply1("dynamic_update_slice", ir.OpDynamicUpdateSlice, nil, nil, append([]*Tensor{t, upd}, starts...)...)
}

// OneHot turns an integer index tensor into idx.shape+[depth] of dtype dt, 1
// where the index equals the position; an index outside [0, depth) gives a
// row of zeros.
func (t *Tensor) OneHot(depth int64, dt ir.DType) *Tensor {
	check("one_hot", t)
	ty := t.Type()
	if depth < 0 {
		fail("one_hot", []ir.Type{ty}, "depth must not be negative, got %d", depth)
	}
	if dt == ir.Invalid || dt.String() == "invalid" {
		fail("one_hot", []ir.Type{ty}, "invalid dtype")
	}
	rt := ir.Type{DType: dt, Shape: append(append([]ir.Dim{}, ty.Shape...), ir.D(depth))}
	return apply1("one_hot", ir.OpOneHot, &ir.DepthAttr{Depth: depth}, []ir.Type{rt}, t)
}

// TopK returns the k largest elements along the last axis, descending (ties:
// lower index first), and their i32 indices.
func (t *Tensor) TopK(k int) (values, indices *Tensor) {
	check("top_k", t)
	res := apply("top_k", ir.OpTopK, &ir.TopKAttr{K: int64(k)}, nil, t)
	return res[0], res[1]
}

// Argsort returns the i32 indices that sort t ascending along axis (stable;
// floats in IEEE total order).
func (t *Tensor) Argsort(axis int) *Tensor { return t.axisOp("argsort", ir.OpArgsort, axis) }
