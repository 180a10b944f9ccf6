package autodiff

import "github.com/tpucc/tpucc/ir"

// convVJP: both gradients of a convolution are convolutions. The operands
// and the cotangent are first put in the canonical layout (lhs [batch,
// features, spatial...], rhs [out features, in features, window...], g
// [batch, out features, spatial...]) and each gradient is put back in its
// operand's layout at the end.
//
// d lhs runs the cotangent through the kernel with its window reversed and
// its two feature dimensions exchanged: the forward lhs dilation becomes
// the stride, the stride the lhs dilation, and the padding is what makes
// every lhs position see each window position that read it. Feature (or
// batch) groups keep each group's output features apart: the kernel's
// groups move into its output features, and for batch groups the groups
// then move from the features into the batch.
//
// d rhs correlates the lhs with the cotangent, the batch contracted: the lhs
// plays the lhs with its batch and features exchanged, the cotangent the
// kernel; the forward rhs dilation becomes the stride and the stride the
// rhs dilation, and the high padding makes the result exactly the window.
// Feature groups become batch groups here and batch groups feature groups.
//
// When the lhs, the kernel or the result has no element, every product sums
// nothing and both gradients are zeros (the gradient convolutions would have
// an empty window: progen seed 80291, an f64[0,3,2] result, panicked).
func convVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	a := in.Attr.(*ir.ConvAttr)
	lhs, rhs := in.Args[0], in.Args[1]
	if empty(lhs) || empty(rhs) || empty(g[0]) {
		var dl, dr *ir.Value
		if lhs.Type.DType.IsFloat() {
			dl = e.like(lhs, 0)
		}
		if rhs.Type.DType.IsFloat() {
			dr = e.like(rhs, 0)
		}
		return []*ir.Value{dl, dr}
	}
	dt := g[0].Type.DType
	l := e.transpose(e.convertTo(lhs, dt), a.LhsDims)
	r := e.transpose(e.convertTo(rhs, dt), a.RhsDims)
	gc := e.transpose(g[0], a.OutDims)
	var dl, dr *ir.Value
	if lhs.Type.DType.IsFloat() {
		dl = e.convertTo(e.transpose(convLhsGrad(e, a, l, r, gc), inversePerm(a.LhsDims)), lhs.Type.DType)
	}
	if rhs.Type.DType.IsFloat() {
		dr = e.convertTo(e.transpose(convRhsGrad(e, a, l, r, gc), inversePerm(a.RhsDims)), rhs.Type.DType)
	}
	return []*ir.Value{dl, dr}
}

func convLhsGrad(e *emitter, a *ir.ConvAttr, l, r, g *ir.Value) *ir.Value {
	s := a.Spatial()
	ld, rd, gd := l.Type.Dims(), r.Type.Dims(), g.Type.Dims()
	groups := a.FeatureGroups * a.BatchGroups
	o, i := rd[0], rd[1]
	// kernel [groups·in, out/groups, window...], each window reversed.
	shape := append([]int64{groups, o / groups, i}, rd[2:]...)
	k := e.reshape(r, ir.Tensor(r.Type.DType, shape...))
	k = e.transpose(k, append([]int64{0, 2, 1}, iotaFrom(3, s)...))
	k = e.reshape(k, ir.Tensor(r.Type.DType, append([]int64{groups * i, o / groups}, rd[2:]...)...))
	k = reverseWindow(e, k)
	c := &ir.ConvAttr{LhsDims: iotaDims(s + 2), RhsDims: iotaDims(s + 2), OutDims: iotaDims(s + 2),
		Stride: a.LhsDilation, LhsDilation: a.Stride, RhsDilation: a.RhsDilation, FeatureGroups: groups, BatchGroups: 1}
	for d := 0; d < s; d++ {
		xd := dilated(ld[d+2], a.LhsDilation[d])
		kd := dilated(rd[d+2], a.RhsDilation[d])
		yd := dilated(gd[d+2], a.Stride[d])
		before := kd - a.PadLow[d] - 1
		c.PadLow = append(c.PadLow, before)
		c.PadHigh = append(c.PadHigh, xd+kd-1-yd-before)
	}
	res := e.b.Op1(ir.OpConvolution, c, g, k)
	if a.BatchGroups == 1 {
		return res
	}
	// [batch/groups, groups·features, ...] -> [groups·batch/groups, features, ...]
	b := gd[0]
	x := e.reshape(res, ir.Tensor(res.Type.DType, append([]int64{b, groups, ld[1]}, ld[2:]...)...))
	x = e.transpose(x, append([]int64{1, 0, 2}, iotaFrom(3, s)...))
	return e.reshape(x, ir.Tensor(res.Type.DType, ld...))
}

func convRhsGrad(e *emitter, a *ir.ConvAttr, l, r, g *ir.Value) *ir.Value {
	s := a.Spatial()
	ld, rd, gd := l.Type.Dims(), r.Type.Dims(), g.Type.Dims()
	swap := append([]int64{1, 0}, iotaFrom(2, s)...)
	c := &ir.ConvAttr{LhsDims: swap, RhsDims: swap, OutDims: swap,
		Stride: a.RhsDilation, LhsDilation: a.LhsDilation, RhsDilation: a.Stride, PadLow: a.PadLow,
		FeatureGroups: a.BatchGroups, BatchGroups: a.FeatureGroups}
	for d := 0; d < s; d++ {
		need := dilated(rd[d+2], a.RhsDilation[d]) + dilated(gd[d+2], a.Stride[d]) - 1
		c.PadHigh = append(c.PadHigh, need-dilated(ld[d+2], a.LhsDilation[d])-a.PadLow[d])
	}
	return e.b.Op1(ir.OpConvolution, c, l, g)
}

// empty reports whether v has no element.
func empty(v *ir.Value) bool {
	n, ok := v.Type.NumElements()
	return ok && n == 0
}

// dilated is the size of n elements with d-1 holes between neighbours.
func dilated(n, d int64) int64 {
	if n == 0 {
		return 0
	}
	return (n-1)*d + 1
}

// reverseWindow reverses k along its spatial dimensions (2 and up) by
// taking their rows in reverse order.
func reverseWindow(e *emitter, k *ir.Value) *ir.Value {
	dims := k.Type.Dims()
	for d := 2; d < len(dims); d++ {
		n := dims[d]
		if n < 2 {
			continue
		}
		idx := make([]float64, n)
		for j := range idx {
			idx[j] = float64(n - 1 - int64(j))
		}
		rev := e.b.Const(ir.Tensor(ir.I32, n), idx...)
		k = e.b.Op1(ir.OpTake, &ir.AxisAttr{Axis: int64(d)}, k, rev)
	}
	return k
}

func iotaFrom(start, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(start + i)
	}
	return out
}

// inversePerm undoes transpose by perm.
func inversePerm(perm []int64) []int64 {
	inv := make([]int64, len(perm))
	for i, p := range perm {
		inv[p] = int64(i)
	}
	return inv
}
