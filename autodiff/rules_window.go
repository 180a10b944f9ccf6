package autodiff

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// reduceWindowVJP: a window sum spreads each cotangent over its window, which
// is again a window sum, of the cotangent dilated by the stride and padded
// so that each element sees every window that read it (the shape of
// convolution's lhs gradient with a kernel of ones); the init value, which
// also fills the padding and the holes, gets each cotangent times one plus
// the window's positions that are not elements. A window maximum (minimum)
// sends each cotangent to the window's first largest (smallest) element:
// select_and_scatter.
func reduceWindowVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	a := in.Attr.(*ir.ReduceWindowAttr)
	x, init := in.Args[0], in.Args[1]
	if !x.Type.DType.IsFloat() {
		return nil
	}
	zero := e.b.Const(ir.Scalar(g[0].Type.DType), 0)
	if a.Kind == ir.ReduceMax || a.Kind == ir.ReduceMin {
		sel := ir.CmpGE
		if a.Kind == ir.ReduceMin {
			sel = ir.CmpLE
		}
		w := ir.Window{Size: a.Size, Stride: a.Stride, PadLow: a.PadLow, PadHigh: a.PadHigh}
		return []*ir.Value{e.b.Op1(ir.OpSelectAndScatter, &ir.SelectScatterAttr{Select: sel, Window: w}, x, g[0], zero), nil}
	}
	xd, gd := x.Type.Dims(), g[0].Type.Dims()
	w := ir.Window{Size: a.Size, Stride: a.BaseDilation, BaseDilation: a.Stride, WindowDilation: a.WindowDilation}
	for d := range xd {
		kd := dilated(a.Size[d], a.WindowDilation[d])
		before := kd - a.PadLow[d] - 1
		w.PadLow = append(w.PadLow, before)
		w.PadHigh = append(w.PadHigh, dilated(xd[d], a.BaseDilation[d])+kd-1-dilated(gd[d], a.Stride[d])-before)
	}
	dx := e.b.Op1(ir.OpReduceWindow, &ir.ReduceWindowAttr{Kind: ir.ReduceSum, Window: w}, g[0], zero)
	// Per window, the positions holding init: its size, plus one, less its elements.
	ones := e.b.Const(x.Type, 1)
	real := e.b.Op1(ir.OpReduceWindow, &ir.ReduceWindowAttr{Kind: ir.ReduceSum, Window: a.Window}, ones, e.b.Const(ir.Scalar(x.Type.DType), 0))
	size := int64(1)
	for _, s := range a.Size {
		size *= s
	}
	n := e.sub(e.like(real, float64(size+1)), real)
	dinit := e.sum(e.mul(g[0], n), iotaDims(g[0].Type.Rank()), false)
	return []*ir.Value{dx, e.convertTo(dinit, init.Type.DType)}
}

// reduceWindowRefused: a window product, and a maximum or minimum whose
// init is not the identity (a window could then take init instead of an
// element) or that dilates (select_and_scatter has no dilations).
func reduceWindowRefused(in *ir.Instr) string {
	a := in.Attr.(*ir.ReduceWindowAttr)
	switch a.Kind {
	case ir.ReduceProd:
		return "the product of a window is not differentiated"
	case ir.ReduceMax, ir.ReduceMin:
		for d := range a.Size {
			if a.BaseDilation[d] != 1 || a.WindowDilation[d] != 1 {
				return "a window maximum or minimum with dilations is not differentiated (select_and_scatter has none)"
			}
		}
		want := math.Inf(-1)
		if a.Kind == ir.ReduceMin {
			want = math.Inf(1)
		}
		c := in.Args[1].Def
		if c == nil || c.Op != ir.OpConstant || c.Attr.(*ir.ConstAttr).Value.Len() != 1 || c.Attr.(*ir.ConstAttr).Value.Float(0) != want {
			return "a window maximum or minimum is differentiated only with init -inf or +inf (the identity)"
		}
	}
	return ""
}
