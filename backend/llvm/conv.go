package llvm

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// A float convolution runs as im2col and the GEMM: the lhs, channels last,
// padded (lhs dilation is interior padding) into memory once; the patches
// [batch·positions, window·features] gathered from it by one take, whose
// kernel copies each pixel's features as a contiguous row (the row indices
// a constant made here); one dot_general with the kernel reshaped to
// [window·features, output features] (a batch of such products for feature
// or batch groups); then the result's own layout. As slices joined by a
// concat, each patch element was a chain of index arithmetic and selects
// (and an expression feeding the image was computed once per window
// position): four times slower on the UNet block.

// convExpanded returns the instructions that compute in's result in its
// place, the last binding in's result, or nil when in stays whole: integer
// operands (dot_general has no integer kernel) and empty tensors.
func (pl *planner) convExpanded(in *ir.Instr) []*ir.Instr {
	if in.Op != ir.OpConvolution || !floatStatic(in) {
		return nil
	}
	for _, v := range append(append([]*ir.Value{}, in.Args...), in.Results...) {
		if n, _ := v.Type.NumElements(); n == 0 {
			return nil
		}
	}
	f := &ir.Func{Name: "conv", Body: &ir.Block{}}
	b := ir.NewBuilder(f)
	b.Pos = in.Pos
	y := convIm2col(b, in)
	if y == nil {
		return nil
	}
	c := &ir.Instr{Op: ir.OpCopy, Args: []*ir.Value{y}, Results: []*ir.Value{in.Results[0]}, Pos: in.Pos}
	pl.synthetic[c] = true
	pl.p.generated[ir.OpConvolution]++
	return append(f.Body.Instrs, c)
}

// convIm2col builds the expansion; its result has in's result type (nil
// for an image of more pixels than an i32 index reaches).
func convIm2col(b *ir.Builder, in *ir.Instr) *ir.Value {
	a := in.Attr.(*ir.ConvAttr)
	lhs, rhs := in.Args[0], in.Args[1]
	s := a.Spatial()
	od := in.Results[0].Type.Dims()
	outSp := make([]int64, s)
	npos := int64(1)
	for k := range outSp {
		outSp[k] = od[a.OutDims[k+2]]
		npos *= outSp[k]
	}
	// x: [batch, spatial..., features], padded and dilated.
	x := permute(b, lhs, append(append([]int64{a.LhsDims[0]}, a.LhsDims[2:]...), a.LhsDims[1]))
	x = convPad(b, x, a)
	xd := x.Type.Dims()
	batch, feat := xd[0], xd[s+1]
	win := make([]int64, s)
	rd := rhs.Type.Dims()
	nwin := int64(1)
	for k := range win {
		win[k] = rd[a.RhsDims[k+2]]
		nwin *= win[k]
	}
	// patches [batch, positions·window, features]: one take of the rows of
	// the padded image, its spatial dimensions flattened, at the window's
	// positions for each result position.
	pixels := int64(1)
	for _, d := range xd[1 : s+1] {
		pixels *= d
	}
	if pixels > math.MaxInt32 {
		return nil // the rows are i32 indices
	}
	flat := reshape(b, x, []int64{batch, pixels, feat})
	rows := convRows(a, xd[1:s+1], outSp, win)
	idx := b.Const(ir.Tensor(ir.I32, int64(len(rows))), rows...)
	patches := b.Op1(ir.OpTake, &ir.AxisAttr{Axis: 1}, flat, idx)
	// w: [window..., input features, output features].
	w := permute(b, rhs, append(append([]int64{}, a.RhsDims[2:]...), a.RhsDims[1], a.RhsDims[0]))
	y := convProduct(b, a, patches, w, batch*npos, nwin, in.Results[0].Type.DType)
	// y: [result batch, positions..., output features] -> the result's layout.
	o := rd[a.RhsDims[0]]
	canon := append(append([]int64{batch / a.BatchGroups}, outSp...), o)
	y = reshape(b, y, canon)
	perm := make([]int64, s+2)
	perm[a.OutDims[0]], perm[a.OutDims[1]] = 0, int64(s+1)
	for k := 0; k < s; k++ {
		perm[a.OutDims[k+2]] = int64(k + 1)
	}
	y = permute(b, y, perm)
	return y
}

