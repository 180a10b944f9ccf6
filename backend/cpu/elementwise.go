package cpu

import (
	"fmt"
	"math"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Elementwise kernels: unary and binary ops, compare, select, clamp, convert.
// Float ops compute in float64 and round the result into the dtype. For f32,
// f16 and bf16 that equals computing in f32 and rounding (exactly so for + - *
// / sqrt, whose float64 result rounds to the correctly rounded f32; within an
// ulp for the transcendental functions). Integer ops compute in int64 and wrap.

var floatUnary = map[ir.Op]func(float64) float64{
	ir.OpNeg:      func(x float64) float64 { return -x },
	ir.OpAbs:      math.Abs,
	ir.OpExp:      math.Exp,
	ir.OpLog:      math.Log,
	ir.OpLog1p:    math.Log1p,
	ir.OpExpm1:    math.Expm1,
	ir.OpSqrt:     math.Sqrt,
	ir.OpRsqrt:    func(x float64) float64 { return 1 / math.Sqrt(x) },
	ir.OpTanh:     math.Tanh,
	ir.OpSigmoid:  sigmoid,
	ir.OpSin:      math.Sin,
	ir.OpCos:      math.Cos,
	ir.OpFloor:    math.Floor,
	ir.OpCeil:     math.Ceil,
	ir.OpRound:    math.RoundToEven,
	ir.OpSign:     floatSign,
	ir.OpErf:      math.Erf,
	ir.OpCbrt:     math.Cbrt,
	ir.OpTan:      math.Tan,
	ir.OpRoundAFZ: math.Round,
	ir.OpRelu:     func(x float64) float64 { return math.Max(x, 0) },
	ir.OpSilu:     func(x float64) float64 { return x * sigmoid(x) },
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// floatSign keeps NaN and signed zeros as they are (XLA: sign(-0) = -0).
func floatSign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x
}

// intUnary returns the integer form of op; the caller wraps the result.
func intUnary(op ir.Op, dt ir.DType) func(int64) int64 {
	if dt == ir.U64 {
		if f := u64Unary(op); f != nil {
			return f
		}
	}
	switch op {
	case ir.OpNeg:
		return func(x int64) int64 { return -x }
	case ir.OpAbs:
		return func(x int64) int64 {
			if x < 0 {
				return -x // abs(INT_MIN) wraps to INT_MIN, as in XLA
			}
			return x
		}
	case ir.OpSign:
		return func(x int64) int64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		}
	case ir.OpNot:
		if dt.IsBool() {
			return func(x int64) int64 { return 1 - x }
		}
		return func(x int64) int64 { return ^x }
	case ir.OpRelu:
		return func(x int64) int64 { return max(x, 0) }
	case ir.OpPopcnt, ir.OpClz:
		return bitCount(op, dt.Bits())
	}
	return nil
}

// u64Unary is the forms that differ for u64, whose int64 bit pattern is
// negative from 2^63 on: abs and relu are the identity, sign is 0 or 1.
func u64Unary(op ir.Op) func(int64) int64 {
	switch op {
	case ir.OpAbs, ir.OpRelu:
		return func(x int64) int64 { return x }
	case ir.OpSign:
		return func(x int64) int64 {
			if x != 0 {
				return 1
			}
			return 0
		}
	}
	return nil
}

// chunk is how many elements a kernel reads into float64 or int64 scratch at
// a time: small enough to stay in L1, large enough to amortise the calls.
const chunk = 512

// eachChunk calls fn for consecutive runs [i, i+m) covering n elements.
func eachChunk(n int, fn func(i, m int)) {
	for i := 0; i < n; i += chunk {
		fn(i, min(chunk, n-i))
	}
}

