package stablehlo

import (
	"github.com/tpucc/tpucc/ir"
)

// maxUnrolledWindow bounds the window elements of a reduce_window whose body
// is applied once per element (unrolledWindow): each is an op on the whole
// result, so a longer window is refused rather than compiled slowly.
const maxUnrolledWindow = 256

// unrolledWindow maps a single-input reduce_window whose body is any
// elementwise computation (lax.cumlogsumexp's, a custom lax.reduce_window
// function): the result starts as init and takes the body once per window
// element in row-major order, acc = body(acc, x at that element of each
// window), the strided slice of the padded, base-dilated input; an element
// of the padding or the base dilation is skipped, as XLA skips it (for an
// init that is the body's identity, the same as reducing it).
func (bd *builder) unrolledWindow(o *op, x, init *ir.Value) *ir.Value {
	rank := x.Type.Rank()
	w := bd.window(o, rank)
	w.BaseDilation, w.WindowDilation = bd.optInts(o, "base_dilations"), bd.optInts(o, "window_dilations")
	w, out, err := ir.InferWindow(ir.OpReduceWindow, w, x.Type)
	if err != nil {
		bd.s.failf(o.pos, "%s: %s", o.name, trimError(err))
	}
	if init.Type.Rank() != 0 || init.Type.DType != x.Type.DType {
		bd.s.failf(o.pos, "unsupported form of %s: the init is %s, want tensor<%s>", o.name, mlirType(init.Type), x.Type.DType)
	}
	n := int64(1)
	for _, s := range w.Size { // each at least 1 (InferWindow)
		if s > maxUnrolledWindow/n {
			bd.s.failf(o.pos, "unsupported form of %s: a window of more than %d elements with a body other than one add, maximum, minimum or multiply", o.name, maxUnrolledWindow)
		}
		n *= s
	}
	stride, wdil, lo, hi := w.Stride, w.WindowDilation, w.PadLow, w.PadHigh
	interior := make([]int64, rank)
	for d := range rank {
		interior[d] = w.BaseDilation[d] - 1
	}
	pad := &ir.PadAttr{Low: lo, High: hi, Interior: interior}
	xs := bd.emit(o, ir.OpPad, pad, nil, x, init)
	// in marks the input's own elements of the padded input.
	yes := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Ints: []int64{1}}}, []ir.Type{x.Type.WithDType(ir.I1)})
	no := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Ints: []int64{0}}}, []ir.Type{ir.Scalar(ir.I1)})
	in := bd.emit(o, ir.OpPad, pad, nil, yes, no)
	acc := bd.emit(o, ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, []ir.Type{ir.Tensor(x.Type.DType, out...)}, init)
	if elements(out) == 0 {
		return acc
	}
	for k := range n {
		a := &ir.SliceAttr{Start: make([]int64, rank), Limit: make([]int64, rank), Stride: stride}
		for d, rest := rank-1, k; d >= 0; d-- {
			a.Start[d] = rest % w.Size[d] * wdil[d]
			a.Limit[d] = a.Start[d] + (out[d]-1)*stride[d] + 1
			rest /= w.Size[d]
		}
		v := bd.emit(o, ir.OpSlice, a, nil, xs)
		next := bd.elementwiseBody(o, o.regions[0], []*ir.Value{acc, v})
		acc = bd.emit(o, ir.OpSelect, nil, nil, bd.emit(o, ir.OpSlice, a, nil, in), next, acc)
	}
	return acc
}

// elements is the number of elements of a result of dimensions out.
func elements(out []int64) int64 {
	n := int64(1)
	for _, d := range out {
		n *= d
	}
	return n
}