// convRows lists, for each result position and then each window position
// (both row-major), the row of the padded image [pixels, features] that the
// window position reads; padded holds the padded spatial sizes.
func convRows(a *ir.ConvAttr, padded, out, win []int64) []float64 {
	s := len(padded)
	stride := make([]int64, s) // of a spatial dimension in the flattened pixels
	n := int64(1)
	for d := s - 1; d >= 0; d-- {
		stride[d] = n
		n *= padded[d]
	}
	var rows []float64
	y := make([]int64, s)
	for {
		k := make([]int64, s)
		for {
			r := int64(0)
			for d := range s {
				r += (y[d]*a.Stride[d] + k[d]*a.RhsDilation[d]) * stride[d]
			}
			rows = append(rows, float64(r))
			if !nextWindow(k, win) {
				break
			}
		}
		if !nextWindow(y, out) {
			return rows
		}
	}
}

// convProduct multiplies patches [batch, positions..., window·features]
// (rows the first rows elements) by w [window..., in features, out
// features]: one GEMM, or a batch of one per group, with products of
// dtype out (the operands', or a wider one the convolution asks for).
func convProduct(b *ir.Builder, a *ir.ConvAttr, patches, w *ir.Value, rows, nwin int64, out ir.DType) *ir.Value {
	wd := w.Type.Dims()
	in, o := wd[len(wd)-2], wd[len(wd)-1]
	k := nwin * in
	dot := func(l, r *ir.Value, batched bool) *ir.Value {
		d := &ir.DotAttr{LhsContract: []int64{1}, RhsContract: []int64{0}}
		if batched {
			d = &ir.DotAttr{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContract: []int64{2}, RhsContract: []int64{1}}
		}
		res, err := ir.Infer(ir.OpDotGeneral, []ir.Type{l.Type, r.Type}, d, nil)
		if err != nil {
			panic("llvm: convolution's product: " + err.Error())
		}
		t := res[0].WithDType(out)
		return b.Typed(ir.OpDotGeneral, d, &t, l, r)
	}
	switch g := a.FeatureGroups; {
	case g > 1:
		// patches [rows, window, g, in] -> [g, rows, window·in]; w [window, in, g, o/g] -> [g, window·in, o/g].
		p := reshape(b, patches, []int64{rows, nwin, g, in})
		p = reshape(b, permute(b, p, []int64{2, 0, 1, 3}), []int64{g, rows, k})
		r := reshape(b, w, []int64{nwin, in, g, o / g})
		r = reshape(b, permute(b, r, []int64{2, 0, 1, 3}), []int64{g, k, o / g})
		return permute(b, dot(p, r, true), []int64{1, 0, 2})
	}
	switch g := a.BatchGroups; {
	case g > 1:
		// patches [g, rows/g, window·in]; w [window·in, g, o/g] -> [g, window·in, o/g].
		p := reshape(b, patches, []int64{g, rows / g, k})
		r := permute(b, reshape(b, w, []int64{k, g, o / g}), []int64{1, 0, 2})
		return permute(b, dot(p, r, true), []int64{1, 0, 2})
	}
	return dot(reshape(b, patches, []int64{rows, k}), reshape(b, w, []int64{k, o}), false)
}

// convPad pads x [batch, spatial..., features] by the window's padding and
// dilates it by the lhs dilation; x itself when there is neither.
func convPad(b *ir.Builder, x *ir.Value, a *ir.ConvAttr) *ir.Value {
	n := x.Type.Rank()
	lo, hi, inner := make([]int64, n), make([]int64, n), make([]int64, n)
	copy(lo[1:], a.PadLow)
	copy(hi[1:], a.PadHigh)
	any := false
	for k, d := range a.LhsDilation {
		inner[k+1] = d - 1
		any = any || d != 1 || a.PadLow[k] != 0 || a.PadHigh[k] != 0
	}
	if !any {
		return x
	}
	zero := b.Const(ir.Scalar(x.Type.DType), 0)
	return b.Op1(ir.OpPad, &ir.PadAttr{Low: lo, High: hi, Interior: inner}, x, zero)
}

// permute transposes x by perm, or returns x when perm is the identity.
func permute(b *ir.Builder, x *ir.Value, perm []int64) *ir.Value {
	for i, p := range perm {
		if p != int64(i) {
			return b.Op1(ir.OpTranspose, &ir.PermAttr{Perm: perm}, x)
		}
	}
	return x
}

func reshape(b *ir.Builder, x *ir.Value, dims []int64) *ir.Value {
	t := ir.Tensor(x.Type.DType, dims...)
	if t.SameShape(x.Type) {
		return x
	}
	return b.Typed(ir.OpReshape, nil, &t, x)
}

// nextWindow advances idx, a position in the box sizes, row-major; false after the last.
func nextWindow(idx, sizes []int64) bool {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < sizes[d] {
			return true
		}
		idx[d] = 0
	}
	return false
}