func unaryKernel(in *ir.Instr, x *backend.Buffer) (*backend.Buffer, error) {
	dt := x.Type().DType
	if dt.IsComplex() {
		return complexUnaryKernel(in, x)
	}
	out := backend.New(in.Results[0].Type)
	if dt.IsFloat() {
		f := floatUnary[in.Op]
		if f == nil {
			return nil, fmt.Errorf("%s is not defined on %s", in.Op, dt)
		}
		buf := make([]float64, chunk)
		eachChunk(x.Len(), func(i, m int) {
			s := buf[:m]
			x.ReadFloat64s(i, s)
			for k, v := range s {
				s[k] = f(v)
			}
			out.WriteFloat64s(i, s)
		})
		return out, nil
	}
	f := intUnary(in.Op, dt)
	if f == nil {
		return nil, fmt.Errorf("%s is not defined on %s", in.Op, dt)
	}
	buf := make([]int64, chunk)
	eachChunk(x.Len(), func(i, m int) {
		s := buf[:m]
		x.ReadInt64s(i, s)
		for k, v := range s {
			s[k] = f(v)
		}
		out.WriteInt64s(i, s)
	})
	return out, nil
}

var floatBinary = map[ir.Op]func(a, b float64) float64{
	ir.OpAdd: func(a, b float64) float64 { return a + b },
	ir.OpSub: func(a, b float64) float64 { return a - b },
	ir.OpMul: func(a, b float64) float64 { return a * b },
	ir.OpDiv: func(a, b float64) float64 { return a / b },
	ir.OpRem: math.Mod, // C fmod: the sign of a; x%0, inf%y are NaN; x%inf is x
	ir.OpPow: math.Pow,
	// fmax and fmin propagate NaN (also against an infinity) and order -0 below +0, as XLA does:
	// max(-0, +0) = +0 and min(-0, +0) = -0 in either operand order.
	ir.OpMax:   fmax,
	ir.OpMin:   fmin,
	ir.OpAtan2: math.Atan2, // atan2(x, y) = atan(x/y): the first operand is the numerator
}

// intBinary returns the integer form of op; the caller wraps the result.
func intBinary(op ir.Op, dt ir.DType) func(a, b int64) int64 {
	if dt == ir.U64 {
		if f := u64Binary(op); f != nil {
			return f
		}
	}
	switch op {
	case ir.OpAdd:
		return func(a, b int64) int64 { return a + b }
	case ir.OpSub:
		return func(a, b int64) int64 { return a - b }
	case ir.OpMul:
		return func(a, b int64) int64 { return a * b }
	case ir.OpDiv:
		return func(a, b int64) int64 {
			if b == 0 {
				return -1 // wraps to all ones for unsigned types
			}
			return a / b // INT_MIN / -1 wraps back to INT_MIN
		}
	case ir.OpRem:
		return func(a, b int64) int64 {
			if b == 0 {
				return a
			}
			return a % b // the sign of a; INT_MIN % -1 = 0
		}
	case ir.OpPow:
		return intPow(dt)
	case ir.OpMax:
		return func(a, b int64) int64 { return max(a, b) }
	case ir.OpMin:
		return func(a, b int64) int64 { return min(a, b) }
	case ir.OpAnd:
		return func(a, b int64) int64 { return a & b }
	case ir.OpOr:
		return func(a, b int64) int64 { return a | b }
	case ir.OpXor:
		return func(a, b int64) int64 { return a ^ b }
	case ir.OpShiftLeft, ir.OpShiftRightLogical, ir.OpShiftRightArithmetic:
		return shift(op, dt.Bits())
	}
	return nil
}

// u64Binary is the forms that must read u64 bit patterns as uint64: the
// other unsigned types hold non-negative int64s, on which the signed forms
// agree. Division by zero gives all ones and remainder by zero the dividend,
// as for the other integer types.
func u64Binary(op ir.Op) func(a, b int64) int64 {
	switch op {
	case ir.OpDiv:
		return func(a, b int64) int64 {
			if b == 0 {
				return -1
			}
			return int64(uint64(a) / uint64(b))
		}
	case ir.OpRem:
		return func(a, b int64) int64 {
			if b == 0 {
				return a
			}
			return int64(uint64(a) % uint64(b))
		}
	case ir.OpMax:
		return func(a, b int64) int64 { return int64(max(uint64(a), uint64(b))) }
	case ir.OpMin:
		return func(a, b int64) int64 { return int64(min(uint64(a), uint64(b))) }
	case ir.OpPow:
		return func(x, y int64) int64 {
			r, ux := uint64(1), uint64(x)
			for uy := uint64(y); uy > 0; uy >>= 1 {
				if uy&1 == 1 {
					r *= ux
				}
				ux *= ux
			}
			return int64(r)
		}
	}
	return nil
}

