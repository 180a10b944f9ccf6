package stablehlo

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// composite decomposes relu, gelu, silu, softmax, log_softmax, layer_norm and
// rms_norm into primitive StableHLO, following the formulas of ir/op.go in
// their written order. On f16 and bf16 every operand is converted to f32 first
// and the result rounded once at the end, as the contract says.
func (e *emitter) composite(in *ir.Instr, args []hv) hv {
	if in.Op == ir.OpRelu {
		// max is exact in any precision; NaN propagates.
		x := args[0]
		return e.op2("stablehlo.maximum", x, e.fconst(x.t, 0))
	}
	d := args[0].t.DType
	if isHalf(d) {
		for i := range args {
			args[i] = e.convert(args[i], ir.F32)
		}
	}
	var r hv
	switch in.Op {
	case ir.OpGelu:
		r = e.gelu(args[0], in.Attr.(*ir.GeluAttr).Approximate)
	case ir.OpSilu:
		r = e.mul(args[0], e.op1("stablehlo.logistic", args[0]))
	case ir.OpSoftmax:
		r = e.softmax(args[0], in.Attr.(*ir.AxisAttr).Axis, false)
	case ir.OpLogSoftmax:
		r = e.softmax(args[0], in.Attr.(*ir.AxisAttr).Axis, true)
	case ir.OpLayerNorm:
		r = e.layerNorm(args[0], args[1], args[2], in.Attr.(*ir.EpsAttr).Eps)
	case ir.OpRMSNorm:
		r = e.layerNorm(args[0], args[1], hv{}, in.Attr.(*ir.EpsAttr).Eps)
	default:
		panic("stablehlo: composite called for " + in.Op.String())
	}
	return e.convert(r, d)
}

// gelu: exact 0.5*x*(1+erf(x/sqrt(2))); approximate
// 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))).
func (e *emitter) gelu(x hv, approximate bool) hv {
	var inner hv
	if approximate {
		cube := e.mul(e.mul(x, x), x)
		poly := e.add(x, e.mul(e.fconst(x.t, 0.044715), cube))
		inner = e.op1("stablehlo.tanh", e.mul(e.fconst(x.t, math.Sqrt(2/math.Pi)), poly))
	} else {
		inner = e.unary(ir.OpErf, e.div(x, e.fconst(x.t, math.Sqrt2)))
	}
	half := e.mul(e.fconst(x.t, 0.5), x)
	return e.mul(half, e.add(e.fconst(x.t, 1), inner))
}

// softmax: exp(x-max)/sum(exp(x-max)) along axis; with log set,
// (x-max) - log(sum(exp(x-max))). The max starts from -inf.
func (e *emitter) softmax(x hv, axis int64, log bool) hv {
	axes := []int64{axis}
	s := ir.Scalar(x.t.DType)
	back := keptDims(x.t.Rank(), axis)
	m := e.reduce(x, "stablehlo.maximum", e.lowest(s), axes)
	shifted := e.sub(x, e.broadcast(m, x.t, back))
	ex := e.op1("stablehlo.exponential", shifted)
	sum := e.reduce(ex, "stablehlo.add", e.fconst(s, 0), axes)
	if log {
		return e.sub(shifted, e.broadcast(e.op1("stablehlo.log", sum), x.t, back))
	}
	return e.div(ex, e.broadcast(sum, x.t, back))
}

// layerNorm normalises over the last axis. With bias set it is layer_norm:
// (x-mean)/sqrt(var+eps)*scale+bias, var the mean of squared deviations
// (biased). Without it is rms_norm: x/sqrt(mean(x^2)+eps)*scale.
// Means divide the sum by n.
func (e *emitter) layerNorm(x, scale, bias hv, eps float64) hv {
	last := int64(x.t.Rank() - 1)
	axes := []int64{last}
	s := ir.Scalar(x.t.DType)
	back := keptDims(x.t.Rank(), last)
	reduced := x.t.WithShape(x.t.Shape[:last])
	n := e.fconst(reduced, float64(x.t.Shape[last].Size))
	mean := func(v hv) hv { return e.div(e.reduce(v, "stablehlo.add", e.fconst(s, 0), axes), n) }
	centred := x
	if bias.ref != "" {
		centred = e.sub(x, e.broadcast(mean(x), x.t, back))
	}
	ms := mean(e.mul(centred, centred))
	den := e.op1("stablehlo.sqrt", e.add(ms, e.fconst(reduced, eps)))
	y := e.div(centred, e.broadcast(den, x.t, back))
	y = e.mul(y, e.broadcast(scale, x.t, []int64{last}))
	if bias.ref != "" {
		y = e.add(y, e.broadcast(bias, x.t, []int64{last}))
	}
	return y
}
