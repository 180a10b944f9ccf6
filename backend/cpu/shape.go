package cpu

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Shape kernels move elements without computing on them: reshape, broadcast,
// transpose, slice, concat, pad, iota. Most are one strided gather: the
// element at result index idx comes from src[off + Σ idx[d]*st[d]].

// rowMajorStrides returns the element strides of a row-major array of dims.
func rowMajorStrides(dims []int64) []int64 {
	st := make([]int64, len(dims))
	s := int64(1)
	for d := len(dims) - 1; d >= 0; d-- {
		st[d] = s
		s *= dims[d]
	}
	return st
}

// stridedRows visits a row-major array of shape (n elements in all) one
// innermost row at a time: row(o, p) gets the row's row-major offset o and its
// strided offset p = off + Σ idx[d]*st[d]; the row's elements step by the last
// stride. A rank-0 shape is one row of one element.
func stridedRows(shape, st []int64, off int64, n int, row func(o int, p int64)) {
	if n == 0 {
		return
	}
	rank := len(shape)
	if rank == 0 {
		row(0, off)
		return
	}
	idx := make([]int64, rank)
	last := int(shape[rank-1])
	p := off
	for o := 0; o < n; o += last {
		row(o, p)
		for d := rank - 2; d >= 0; d-- {
			idx[d]++
			p += st[d]
			if idx[d] < shape[d] {
				break
			}
			p -= st[d] * shape[d]
			idx[d] = 0
		}
	}
}

// lastExtent is the length and stride of shape's innermost dimension (1 and 0
// for a scalar).
func lastExtent(shape, st []int64) (int, int64) {
	if len(shape) == 0 {
		return 1, 0
	}
	return int(shape[len(shape)-1]), st[len(st)-1]
}

// gather fills dst, row-major over shape, with src[off + Σ idx[d]*st[d]].
func gather[T any](dst, src []T, shape, st []int64, off int64) {
	last, ls := lastExtent(shape, st)
	stridedRows(shape, st, off, len(dst), func(o int, p int64) {
		for j := range dst[o : o+last] {
			dst[o+j] = src[p+int64(j)*ls]
		}
	})
}

// scatter is gather's inverse: dst[off + Σ idx[d]*st[d]] = src at idx, src
// row-major over shape.
func scatter[T any](dst, src []T, shape, st []int64, off int64) {
	last, ls := lastExtent(shape, st)
	stridedRows(shape, st, off, len(src), func(o int, p int64) {
		for j, v := range src[o : o+last] {
			dst[p+int64(j)*ls] = v
		}
	})
}

// gatherTensor makes a tensor of type t by gathering from x.
func gatherTensor(t ir.Type, x *backend.Buffer, st []int64, off int64) *backend.Buffer {
	out := backend.New(t)
	switch t.DType.Size() {
	case 1:
		gather(out.Bytes(), x.Bytes(), t.Dims(), st, off)
	case 2:
		gather(backend.Words[uint16](out), backend.Words[uint16](x), t.Dims(), st, off)
	case 4:
		gather(backend.Words[uint32](out), backend.Words[uint32](x), t.Dims(), st, off)
	case 8:
		gather(backend.Words[uint64](out), backend.Words[uint64](x), t.Dims(), st, off)
	default:
		gather(backend.Words[[2]uint64](out), backend.Words[[2]uint64](x), t.Dims(), st, off)
	}
	return out
}

func reshapeKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	return retype(x, in.Results[0].Type)
}

func broadcastKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	t := in.Results[0].Type
	dims := in.Attr.(*ir.DimsAttr).Dims
	xs := rowMajorStrides(x.Type().Dims())
	st := make([]int64, t.Rank())
	for i, d := range dims {
		if x.Type().Shape[i].Size != 1 {
			st[d] = xs[i] // a size-1 operand dimension repeats: stride 0
		}
	}
	return gatherTensor(t, x, st, 0)
}

// transpose permutes x's dimensions: result dimension i is operand dimension perm[i].
func transpose(x *backend.Buffer, perm []int64) *backend.Buffer {
	xs := rowMajorStrides(x.Type().Dims())
	shape := make([]ir.Dim, len(perm))
	st := make([]int64, len(perm))
	for i, p := range perm {
		shape[i] = x.Type().Shape[p]
		st[i] = xs[p]
	}
	return gatherTensor(x.Type().WithShape(shape), x, st, 0)
}

func transposeKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	return transpose(x, in.Attr.(*ir.PermAttr).Perm).WithType(in.Results[0].Type)
}

func sliceKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	a := in.Attr.(*ir.SliceAttr)
	xs := rowMajorStrides(x.Type().Dims())
	st := make([]int64, len(xs))
	off := int64(0)
	for d := range xs {
		stride := int64(1)
		if a.Stride != nil {
			stride = a.Stride[d]
		}
		st[d] = xs[d] * stride
		off += a.Start[d] * xs[d]
	}
	return gatherTensor(in.Results[0].Type, x, st, off)
}

// concatKernel copies each operand's rows of `inner` elements into place.
func concatKernel(in *ir.Instr, xs []*backend.Buffer) *backend.Buffer {
	out := backend.New(in.Results[0].Type)
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	dims := out.Type().Dims()
	outer, inner := int64(1), int64(1)
	for _, n := range dims[:axis] {
		outer *= n
	}
	for _, n := range dims[axis+1:] {
		inner *= n
	}
	outChunk := dims[axis] * inner
	at := int64(0) // offset of the current operand along axis, times inner
	for _, x := range xs {
		chunk := x.Type().Shape[axis].Size * inner
		for o := int64(0); o < outer; o++ {
			copyRow(out, x, int(o*outChunk+at), int(o*chunk), int(chunk))
		}
		at += chunk
	}
	return out
}

// padKernel fills the result with the padding value, then places each operand
// element at low + i*(interior+1) along every dimension, dropping those that a
// negative low or high cuts off.
func padKernel(in *ir.Instr, x, v *backend.Buffer) *backend.Buffer {
	a := in.Attr.(*ir.PadAttr)
	t := in.Results[0].Type
	out := backend.New(t)
	switch t.DType.Size() {
	case 1:
		padWords(out.Bytes(), x.Bytes(), v.Bytes(), x.Type().Dims(), t.Dims(), a)
	case 2:
		padWords(backend.Words[uint16](out), backend.Words[uint16](x), backend.Words[uint16](v), x.Type().Dims(), t.Dims(), a)
	case 4:
		padWords(backend.Words[uint32](out), backend.Words[uint32](x), backend.Words[uint32](v), x.Type().Dims(), t.Dims(), a)
	case 8:
		padWords(backend.Words[uint64](out), backend.Words[uint64](x), backend.Words[uint64](v), x.Type().Dims(), t.Dims(), a)
	default:
		padWords(backend.Words[[2]uint64](out), backend.Words[[2]uint64](x), backend.Words[[2]uint64](v), x.Type().Dims(), t.Dims(), a)
	}
	return out
}

// padWords fills dst with the padding value v[0] and places src into it.
func padWords[T any](dst, src, v []T, inDims, outDims []int64, a *ir.PadAttr) {
	fill(dst, v[0])
	padInto(dst, src, inDims, outDims, a.Low, a.Interior)
}

func fill[T any](xs []T, v T) {
	for i := range xs {
		xs[i] = v
	}
}

func padInto[T any](dst, src []T, inDims, outDims, low, interior []int64) {
	if len(src) == 0 {
		return
	}
	rank := len(inDims)
	os := rowMajorStrides(outDims)
	idx := make([]int64, rank)
	for i := range src {
		p, inside := int64(0), true
		for d := 0; d < rank; d++ {
			step := int64(1)
			if interior != nil {
				step += interior[d]
			}
			o := low[d] + idx[d]*step
			if o < 0 || o >= outDims[d] {
				inside = false
				break
			}
			p += o * os[d]
		}
		if inside {
			dst[p] = src[i]
		}
		for d := rank - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < inDims[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// iotaKernel: each element is its index along axis, converted to the dtype
// (wrapped for integers, rounded for floats).
func iotaKernel(in *ir.Instr) *backend.Buffer {
	t := in.Results[0].Type
	axis := in.Attr.(*ir.AxisAttr).Axis
	out := backend.New(t)
	dims := t.Dims()
	inner := int64(1)
	for _, n := range dims[axis+1:] {
		inner *= n
	}
	for i := 0; i < out.Len(); i++ {
		out.SetInt64(i, (int64(i)/inner)%dims[axis]) // converted (floats) or wrapped
	}
	return out
}
