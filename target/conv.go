package target

import "github.com/tpucc/tpucc/ir"

// convWork counts a convolution as the matmul it is on the MXU: each of the
// out result elements is a dot product over the input features of its group
// and the window (the rhs elements of one output feature), windows that
// overlap the padding included, as XLA counts them.
func (t *Target) convWork(in *ir.Instr, out int64) (work, bool) {
	a, ok := in.Attr.(*ir.ConvAttr)
	rn := elems(in.Args[1])
	if !ok || rn < 0 || out < 0 {
		return work{}, false
	}
	o := in.Args[1].Type.Dims()[a.RhsDims[0]]
	if o == 0 {
		return work{}, true
	}
	k := rn / o
	flops := mulOK(mulOK(2, out), k)
	if flops < 0 {
		return work{}, false
	}
	rate, mxu := t.MatmulPeak(in.Args[0].Type.DType)
	padded := flops
	if mxu {
		s := t.MXUSize
		padded = mulOK(mulOK(mulOK(2, roundUp(out/o, 8)), roundUp(o, s)), roundUp(k, s))
		if padded < 0 {
			return work{}, false
		}
	}
	return work{flops: flops, matmul: flops, paddedMatmul: padded, seconds: float64(padded) / rate}, true
}

// windowWork counts reduce_window's combines, one per element of each
// window, and select_and_scatter's compares, one per element of each window
// (its source has one element per window), plus its adds; -1 when a shape
// is not static.
func windowWork(in *ir.Instr) int64 {
	var w *ir.Window
	windows := elems(in.Results[0])
	switch a := in.Attr.(type) {
	case *ir.ReduceWindowAttr:
		w = &a.Window
	case *ir.SelectScatterAttr:
		w, windows = &a.Window, elems(in.Args[1])
	default:
		return -1
	}
	size := int64(1)
	for _, s := range w.Size {
		size = mulOK(size, s)
	}
	if windows < 0 || size < 0 {
		return -1
	}
	n := mulOK(windows, size)
	if in.Op == ir.OpSelectAndScatter {
		n = addOK(n, windows)
	}
	return n
}
