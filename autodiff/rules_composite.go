package autodiff

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// geluVJP differentiates the form the op computes: x·Φ(x) exactly, or the tanh
// approximation 0.5·x·(1+tanh(u)), u = √(2/π)·(x+0.044715x³).
func geluVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	x := in.Args[0]
	var d *ir.Value
	if in.Attr.(*ir.GeluAttr).Approximate {
		c := math.Sqrt(2 / math.Pi)
		x2 := e.mul(x, x)
		u := e.scale(e.add(x, e.scale(e.mul(x2, x), 0.044715)), c)
		t := e.un(ir.OpTanh, u)
		du := e.scale(e.add(e.like(x, 1), e.scale(x2, 3*0.044715)), c)
		left := e.scale(e.add(e.like(x, 1), t), 0.5)
		right := e.mul(e.scale(x, 0.5), e.mul(e.sub(e.like(x, 1), e.mul(t, t)), du))
		d = e.add(left, right)
	} else {
		cdf := e.scale(e.add(e.like(x, 1), e.un(ir.OpErf, e.scale(x, 1/math.Sqrt2))), 0.5)
		pdf := e.scale(e.un(ir.OpExp, e.scale(e.mul(x, x), -0.5)), 1/math.Sqrt(2*math.Pi))
		d = e.add(cdf, e.mul(x, pdf))
	}
	return []*ir.Value{e.mul(g[0], d)}
}

// siluVJP: d/dx x·s(x) = s·(1 + x·(1-s)).
func siluVJP(e *emitter, x, y, g *ir.Value) *ir.Value {
	s := e.un(ir.OpSigmoid, x)
	return e.mul(g, e.mul(s, e.add(e.like(x, 1), e.mul(x, e.sub(e.like(x, 1), s)))))
}

func softmaxVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	axis := in.Attr.(*ir.AxisAttr).Axis
	y := in.Results[0]
	return []*ir.Value{e.mul(y, e.sub(g[0], e.sumAlong(e.mul(g[0], y), axis)))}
}

func logSoftmaxVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	axis := in.Attr.(*ir.AxisAttr).Axis
	p := e.un(ir.OpExp, in.Results[0])
	return []*ir.Value{e.sub(g[0], e.mul(p, e.sumAlong(g[0], axis)))}
}

// meanLast is the mean of x over its last axis, broadcast back to x's shape.
func (e *emitter) meanLast(x *ir.Value) *ir.Value {
	last := int64(x.Type.Rank() - 1)
	n := float64(x.Type.Dims()[last])
	return e.scale(e.sumAlong(x, last), 1/n)
}

// rowsum sums a [..., n] value over every axis but the last, for the scale and bias.
func (e *emitter) rowsum(x *ir.Value) *ir.Value {
	return e.sum(x, iotaDims(x.Type.Rank()-1), false)
}

// scaleOf broadcasts a [n] scale or bias along x's last axis.
func (e *emitter) scaleOf(s, x *ir.Value) *ir.Value {
	return e.broadcast(s, x.Type, []int64{int64(x.Type.Rank() - 1)})
}

func layerNormVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	x, scale := in.Args[0], in.Args[1]
	eps := in.Attr.(*ir.EpsAttr).Eps
	gz := g[0]
	xc := e.sub(x, e.meanLast(x))
	r := e.un(ir.OpRsqrt, e.add(e.meanLast(e.mul(xc, xc)), e.like(x, eps)))
	xhat := e.mul(xc, r)
	gh := e.mul(gz, e.scaleOf(scale, x))
	gx := e.mul(r, e.sub(e.sub(gh, e.meanLast(gh)), e.mul(xhat, e.meanLast(e.mul(gh, xhat)))))
	return []*ir.Value{gx, e.rowsum(e.mul(gz, xhat)), e.rowsum(gz)}
}

func rmsNormVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	x, scale := in.Args[0], in.Args[1]
	eps := in.Attr.(*ir.EpsAttr).Eps
	gz := g[0]
	r := e.un(ir.OpRsqrt, e.add(e.meanLast(e.mul(x, x)), e.like(x, eps)))
	xhat := e.mul(x, r)
	gh := e.mul(gz, e.scaleOf(scale, x))
	gx := e.mul(r, e.sub(gh, e.mul(xhat, e.meanLast(e.mul(gh, xhat)))))
	return []*ir.Value{gx, e.rowsum(e.mul(gz, xhat))}
}
