package cpu

import (
	"math"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// floatLayout is a float dtype's bit layout: total, exponent and mantissa bits.
type floatLayout struct{ bits, exp, man uint }

var floatLayouts = map[ir.DType]floatLayout{
	ir.F64: {64, 11, 52}, ir.F32: {32, 8, 23}, ir.F16: {16, 5, 10}, ir.BF16: {16, 8, 7},
}

// reducePrecisionKernel rounds each element on its own dtype's bit pattern,
// as XLA does: the mantissa to nearest even at mantissa_bits, then an
// exponent beyond exponent_bits' range to ±inf and one at or below its
// least normal exponent to ±0; NaN is kept, or is ±inf when no mantissa
// bit is left.
func reducePrecisionKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	a := in.Attr.(*ir.ReducePrecisionAttr)
	out := backend.New(in.Results[0].Type)
	dt := x.Type().DType
	l := floatLayouts[dt]
	for i := 0; i < x.Len(); i++ {
		v := x.Float64At(i)
		r := fromBits(dt, reduceBits(toBits(dt, v), l, uint(min(a.ExponentBits, 64)), uint(min(a.MantissaBits, 64))))
		switch {
		case math.IsNaN(v) && a.MantissaBits > 0:
			r = v
		case math.IsNaN(v): // no mantissa bit left to hold a NaN
			r = math.Copysign(math.Inf(1), v)
		}
		out.SetFloat64(i, r)
	}
	return out
}

func reduceBits(x uint64, l floatLayout, exp, man uint) uint64 {
	if man < l.man {
		last := uint64(1) << (l.man - man) // the lowest mantissa bit kept
		bias := last>>1 - 1 + (x&last)>>(l.man-man)
		x = (x + bias) &^ (last - 1)
	}
	if exp < l.exp {
		sign := x & (1 << (l.bits - 1))
		expMask := (uint64(1)<<l.exp - 1) << l.man
		srcBias := uint64(1)<<(l.exp-1) - 1
		dstBias := uint64(1)<<(exp-1) - 1
		e := x & expMask
		switch {
		case e > (srcBias+dstBias)<<l.man:
			x = sign | expMask
		case e <= (srcBias-dstBias)<<l.man:
			x = sign
		}
	}
	return x & (1<<l.bits - 1) // a carry out of a 16- or 32-bit pattern
}

func toBits(dt ir.DType, v float64) uint64 {
	switch dt {
	case ir.F64:
		return math.Float64bits(v)
	case ir.F16:
		return uint64(ir.Float32ToF16(float32(v)))
	case ir.BF16:
		return uint64(ir.Float32ToBF16(float32(v)))
	}
	return uint64(math.Float32bits(float32(v)))
}

func fromBits(dt ir.DType, b uint64) float64 {
	switch dt {
	case ir.F64:
		return math.Float64frombits(b)
	case ir.F16:
		return float64(ir.F16ToFloat32(uint16(b)))
	case ir.BF16:
		return float64(ir.BF16ToFloat32(uint16(b)))
	}
	return float64(math.Float32frombits(uint32(b)))
}
