package cpu

import (
	"fmt"
	"math"
	"math/cmplx"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Complex kernels. c64 and c128 elements are read as complex128, computed on
// and stored back, which rounds both parts of a c64 result to f32 once (as
// the float kernels compute f32 in float64). The functions are the
// principal branches StableHLO's specification names: sqrt, log, pow and
// cbrt take the argument in (-pi, pi].

var complexUnary = map[ir.Op]func(complex128) complex128{
	ir.OpNeg:     func(z complex128) complex128 { return -z },
	ir.OpExp:     cmplx.Exp,
	ir.OpLog:     cmplx.Log,
	ir.OpLog1p:   complexLog1p,
	ir.OpExpm1:   complexExpm1,
	ir.OpSqrt:    cmplx.Sqrt,
	ir.OpRsqrt:   func(z complex128) complex128 { return 1 / cmplx.Sqrt(z) },
	ir.OpTanh:    cmplx.Tanh,
	ir.OpSigmoid: func(z complex128) complex128 { return 1 / (1 + cmplx.Exp(-z)) },
	ir.OpSin:     cmplx.Sin,
	ir.OpCos:     cmplx.Cos,
	ir.OpSign:    complexSign,
	ir.OpCbrt:    complexCbrt,
}

var complexBinary = map[ir.Op]func(a, b complex128) complex128{
	ir.OpAdd:   func(a, b complex128) complex128 { return a + b },
	ir.OpSub:   func(a, b complex128) complex128 { return a - b },
	ir.OpMul:   func(a, b complex128) complex128 { return a * b },
	ir.OpDiv:   func(a, b complex128) complex128 { return a / b },
	ir.OpPow:   cmplx.Pow,
	ir.OpAtan2: complexAtan2,
}

// complexSign is z/|z|: 0 stays 0 (either signed zero part kept), and a NaN
// in either part makes both parts NaN.
func complexSign(z complex128) complex128 {
	switch {
	case math.IsNaN(real(z)) || math.IsNaN(imag(z)):
		return complex(math.NaN(), math.NaN())
	case z == 0:
		return z
	}
	a := cmplx.Abs(z)
	return complex(real(z)/a, imag(z)/a)
}

// complexCbrt is the principal cube root exp(log(z)/3); cbrt(0) = 0.
func complexCbrt(z complex128) complex128 {
	if z == 0 {
		return z
	}
	return cmplx.Exp(cmplx.Log(z) / 3)
}

// complexLog1p is log(1+z) without the cancellation of forming 1+z near 0:
// |1+z|^2 = 1 + (2x + x^2 + y^2).
func complexLog1p(z complex128) complex128 {
	x, y := real(z), imag(z)
	return complex(0.5*math.Log1p(2*x+x*x+y*y), math.Atan2(y, 1+x))
}

// complexExpm1 is e^z - 1 without cancellation near 0: the real part is
// expm1(x)cos(y) - 2sin^2(y/2).
func complexExpm1(z complex128) complex128 {
	x, y := real(z), imag(z)
	s := math.Sin(y / 2)
	return complex(math.Expm1(x)*math.Cos(y)-2*s*s, math.Exp(x)*math.Sin(y))
}

// complexAtan2 is the specification's atan2 for complex operands,
// -i * log((x + i*y) / sqrt(x^2 + y^2)) for atan2(y, x).
func complexAtan2(y, x complex128) complex128 {
	return -1i * cmplx.Log((x+1i*y)/cmplx.Sqrt(x*x+y*y))
}

// complexChunk is how many elements the complex kernels read at a time,
// into fixed arrays on the stack (a few KiB, as the float kernels' chunks).
const complexChunk = 128

// mapComplex sets out[i] = f(a[i], b[i]) (b may be nil: f then gets 0).
func mapComplex(out, a, b *backend.Buffer, f func(x, y complex128) complex128) {
	var sa, sb, sr [complexChunk]complex128
	n := out.Len()
	for i := 0; i < n; i += complexChunk {
		m := min(complexChunk, n-i)
		a.ReadComplex128s(i, sa[:m])
		if b != nil {
			b.ReadComplex128s(i, sb[:m])
		}
		for k := range m {
			sr[k] = f(sa[k], sb[k])
		}
		out.WriteComplex128s(i, sr[:m])
	}
}

// mapPart sets out[i] = f(x[i]) for a real result of a complex operand.
func mapPart(out, x *backend.Buffer, f func(complex128) float64) {
	var sx [complexChunk]complex128
	var sr [complexChunk]float64
	n := out.Len()
	for i := 0; i < n; i += complexChunk {
		m := min(complexChunk, n-i)
		x.ReadComplex128s(i, sx[:m])
		for k := range m {
			sr[k] = f(sx[k])
		}
		out.WriteFloat64s(i, sr[:m])
	}
}

// complexUnaryKernel computes a unary op on a complex operand; abs, real and
// imag give a float of the part type (the result type says which).
func complexUnaryKernel(in *ir.Instr, x *backend.Buffer) (*backend.Buffer, error) {
	t := in.Results[0].Type
	var part func(complex128) float64
	switch in.Op {
	case ir.OpAbs:
		part = cmplx.Abs
	case ir.OpReal:
		part = func(z complex128) float64 { return real(z) }
	case ir.OpImag:
		part = func(z complex128) float64 { return imag(z) }
	}
	out := backend.New(t)
	if part != nil {
		mapPart(out, x, part)
		return out, nil
	}
	f := complexUnary[in.Op]
	if f == nil {
		return nil, fmt.Errorf("%s is not defined on %s", in.Op, x.Type().DType)
	}
	mapComplex(out, x, nil, func(z, _ complex128) complex128 { return f(z) })
	return out, nil
}

// complexBinaryKernel computes a binary op on complex operands, or complex
// on two float ones (a float buffer reads with imaginary part 0).
func complexBinaryKernel(in *ir.Instr, a, b *backend.Buffer) (*backend.Buffer, error) {
	out := backend.New(in.Results[0].Type)
	f := complexBinary[in.Op]
	if in.Op == ir.OpComplex {
		f = func(re, im complex128) complex128 { return complex(real(re), real(im)) }
	}
	if f == nil {
		return nil, fmt.Errorf("%s is not defined on %s", in.Op, a.Type().DType)
	}
	mapComplex(out, a, b, f)
	return out, nil
}

// complexCompareKernel is eq or ne of complex elements: equal when both
// parts are (so NaN in either part is unequal, and -0 equals +0).
func complexCompareKernel(dir ir.CmpDir, out, a, b *backend.Buffer) (*backend.Buffer, error) {
	if dir != ir.CmpEQ && dir != ir.CmpNE {
		return nil, fmt.Errorf("compare of %s values is eq or ne only", a.Type().DType)
	}
	res := out.Bytes()
	for i := range res {
		eq := a.Complex128At(i) == b.Complex128At(i)
		if eq == (dir == ir.CmpEQ) {
			res[i] = 1
		}
	}
	return out, nil
}

// complexConvert converts to or from a complex dtype: a real source gets
// imaginary part 0, a real result keeps the real part (converted as a float
// is), and complex to complex rounds both parts.
func complexConvert(t ir.Type, x *backend.Buffer) *backend.Buffer {
	if !t.DType.IsComplex() {
		out := backend.New(t)
		buf := make([]float64, chunk)
		eachChunk(x.Len(), func(i, m int) {
			x.ReadFloat64s(i, buf[:m]) // the real part
			out.WriteFloat64s(i, buf[:m])
		})
		return out
	}
	out := backend.New(t)
	if !x.Type().DType.IsComplex() && !x.Type().DType.IsFloatValued() {
		for i := range out.Len() {
			out.SetInt64(i, x.Int64At(i))
		}
		return out
	}
	mapComplex(out, x, nil, func(z, _ complex128) complex128 { return z })
	return out
}

// complexReduce is reduce_sum or reduce_prod of a complex operand: sums
// accumulate in complex128 and round once; products round into the dtype
// after every step, as the float reductions do.
func complexReduce(in *ir.Instr, x *backend.Buffer, drop []bool) *backend.Buffer {
	out := backend.New(in.Results[0].Type)
	dt := x.Type().DType
	init, step := complex128(0), func(s, v complex128) complex128 { return s + v }
	if in.Op == ir.OpReduceProd {
		init, step = 1, func(s, v complex128) complex128 { return dt.RoundComplex(s * v) }
	}
	acc := make([]complex128, out.Len())
	for i := range acc {
		acc[i] = init
	}
	var row []complex128
	reduceRows(x.Type().Dims(), drop, func(i, o, st, n int) {
		row = grow(row, n)
		x.ReadComplex128s(i, row)
		for k, v := range row {
			acc[o+k*st] = step(acc[o+k*st], v)
		}
	})
	out.WriteComplex128s(0, acc)
	return out
}
