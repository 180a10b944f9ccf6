package tensor

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// Reshape keeps the elements in row-major order under a new shape; one
// dimension may be -1, meaning whatever size keeps the element count.
func (t *Tensor) Reshape(shape ...int64) *Tensor {
	check("reshape", t)
	ty := t.Type()
	dims := append([]int64{}, shape...)
	infer := -1
	known := int64(1)
	for i, d := range dims {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			fail("reshape", []ir.Type{ty}, "shape %s may have one -1 and no other negative size", shapeString(shape))
		default:
			known *= d
		}
	}
	if infer >= 0 {
		n, ok := ty.NumElements()
		if !ok {
			fail("reshape", []ir.Type{ty}, "cannot infer the -1 of %s from %s", shapeString(shape), ty)
		}
		if known == 0 || n%known != 0 {
			fail("reshape", []ir.Type{ty}, "cannot reshape %s to %s", ty, shapeString(shape))
		}
		dims[infer] = n / known
	}
	rt := ir.Tensor(ty.DType, dims...)
	if n, ok := ty.NumElements(); ok {
		if m, ok := rt.NumElements(); !ok || m != n {
			fail("reshape", []ir.Type{ty}, "cannot reshape %s (%d elements) to %s", ty, n, shapeString(shape))
		}
	}
	return apply1("reshape", ir.OpReshape, nil, []ir.Type{rt}, t)
}

// Convert changes the dtype: floats to integers truncate toward zero and
// saturate (NaN is 0), to i1 means != 0, integers to integers wrap.
func (t *Tensor) Convert(dt ir.DType) *Tensor {
	check("convert", t)
	if dt == ir.Invalid || dt.String() == "invalid" {
		fail("convert", []ir.Type{t.Type()}, "invalid dtype")
	}
	ty := t.Type()
	if ty.DType == dt {
		return t
	}
	return apply1("convert", ir.OpConvert, nil, []ir.Type{ty.WithDType(dt)}, t)
}

// BroadcastTo stretches t numpy-style to shape: t's dimensions are aligned
// with the last ones of shape and must be 1 or equal to them.
func (t *Tensor) BroadcastTo(shape ...int64) *Tensor {
	check("broadcast_to", t)
	ty := t.Type()
	rt := shapeType("broadcast_to", ty.DType, shape)
	if s, ok := ir.BroadcastShapes(ty.Shape, rt.Shape); !ok || ty.Rank() > rt.Rank() || !rt.SameShape(ir.Type{Shape: s}) {
		fail("broadcast_to", []ir.Type{ty}, "%s does not broadcast to shape %s", ty, shapeString(shape))
	}
	return t.broadcastDims("broadcast_to", rt.Shape)
}

// BroadcastInDim is StableHLO's broadcast_in_dim: operand dimension i becomes
// dimension dims[i] of shape (negative dims count from the end of shape).
func (t *Tensor) BroadcastInDim(shape []int64, dims ...int) *Tensor {
	check("broadcast_in_dim", t)
	ty := t.Type()
	rt := shapeType("broadcast_in_dim", ty.DType, shape)
	return apply1("broadcast_in_dim", ir.OpBroadcast, &ir.DimsAttr{Dims: normAxes("broadcast_in_dim", rt, dims)}, []ir.Type{rt}, t)
}

// Transpose permutes the dimensions: result dimension i is dimension perm[i]
// of t. No perm reverses the dimensions, as numpy does.
func (t *Tensor) Transpose(perm ...int) *Tensor {
	check("transpose", t)
	ty := t.Type()
	if len(perm) == 0 {
		for i := ty.Rank() - 1; i >= 0; i-- {
			perm = append(perm, i)
		}
	}
	if len(perm) != ty.Rank() {
		fail("transpose", []ir.Type{ty}, "perm %s is not a permutation of the %d dimensions of %s", shapeString(perm), ty.Rank(), ty)
	}
	p := normAxes("transpose", ty, perm)
	return apply1("transpose", ir.OpTranspose, &ir.PermAttr{Perm: p}, nil, t)
}

// Slice takes the static strided window start[i] <= j < limit[i], every
// stride[i]-th element, along each dimension; a nil stride is all ones.
func (t *Tensor) Slice(start, limit, stride []int64) *Tensor {
	check("slice", t)
	a := &ir.SliceAttr{Start: append([]int64{}, start...), Limit: append([]int64{}, limit...)}
	if stride != nil {
		a.Stride = append([]int64{}, stride...)
	}
	return apply1("slice", ir.OpSlice, a, nil, t)
}

// Concat joins tensors of one dtype along axis; they agree on every other dimension.
func Concat(axis int, ts ...*Tensor) *Tensor {
	if len(ts) == 0 {
		fail("concat", nil, "needs at least one tensor")
	}
	check("concat", ts...)
	a := normAxis("concat", ts[0].Type(), axis)
	return apply1("concat", ir.OpConcat, &ir.AxisAttr{Axis: a}, nil, ts...)
}

// Pad adds low[i] elements before and high[i] after dimension i (negative
// amounts cut) and interior[i] between neighbours (nil interior is none), all
// of value, a scalar of t's dtype.
func (t *Tensor) Pad(value *Tensor, low, high, interior []int64) *Tensor {
	check("pad", t, value)
	a := &ir.PadAttr{Low: append([]int64{}, low...), High: append([]int64{}, high...)}
	if interior != nil {
		a.Interior = append([]int64{}, interior...)
	}
	return apply1("pad", ir.OpPad, a, nil, t, value)
}

// shapeString writes a shape or a list of axes as in .tir: [2,3].
func shapeString[T int | int64](s []T) string {
	out := "["
	for i, d := range s {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprint(d)
	}
	return out + "]"
}