// intPow is the contract's integer pow: for a non-negative exponent the exact
// power wrapped to the dtype (square-and-multiply over every exponent bit; int64
// products wrap mod 2^64, which agrees with any narrower width); for a negative
// exponent (signed types) 1^y = 1, (-1)^y = -1 or 1 by parity, and 0 otherwise.
// XLA's own stablehlo.power is not self-consistent for integers (its CPU runtime
// keeps only 6 exponent bits), so the lowering spells out the same algorithm.
func intPow(dt ir.DType) func(x, y int64) int64 {
	return func(x, y int64) int64 {
		if y < 0 {
			switch x {
			case 1:
				return 1
			case -1:
				if y%2 == 0 {
					return 1
				}
				return -1
			}
			return 0
		}
		r := int64(1)
		for ; y > 0; y >>= 1 {
			if y&1 == 1 {
				r *= x
			}
			x *= x
		}
		return dt.WrapInt(r)
	}
}

func binaryKernel(in *ir.Instr, a, b *backend.Buffer) (*backend.Buffer, error) {
	dt := a.Type().DType
	if dt.IsComplex() || in.Op == ir.OpComplex {
		return complexBinaryKernel(in, a, b)
	}
	out := backend.New(in.Results[0].Type)
	if dt.IsFloat() {
		f := floatBinary[in.Op]
		if f == nil {
			return nil, fmt.Errorf("%s is not defined on %s", in.Op, dt)
		}
		bufA, bufB := make([]float64, chunk), make([]float64, chunk)
		eachChunk(a.Len(), func(i, m int) {
			sa, sb := bufA[:m], bufB[:m]
			a.ReadFloat64s(i, sa)
			b.ReadFloat64s(i, sb)
			for k, v := range sa {
				sa[k] = f(v, sb[k])
			}
			out.WriteFloat64s(i, sa)
		})
		return out, nil
	}
	f := intBinary(in.Op, dt)
	if f == nil {
		return nil, fmt.Errorf("%s is not defined on %s", in.Op, dt)
	}
	bufA, bufB := make([]int64, chunk), make([]int64, chunk)
	eachChunk(a.Len(), func(i, m int) {
		sa, sb := bufA[:m], bufB[:m]
		a.ReadInt64s(i, sa)
		b.ReadInt64s(i, sb)
		for k, v := range sa {
			sa[k] = f(v, sb[k])
		}
		out.WriteInt64s(i, sa)
	})
	return out, nil
}

func compareKernel(in *ir.Instr, a, b *backend.Buffer) (*backend.Buffer, error) {
	attr, ok := in.Attr.(*ir.CompareAttr)
	if !ok {
		return nil, fmt.Errorf("compare has no direction")
	}
	out := backend.New(in.Results[0].Type)
	if a.Type().DType.IsComplex() {
		return complexCompareKernel(attr.Dir, out, a, b)
	}
	res := out.Bytes() // i1: one byte, 0 or 1
	cmp := func(lt, eq bool) bool {
		switch attr.Dir {
		case ir.CmpEQ:
			return eq
		case ir.CmpNE:
			return !eq
		case ir.CmpLT:
			return lt
		case ir.CmpLE:
			return lt || eq
		case ir.CmpGT:
			return !lt && !eq
		}
		return !lt
	}
	set := func(i int, r bool) {
		if r {
			res[i] = 1
		}
	}
	if a.Type().DType.IsFloatValued() {
		bufA, bufB := make([]float64, chunk), make([]float64, chunk)
		eachChunk(a.Len(), func(i, m int) {
			sa, sb := bufA[:m], bufB[:m]
			a.ReadFloat64s(i, sa)
			b.ReadFloat64s(i, sb)
			for k, x := range sa {
				y := sb[k]
				if math.IsNaN(x) || math.IsNaN(y) {
					set(i+k, attr.Dir == ir.CmpNE) // NaN is unordered: only ne holds
				} else {
					set(i+k, cmp(x < y, x == y))
				}
			}
		})
		return out, nil
	}
	less := func(x, y int64) bool { return x < y }
	if a.Type().DType == ir.U64 {
		less = func(x, y int64) bool { return uint64(x) < uint64(y) }
	}
	bufA, bufB := make([]int64, chunk), make([]int64, chunk)
	eachChunk(a.Len(), func(i, m int) {
		sa, sb := bufA[:m], bufB[:m]
		a.ReadInt64s(i, sa)
		b.ReadInt64s(i, sb)
		for k, x := range sa {
			set(i+k, cmp(less(x, sb[k]), x == sb[k]))
		}
	})
	return out, nil
}

