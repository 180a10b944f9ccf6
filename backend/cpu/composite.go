package cpu

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// Composite ops compute in float64 from the operand values and round once into
// the dtype at the end: for f16 and bf16 that is the contract's "compute in
// f32, round once", only more precise. relu and silu are elementwise and live
// in floatUnary and intUnary.

// geluKernel: exact 0.5·x·(1+erf(x/√2)); approximate
// 0.5·x·(1+tanh(√(2/π)·(x+0.044715·x³))).
func geluKernel(in *ir.Instr, x *Tensor) *Tensor {
	approx := in.Attr.(*ir.GeluAttr).Approximate
	out := NewTensor(in.Results[0].Type)
	dt := x.Type.DType
	c := math.Sqrt(2 / math.Pi)
	for i, v := range x.F {
		var g float64
		if approx {
			g = 0.5 * v * (1 + math.Tanh(c*(v+0.044715*v*v*v)))
		} else {
			g = 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
		}
		out.F[i] = dt.RoundFloat(g)
	}
	return out
}

// eachLine calls fn with the flat indices of every line of n elements along
// axis (stride inner), reusing one index slice.
func eachLine(dims []int64, axis int, fn func(line []int)) {
	outer, n, inner := splitAxis(dims, axis)
	line := make([]int, n)
	for o := 0; o < outer; o++ {
		for j := 0; j < inner; j++ {
			for i := range line {
				line[i] = (o*n+i)*inner + j
			}
			fn(line)
		}
	}
}

// softmaxKernel: exp(x-max)/Σexp(x-max), and for log_softmax x-max-log(Σexp(x-max)),
// with max propagating NaN. A line of all -inf gives NaN (-inf - -inf), as
// the formula does in XLA.
func softmaxKernel(in *ir.Instr, x *Tensor) *Tensor {
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	out := NewTensor(in.Results[0].Type)
	dt := x.Type.DType
	logOut := in.Op == ir.OpLogSoftmax
	eachLine(x.Type.Dims(), axis, func(line []int) {
		m := math.Inf(-1)
		for _, p := range line {
			m = fmax(m, x.F[p])
		}
		s := 0.0
		for _, p := range line {
			s += math.Exp(x.F[p] - m)
		}
		for _, p := range line {
			var v float64
			if logOut {
				v = x.F[p] - m - math.Log(s)
			} else {
				v = math.Exp(x.F[p]-m) / s
			}
			out.F[p] = dt.RoundFloat(v)
		}
	})
	return out
}

// normKernel: layer_norm (x-mean)/√(var+eps)·scale+bias with the biased
// variance (the mean of squared deviations), or rms_norm x/√(mean(x²)+eps)·scale,
// both over the last axis.
func normKernel(in *ir.Instr, x, scale, bias *Tensor) *Tensor {
	eps := in.Attr.(*ir.EpsAttr).Eps
	out := NewTensor(in.Results[0].Type)
	dt := x.Type.DType
	dims := x.Type.Dims()
	n := int(dims[len(dims)-1])
	if n == 0 {
		return out
	}
	for r := 0; r < x.Len()/n; r++ {
		row := x.F[r*n : (r+1)*n]
		mean := 0.0
		if bias != nil {
			for _, v := range row {
				mean += v
			}
			mean /= float64(n)
		}
		sq := 0.0
		for _, v := range row {
			sq += (v - mean) * (v - mean)
		}
		inv := 1 / math.Sqrt(sq/float64(n)+eps)
		for i, v := range row {
			y := (v - mean) * inv * scale.F[i]
			if bias != nil {
				y += bias.F[i]
			}
			out.F[r*n+i] = dt.RoundFloat(y)
		}
	}
	return out
}
