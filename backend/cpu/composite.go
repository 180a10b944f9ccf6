package cpu

import (
	"math"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Composite ops compute in float64 from the operand values and round once into
// the dtype at the end: for f16 and bf16 that is the contract's "compute in
// f32, round once", only more precise. relu and silu are elementwise and live
// in floatUnary and intUnary.

// geluKernel: exact 0.5·x·(1+erf(x/√2)); approximate
// 0.5·x·(1+tanh(√(2/π)·(x+0.044715·x³))).
func geluKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	approx := in.Attr.(*ir.GeluAttr).Approximate
	out := backend.New(in.Results[0].Type)
	c := math.Sqrt(2 / math.Pi)
	buf := make([]float64, chunk)
	eachChunk(x.Len(), func(i, m int) {
		s := buf[:m]
		x.ReadFloat64s(i, s)
		for k, v := range s {
			if approx {
				s[k] = 0.5 * v * (1 + math.Tanh(c*(v+0.044715*v*v*v)))
			} else {
				s[k] = 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
			}
		}
		out.WriteFloat64s(i, s)
	})
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
func softmaxKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	out := backend.New(in.Results[0].Type)
	logOut := in.Op == ir.OpLogSoftmax
	var vals []float64
	eachLine(x.Type().Dims(), axis, func(line []int) {
		vals = grow(vals, len(line))
		contiguous := len(line) > 0 && line[len(line)-1]-line[0] == len(line)-1
		if contiguous { // the last axis: one chunk read and write
			x.ReadFloat64s(line[0], vals)
		} else {
			for k, p := range line {
				vals[k] = x.Float64At(p)
			}
		}
		m := math.Inf(-1)
		for _, v := range vals {
			m = fmax(m, v)
		}
		s := 0.0
		for _, v := range vals {
			s += math.Exp(v - m)
		}
		for k, v := range vals {
			if logOut {
				vals[k] = v - m - math.Log(s)
			} else {
				vals[k] = math.Exp(v-m) / s
			}
		}
		if contiguous {
			out.WriteFloat64s(line[0], vals)
			return
		}
		for k, p := range line {
			out.SetFloat64(p, vals[k])
		}
	})
	return out
}

// normKernel: layer_norm (x-mean)/√(var+eps)·scale+bias with the biased
// variance (the mean of squared deviations), or rms_norm x/√(mean(x²)+eps)·scale,
// both over the last axis.
func normKernel(in *ir.Instr, x, scale, bias *backend.Buffer) *backend.Buffer {
	eps := in.Attr.(*ir.EpsAttr).Eps
	out := backend.New(in.Results[0].Type)
	dims := x.Type().Dims()
	n := int(dims[len(dims)-1])
	if n == 0 {
		return out
	}
	sc, bi, row, res := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	scale.ReadFloat64s(0, sc)
	if bias != nil {
		bias.ReadFloat64s(0, bi)
	}
	for r := 0; r < x.Len()/n; r++ {
		x.ReadFloat64s(r*n, row)
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
			y := (v - mean) * inv * sc[i]
			if bias != nil {
				y += bi[i]
			}
			res[i] = y
		}
		out.WriteFloat64s(r*n, res)
	}
	return out
}