// selectKernel copies each element's bytes from a or b.
func selectKernel(in *ir.Instr, p, a, b *backend.Buffer) *backend.Buffer {
	out := backend.New(in.Results[0].Type)
	pred := p.Bytes()
	scalar := p.Type().Rank() == 0
	size := out.Type().DType.Size()
	dst, as, bs := out.Bytes(), a.Bytes(), b.Bytes()
	for i := 0; i < out.Len(); i++ {
		src := bs
		if (scalar && pred[0] != 0) || (!scalar && pred[i] != 0) {
			src = as
		}
		copy(dst[i*size:(i+1)*size], src[i*size:(i+1)*size])
	}
	return out
}

// clampKernel is min(max(x, lo), hi), so a NaN anywhere gives NaN and lo > hi gives hi.
func clampKernel(in *ir.Instr, lo, x, hi *backend.Buffer) *backend.Buffer {
	out := backend.New(in.Results[0].Type)
	at := func(t *backend.Buffer, i int) int {
		if t.Type().Rank() == 0 {
			return 0
		}
		return i
	}
	float := x.Type().DType.IsFloat()
	imax, imin := func(a, b int64) int64 { return max(a, b) }, func(a, b int64) int64 { return min(a, b) }
	if x.Type().DType == ir.U64 {
		imax, imin = u64Binary(ir.OpMax), u64Binary(ir.OpMin)
	}
	for i := 0; i < out.Len(); i++ {
		if float {
			out.SetFloat64(i, fmin(fmax(x.Float64At(i), lo.Float64At(at(lo, i))), hi.Float64At(at(hi, i))))
		} else {
			out.SetInt64(i, imin(imax(x.Int64At(i), lo.Int64At(at(lo, i))), hi.Int64At(at(hi, i))))
		}
	}
	return out
}

// convertKernel reads elements as float64 (float sources) or int64 and
// stores them into the result's dtype, which converts as the semantics
// decisions say: f64 to f16 or bf16 goes through f32 (as XLA:CPU does),
// floats to integers truncate and saturate, anything to i1 is != 0.
func convertKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	if t := in.Results[0].Type; t.DType.IsComplex() || x.Type().DType.IsComplex() {
		return complexConvert(t, x)
	}
	out := backend.New(in.Results[0].Type)
	if to := out.Type().DType; x.Type().DType == ir.U64 && to.IsFloat() {
		for i := range x.Len() { // from 2^63 on the bit pattern is negative: round the uint64
			out.SetFloat64(i, backend.U64ToFloat(x.Int64At(i), to))
		}
		return out
	}
	if x.Type().DType.IsFloatValued() {
		buf := make([]float64, chunk)
		eachChunk(x.Len(), func(i, m int) {
			x.ReadFloat64s(i, buf[:m])
			out.WriteFloat64s(i, buf[:m])
		})
		return out
	}
	buf := make([]int64, chunk)
	eachChunk(x.Len(), func(i, m int) {
		x.ReadInt64s(i, buf[:m])
		out.WriteInt64s(i, buf[:m])
	})
	return out
}

// fmax is XLA's maximum: NaN if either operand is NaN, and -0 below +0. Go's
// math.Max alone is not enough: math.Max(+Inf, NaN) is +Inf.
func fmax(a, b float64) float64 {
	if a != a || b != b {
		return math.NaN()
	}
	return math.Max(a, b)
}

// fmin is XLA's minimum: NaN if either operand is NaN, and -0 below +0.
func fmin(a, b float64) float64 {
	if a != a || b != b {
		return math.NaN()
	}
	return math.Min(a, b)
}
