package cpu

import (
	"fmt"
	"math"

	"github.com/tpucc/tpucc/ir"
)

// Elementwise kernels: unary and binary ops, compare, select, clamp, convert.
// Float ops compute in float64 and round the result into the dtype. For f32,
// f16 and bf16 that equals computing in f32 and rounding (exactly so for + - *
// / sqrt, whose float64 result rounds to the correctly rounded f32; within an
// ulp for the transcendental functions). Integer ops compute in int64 and wrap.

var floatUnary = map[ir.Op]func(float64) float64{
	ir.OpNeg:     func(x float64) float64 { return -x },
	ir.OpAbs:     math.Abs,
	ir.OpExp:     math.Exp,
	ir.OpLog:     math.Log,
	ir.OpLog1p:   math.Log1p,
	ir.OpExpm1:   math.Expm1,
	ir.OpSqrt:    math.Sqrt,
	ir.OpRsqrt:   func(x float64) float64 { return 1 / math.Sqrt(x) },
	ir.OpTanh:    math.Tanh,
	ir.OpSigmoid: sigmoid,
	ir.OpSin:     math.Sin,
	ir.OpCos:     math.Cos,
	ir.OpFloor:   math.Floor,
	ir.OpCeil:    math.Ceil,
	ir.OpRound:   math.RoundToEven,
	ir.OpSign:    floatSign,
	ir.OpErf:     math.Erf,
	ir.OpRelu:    func(x float64) float64 { return math.Max(x, 0) },
	ir.OpSilu:    func(x float64) float64 { return x * sigmoid(x) },
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
	}
	return nil
}

func unaryKernel(in *ir.Instr, x *Tensor) (*Tensor, error) {
	out := NewTensor(in.Results[0].Type)
	dt := x.Type.DType
	if dt.IsFloat() {
		f := floatUnary[in.Op]
		if f == nil {
			return nil, fmt.Errorf("%s is not defined on %s", in.Op, dt)
		}
		for i, v := range x.F {
			out.F[i] = dt.RoundFloat(f(v))
		}
		return out, nil
	}
	f := intUnary(in.Op, dt)
	if f == nil {
		return nil, fmt.Errorf("%s is not defined on %s", in.Op, dt)
	}
	for i, v := range x.I {
		out.I[i] = dt.WrapInt(f(v))
	}
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

func binaryKernel(in *ir.Instr, a, b *Tensor) (*Tensor, error) {
	out := NewTensor(in.Results[0].Type)
	dt := a.Type.DType
	if dt.IsFloat() {
		f := floatBinary[in.Op]
		if f == nil {
			return nil, fmt.Errorf("%s is not defined on %s", in.Op, dt)
		}
		for i, v := range a.F {
			out.F[i] = dt.RoundFloat(f(v, b.F[i]))
		}
		return out, nil
	}
	f := intBinary(in.Op, dt)
	if f == nil {
		return nil, fmt.Errorf("%s is not defined on %s", in.Op, dt)
	}
	for i, v := range a.I {
		out.I[i] = dt.WrapInt(f(v, b.I[i]))
	}
	return out, nil
}

func compareKernel(in *ir.Instr, a, b *Tensor) (*Tensor, error) {
	attr, ok := in.Attr.(*ir.CompareAttr)
	if !ok {
		return nil, fmt.Errorf("compare has no direction")
	}
	out := NewTensor(in.Results[0].Type)
	n := out.Len()
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
	for i := 0; i < n; i++ {
		var r bool
		if a.Type.DType.IsFloat() {
			x, y := a.F[i], b.F[i]
			if math.IsNaN(x) || math.IsNaN(y) {
				r = attr.Dir == ir.CmpNE // NaN is unordered: only ne holds
			} else {
				r = cmp(x < y, x == y)
			}
		} else {
			r = cmp(a.I[i] < b.I[i], a.I[i] == b.I[i])
		}
		if r {
			out.I[i] = 1
		}
	}
	return out, nil
}

func selectKernel(in *ir.Instr, p, a, b *Tensor) *Tensor {
	out := NewTensor(in.Results[0].Type)
	scalar := p.Type.Rank() == 0
	pick := func(i int) bool {
		if scalar {
			return p.I[0] != 0
		}
		return p.I[i] != 0
	}
	for i := 0; i < out.Len(); i++ {
		src := b
		if pick(i) {
			src = a
		}
		if out.Type.DType.IsFloat() {
			out.F[i] = src.F[i]
		} else {
			out.I[i] = src.I[i]
		}
	}
	return out
}

// clampKernel is min(max(x, lo), hi), so a NaN anywhere gives NaN and lo > hi gives hi.
func clampKernel(in *ir.Instr, lo, x, hi *Tensor) *Tensor {
	out := NewTensor(in.Results[0].Type)
	at := func(t *Tensor, i int) int {
		if t.Type.Rank() == 0 {
			return 0
		}
		return i
	}
	for i := 0; i < out.Len(); i++ {
		if x.Type.DType.IsFloat() {
			out.F[i] = fmin(fmax(x.F[i], lo.F[at(lo, i)]), hi.F[at(hi, i)])
		} else {
			out.I[i] = min(max(x.I[i], lo.I[at(lo, i)]), hi.I[at(hi, i)])
		}
	}
	return out
}

func convertKernel(in *ir.Instr, x *Tensor) *Tensor {
	out := NewTensor(in.Results[0].Type)
	from, to := x.Type.DType, out.Type.DType
	for i := 0; i < out.Len(); i++ {
		switch {
		case from.IsFloat() && to.IsFloat():
			// f64 to f16/bf16 goes through f32, as XLA:CPU does (RoundFloat).
			out.F[i] = to.RoundFloat(x.F[i])
		case from.IsFloat():
			out.I[i] = floatToInt(x.F[i], to)
		case to.IsFloat():
			out.F[i] = intToFloat(x.I[i], to)
		default:
			out.I[i] = to.WrapInt(x.I[i]) // to i1 means != 0
		}
	}
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
