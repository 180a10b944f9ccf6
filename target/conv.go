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
