package progen

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// genReduceWindow draws a window sum (padding, both dilations) or a window
// maximum or minimum (strides and window dilation; no padding or base
// dilation, so that every window holds an element and init, the identity,
// never decides the result). The identity init is a constant kept out of
// the pool: -inf or a dtype's extreme would poison other ops' ranges.
func (g *gen) genReduceWindow() bool {
	x := g.get(want{pred: isNumeric, minRank: 1})
	if x == nil {
		return false
	}
	dt := x.dt()
	kind := pick(g, []ir.ReduceKind{ir.ReduceSum, ir.ReduceMax, ir.ReduceMin})
	dims := x.shape()
	a := &ir.ReduceWindowAttr{Kind: kind}
	n := int64(1) // positions of a window
	for _, d := range dims {
		w := 1 + g.r.Int64N(min(d, 3)+1)
		a.Size = append(a.Size, w)
		a.Stride = append(a.Stride, 1+g.r.Int64N(2))
		a.WindowDilation = append(a.WindowDilation, 1+g.r.Int64N(2))
		lo, hi, bd := int64(0), int64(0), int64(1)
		if kind == ir.ReduceSum {
			lo, hi, bd = g.r.Int64N(2), g.r.Int64N(2), 1+g.r.Int64N(2)
		}
		a.PadLow, a.PadHigh, a.BaseDilation = append(a.PadLow, lo), append(a.PadHigh, hi), append(a.BaseDilation, bd)
		n *= w
	}
	init := 0.0
	switch {
	case kind == ir.ReduceMax && dt.IsFloat():
		init = math.Inf(-1)
	case kind == ir.ReduceMin && dt.IsFloat():
		init = math.Inf(1)
	case kind == ir.ReduceMax:
		lo, _ := dt.IntRange()
		init = float64(lo)
	case kind == ir.ReduceMin:
		_, hi := dt.IntRange()
		init = float64(hi)
	}
	y := &val{nan: x.nan}
	switch {
	case kind != ir.ReduceSum:
		*y = *x
		y.prod = false
		y.zs = x.zs || x.has0()
	case !dt.IsFloat():
		y.lo, y.hi = fitRange(dt, math.Min(0, float64(n)*x.lo), math.Max(0, float64(n)*x.hi))
	default:
		y.lo, y.hi = fitRange(dt, math.Min(0, float64(n)*x.lo), math.Max(0, float64(n)*x.hi))
		y.zs = true
		y.ea, y.er = accumulated(x, dt, float64(n), x.mag())
	}
	if !g.ok(dt, y) {
		return false
	}
	c := g.scalarConst(dt, init)
	if c == nil {
		return false
	}
	if res, err := ir.Infer(ir.OpReduceWindow, []ir.Type{x.v.Type, c.v.Type}, a, nil); err != nil || !g.fits(res[0].Dims()) {
		return false
	}
	return g.emit1(ir.OpReduceWindow, a, nil, y, x, c) != nil
}

// scalarConst emits a scalar constant of dt that does not join the pool.
func (g *gen) scalarConst(dt ir.DType, v float64) *val {
	t := ir.Tensor(dt)
	lit := ir.NewLiteral(t, []float64{v})
	if !dt.IsFloat() {
		lit = ir.NewIntLiteral(t, []int64{int64(v)})
	}
	in := g.emit(ir.OpConstant, &ir.ConstAttr{Value: lit}, []ir.Type{t})
	if in == nil {
		return nil
	}
	x := &val{v: in.Result(), lo: v, hi: v}
	fs := g.fn
	for len(fs.info) <= x.v.ID {
		fs.info = append(fs.info, nil)
	}
	fs.info[x.v.ID] = x // known to the analysis of its users, never drawn
	return x
}

// genSelectAndScatter draws max (or min) pooling's gradient: an exact,
// NaN-free operand (so that XLA and the executor select the same element),
// a source of the windows' shape and an init from the pool. Each result
// element is init plus at most m source elements, m the windows that can
// hold one position.
func (g *gen) genSelectAndScatter() bool {
	x := g.get(want{pred: isNumeric, minRank: 1, exact: true, noNaN: true})
	if x == nil {
		return false
	}
	dt := x.dt()
	a := &ir.SelectScatterAttr{Select: pick(g, []ir.CmpDir{ir.CmpGE, ir.CmpGT, ir.CmpLE, ir.CmpLT})}
	var src []int64
	m := int64(1)
	for _, d := range x.shape() {
		w, s := 1+g.r.Int64N(min(d, 3)+1), 1+g.r.Int64N(2)
		lo, hi := g.r.Int64N(2), g.r.Int64N(2)
		a.Size, a.Stride = append(a.Size, w), append(a.Stride, s)
		a.PadLow, a.PadHigh = append(a.PadLow, lo), append(a.PadHigh, hi)
		n := int64(0)
		if in := d + lo + hi; in >= w {
			n = (in-w)/s + 1
		}
		src = append(src, n)
		m *= (w + s - 1) / s
	}
	if !g.fits(src) {
		return false
	}
	source := g.get(want{dts: []ir.DType{dt}}.withShape(src))
	init := g.get(want{dts: []ir.DType{dt}}.withShape([]int64{}))
	if source == nil || init == nil {
		return false
	}
	y := &val{nan: source.nan || init.nan}
	k := float64(m)
	if !dt.IsFloat() {
		y.lo, y.hi = fullRange(dt)
	} else {
		y.lo, y.hi = fitRange(dt, init.lo+math.Min(0, k*source.lo), init.hi+math.Max(0, k*source.hi))
		y.zs = true
		y.ea = init.errMax() + k*source.errMax() + 2*(k+1)*unit(dt)*(init.mag()+k*source.mag())
		y.er = ulpRel(dt)
		if !g.ok(dt, y) {
			return false
		}
	}
	return g.emit1(ir.OpSelectAndScatter, a, nil, y, x, source, init) != nil
}

// fits reports whether a shape is within the configured sizes.
func (g *gen) fits(dims []int64) bool {
	for _, d := range dims {
		if d > g.cfg.MaxDim {
			return false
		}
	}
	return numElements(dims) <= g.cfg.MaxElements
}
