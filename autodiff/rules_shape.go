package autodiff

import "github.com/tpucc/tpucc/ir"

func broadcastVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	dims := in.Attr.(*ir.DimsAttr).Dims
	return []*ir.Value{e.unbroadcast(g[0], in.Args[0].Type, dims)}
}

func transposeVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	perm := in.Attr.(*ir.PermAttr).Perm
	inv := make([]int64, len(perm))
	for i, p := range perm {
		inv[p] = int64(i)
	}
	return []*ir.Value{e.transpose(g[0], inv)}
}

// sliceVJP pads the cotangent back into place: the strides become interior padding.
func sliceVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	a := in.Attr.(*ir.SliceAttr)
	x, gz := in.Args[0], g[0]
	dims, out := x.Type.Dims(), gz.Type.Dims()
	n := len(dims)
	low, high, interior := make([]int64, n), make([]int64, n), make([]int64, n)
	for i := range dims {
		s := int64(1)
		if i < len(a.Stride) {
			s = a.Stride[i]
		}
		if out[i] == 0 {
			return []*ir.Value{e.like(x, 0)}
		}
		low[i] = a.Start[i]
		interior[i] = s - 1
		high[i] = dims[i] - 1 - (a.Start[i] + (out[i]-1)*s)
	}
	zero := e.b.Const(ir.Scalar(x.Type.DType), 0)
	return []*ir.Value{e.b.Op1(ir.OpPad, &ir.PadAttr{Low: low, High: high, Interior: interior}, gz, zero)}
}

// padVJP undoes the edge padding with a negated pad (which crops, or restores what a
// negative pad cut) and the interior padding with a strided slice; the padding value
// gets the sum of the cotangent that did not go to x.
func padVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	a := in.Attr.(*ir.PadAttr)
	x, gz := in.Args[0], g[0]
	n := x.Type.Rank()
	low, high := make([]int64, n), make([]int64, n)
	start, limit, stride := make([]int64, n), make([]int64, n), make([]int64, n)
	dims := gz.Type.Dims()
	for i := 0; i < n; i++ {
		low[i], high[i] = -a.Low[i], -a.High[i]
		stride[i] = 1
		if i < len(a.Interior) {
			stride[i] = a.Interior[i] + 1
		}
		limit[i] = dims[i] - a.Low[i] - a.High[i]
	}
	zero := e.b.Const(ir.Scalar(x.Type.DType), 0)
	t := e.b.Op1(ir.OpPad, &ir.PadAttr{Low: low, High: high}, gz, zero)
	gx := e.b.Op1(ir.OpSlice, &ir.SliceAttr{Start: start, Limit: limit, Stride: stride}, t)
	all := iotaDims(n)
	gv := e.sub(e.sum(gz, all, false), e.sum(gx, all, false))
	return []*ir.Value{gx, gv}
}

func concatVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	axis := in.Attr.(*ir.AxisAttr).Axis
	dims := g[0].Type.Dims()
	out := make([]*ir.Value, len(in.Args))
	at := int64(0)
	for i, x := range in.Args {
		start, limit := make([]int64, len(dims)), append([]int64{}, dims...)
		start[axis] = at
		at += x.Type.Dims()[axis]
		limit[axis] = at
		if x.Type.DType.IsFloat() {
			out[i] = e.b.Op1(ir.OpSlice, &ir.SliceAttr{Start: start, Limit: limit}, g[0])
		}
	}
	return out
}

func reduceSumVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	a := in.Attr.(*ir.AxesAttr)
	x := in.Args[0]
	return []*ir.Value{e.broadcast(g[0], x.Type, reducedDims(x.Type.Rank(), a))}
}

// reducedDims maps the dims of a reduction's result to its operand's.
func reducedDims(rank int, a *ir.AxesAttr) []int64 {
	if a.KeepDims {
		return iotaDims(rank)
	}
	return without(rank, a.Axes)
}

// reduceChooserVJP is JAX's rule for reduce_max and reduce_min: the elements equal to
// the result share its cotangent evenly.
func reduceChooserVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	a := in.Attr.(*ir.AxesAttr)
	x := in.Args[0]
	dims := reducedDims(x.Type.Rank(), a)
	at := e.indicator(e.cmp(ir.CmpEQ, x, e.broadcast(in.Results[0], x.Type, dims)), x.Type)
	count := e.b.Op1(ir.OpReduceSum, &ir.AxesAttr{Axes: a.Axes, KeepDims: a.KeepDims}, at)
	share := e.div(g[0], count)
	return []*ir.Value{e.mul(at, e.broadcast(share, x.Type, dims))}
}

// reduceProdVJP is exact with zeros: an element gets the product of the others, which
// is prod/x without zeros, the product of the nonzeros for the only zero, else 0.
func reduceProdVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	a := in.Attr.(*ir.AxesAttr)
	x := in.Args[0]
	dims := reducedDims(x.Type.Rank(), a)
	back := func(v *ir.Value) *ir.Value { return e.broadcast(v, x.Type, dims) }
	isZero := e.cmp(ir.CmpEQ, x, e.like(x, 0))
	nonzero := e.sel(isZero, e.like(x, 1), x)
	prodNZ := back(e.b.Op1(ir.OpReduceProd, &ir.AxesAttr{Axes: a.Axes, KeepDims: a.KeepDims}, nonzero))
	zeros := back(e.b.Op1(ir.OpReduceSum, &ir.AxesAttr{Axes: a.Axes, KeepDims: a.KeepDims}, e.indicator(isZero, x.Type)))
	none := e.cmp(ir.CmpEQ, zeros, e.like(x, 0))
	one := e.cmp(ir.CmpEQ, zeros, e.like(x, 1))
	others := e.sel(isZero, e.where(one, prodNZ), e.where(none, e.div(prodNZ, nonzero)))
	return []*ir.Value{e.mul(back(g[0]), others)}
}

// cumsumVJP: the reversed inclusive prefix sum, total - cumsum(g) + g.
func cumsumVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	axis := in.Attr.(*ir.AxisAttr).Axis
	gz := g[0]
	cs := e.b.Op1(ir.OpCumsum, &ir.AxisAttr{Axis: axis}, gz)
	return []*ir.Value{e.add(e.sub(e.sumAlong(gz, axis), cs), gz)}
}
