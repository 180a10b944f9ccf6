package stablehlo

import (
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// hloName is the op a unary or binary elementwise op lowers to one to one:
// the op table's StableHLO column.
func hloName(op ir.Op) string { return op.Info().StableHLO }

// widened reports the ops that, on f16 and bf16, are computed in f32 between
// explicit converts: the transcendental ones (the op table's column) but
// sqrt. The contract is "compute in f32, round once"; XLA:CPU evaluates some
// of these natively in half precision with errors of several ulps (f16
// exponential_minus_one and logistic, measured on 4096 normal inputs: 639
// and 1418 results differed from the f32-then-round value). The ops left out
// (neg, abs, sqrt, floor, ceil, round, sign, + - * / rem, max, min) are exact
// or correctly rounded, and f32 has enough extra precision (24 >= 2*11+2
// bits) that rounding through f32 gives the same value.
func widened(op ir.Op) bool {
	return op.Info().Transcendental && op != ir.OpSqrt // IEEE sqrt is correctly rounded
}

func isHalf(d ir.DType) bool { return d == ir.F16 || d == ir.BF16 }

// unary lowers a unary elementwise op.
func (e *emitter) unary(op ir.Op, x hv) hv {
	d := x.t.DType
	switch {
	case op == ir.OpAbs && d.IsUnsigned():
		// StableHLO abs takes signed types only; |x| = x for unsigned.
		return x
	case op == ir.OpSign && d.IsUnsigned():
		// Likewise sign: 0 for 0, else 1, which is min(x, 1).
		return e.op2("stablehlo.minimum", x, e.iconst(x.t, 1))
	case d.IsComplex() && op == ir.OpCbrt:
		// XLA has no complex cbrt: the principal root exp(log(z)/3), and 0 for 0.
		root := e.op1("stablehlo.exponential", e.div(e.op1("stablehlo.log", x), e.fconst(x.t, 3)))
		return e.selectOp(e.compare("EQ", x, e.fconst(x.t, 0)), x, root)
	case d.IsComplex() && (op == ir.OpAbs || op == ir.OpReal || op == ir.OpImag):
		// A float result of the part type: the functional type says so.
		t := x.t.WithDType(d.ComplexPart())
		return e.def(t, hloName(op)+" ", x.ref, " : ", funcType([]hv{x}, []ir.Type{t}))
	case widened(op) && isHalf(d):
		return e.convert(e.unary(op, e.convert(x, ir.F32)), d)
	case (op == ir.OpPopcnt || op == ir.OpClz) && d.IsSubByte():
		return e.subByteBits(op, x)
	case strings.HasPrefix(hloName(op), "chlo."):
		// chlo ops print with a functional type: chlo.erf %x : T -> T.
		return e.def(x.t, hloName(op)+" ", x.ref, " : ", tensorType(x.t), " -> ", tensorType(x.t))
	}
	return e.op1(hloName(op), x)
}

// subByteBits lowers popcnt and clz of a sub-byte x in eight bits, on its
// pattern alone (its low bits, masked): XLA:CPU counted the bits of a
// negative i4's sign-extended container in a fused reduction (popcnt of
// -2 gave 7, not 3: oracle seed 100154). clz counts from the dtype's top
// bit: the eight-bit count less the bits above it.
func (e *emitter) subByteBits(op ir.Op, x hv) hv {
	d := x.t.DType
	w := e.convert(x, byteWide(d))
	w = e.op2("stablehlo.and", w, e.iconst(w.t, 1<<d.Bits()-1))
	r := e.op1(hloName(op), w)
	if op == ir.OpClz {
		r = e.sub(r, e.iconst(r.t, int64(8-d.Bits())))
	}
	return e.convert(r, d)
}

// binary lowers a binary elementwise op. safe says y is a constant with no
// element that needs a guard: no zero divisor for integer div and rem, no
// negative exponent for integer pow.
func (e *emitter) binary(op ir.Op, x, y hv, safe bool) hv {
	d := x.t.DType
	switch {
	case widened(op) && isHalf(d):
		return e.convert(e.binary(op, e.convert(x, ir.F32), e.convert(y, ir.F32), false), d)
	case (op == ir.OpDiv || op == ir.OpRem) && d.IsInt() && !safe:
		return e.guardedDivRem(op, x, y)
	case op == ir.OpPow && d.IsInt() && !safe:
		return e.intPow(x, y)
	case op == ir.OpComplex:
		t := x.t.WithDType(d.ComplexOf())
		return e.def(t, hloName(op)+" ", x.ref, ", ", y.ref, " : ", funcType([]hv{x, y}, []ir.Type{t}))
	}
	return e.op2(hloName(op), x, y)
}

// guardedDivRem lowers integer div and rem so that no element is ever divided
// by zero: select(y == 0, x/0 result, x op select(y == 0, 1, y)). At run time
// XLA:CPU already gives the contract's values (x/0 = -1, all ones unsigned;
// x%0 = x; INT_MIN/-1 = INT_MIN; INT_MIN%-1 = 0), but its constant folder
// evaluates divide and remainder on the host and dies of SIGFPE when a zero
// divisor is folded (checked for i8, i16, i32, i64, u8 and u32: a module with
// stablehlo.remainder of two constants holding a 0 crashes the process). With
// the guard the folded divisor has no zeros. INT_MIN/-1 folds without trouble.
func (e *emitter) guardedDivRem(op ir.Op, x, y hv) hv {
	zero := e.compare("EQ", y, e.iconst(y.t, 0))
	safe := e.selectOp(zero, e.iconst(y.t, 1), y)
	if op == ir.OpDiv {
		return e.selectOp(zero, e.iconst(x.t, -1), e.div(x, safe))
	}
	return e.selectOp(zero, x, e.op2("stablehlo.remainder", x, safe))
}

// intPow lowers integer pow as square-and-multiply over every bit of the
// exponent, which gives the contract's value: the exact power wrapped to the
// dtype. stablehlo.power is not usable here because XLA disagrees with itself:
// its CPU runtime uses only the low 6 bits of the exponent (3^64 = 1), its
// constant folder computes the full power, and its simplifier rewrites
// pow(x, -1) as 1/x (so 0^-1 = -1, and a folded integer 1/0 kills the process,
// see guardedDivRem). Negative exponents (signed types only) follow the
// contract: 1^y = 1, (-1)^y = -1 or 1 by the parity of y, anything else 0.
func (e *emitter) intPow(x, y hv) hv {
	d := x.t.DType
	zero, one := e.iconst(x.t, 0), e.iconst(x.t, 1)
	bits := d.Bits()
	exp := y
	if d.IsSigned() {
		bits-- // a non-negative exponent has a zero sign bit
		exp = e.op2("stablehlo.maximum", y, zero)
	}
	r, base := one, x
	for i := range bits {
		bit := e.compare("NE", e.op2("stablehlo.and", exp, e.iconst(x.t, 1<<i)), zero)
		r = e.selectOp(bit, e.mul(r, base), r)
		if i < bits-1 {
			base = e.mul(base, base)
		}
	}
	if !d.IsSigned() {
		return r
	}
	minusOne := e.iconst(x.t, -1)
	odd := e.compare("EQ", e.op2("stablehlo.and", y, one), one)
	negPow := e.selectOp(e.compare("EQ", x, minusOne), e.selectOp(odd, minusOne, one), zero)
	negPow = e.selectOp(e.compare("EQ", x, one), one, negPow)
	return e.selectOp(e.compare("LT", y, zero), negPow, r)
}

// safeOperand reports whether the second operand of a binary op is a constant
// that needs no guard: for div and rem no zero element; for integer pow every
// exponent in [0, 63], where XLA's runtime and its constant folder agree with
// each other and with the exact power.
func safeOperand(op ir.Op, v *ir.Value) bool {
	if v.Def == nil || v.Def.Op != ir.OpConstant {
		return false
	}
	l := v.Def.Attr.(*ir.ConstAttr).Value
	for i := 0; i < l.Len(); i++ {
		k := v.Type.DType.WrapInt(l.Int(i))
		if op == ir.OpPow && (k < 0 || k > 63) || op != ir.OpPow && k == 0 {
			return false
		}
	}
	return l.Len() > 0
}

var cmpDirs = [...]string{ir.CmpEQ: "EQ", ir.CmpNE: "NE", ir.CmpLT: "LT", ir.CmpLE: "LE", ir.CmpGT: "GT", ir.CmpGE: "GE"}

// compareSelect lowers compare, select and clamp.
func (e *emitter) compareSelect(in *ir.Instr, args []hv) hv {
	switch in.Op {
	case ir.OpCompare:
		return e.compare(cmpDirs[in.Attr.(*ir.CompareAttr).Dir], args[0], args[1])
	case ir.OpSelect:
		return e.selectOp(args[0], args[1], args[2])
	}
	return e.clamp(args[0], args[1], args[2])
}

// clamp lowers clamp %lo, %x, %hi as the contract writes it, min(max(x, lo), hi),
// with explicit maximum and minimum: NaN propagates from any of the three and
// -0 < +0, as ir's max and min do. stablehlo.clamp would say the same, but
// XLA's algebraic simplifier assumes lo <= hi for it: max(lo, clamp(lo, x, hi))
// is rewritten to clamp(lo, x, hi), which is wrong when lo > hi (checked:
// lo = 2, x = 1, hi = 0 gives 0 instead of 2).
func (e *emitter) clamp(lo, x, hi hv) hv {
	if lo.t.Rank() != x.t.Rank() {
		lo = e.broadcast(lo, x.t, []int64{})
	}
	if hi.t.Rank() != x.t.Rank() {
		hi = e.broadcast(hi, x.t, []int64{})
	}
	return e.op2("stablehlo.minimum", e.op2("stablehlo.maximum", x, lo), hi)
}

// convertOp lowers convert. XLA's convert is the contract: float to integer
// truncates toward zero, saturates at the integer's range and maps NaN to 0; to
// i1 means != 0; integers wrap. Converting f64 or an integer to f16 or bf16
// rounds through f32 in XLA:CPU (checked: f64 1+2^-8+2^-30 becomes bf16 1.0,
// not 1+2^-7; i32 2^24+2^16+1 becomes bf16 2^24, not 2^24+2^17), which is
// "every op on a half type computes in f32".
//
// To i1 is written x != 0, as JAX writes astype(bool): a NaN is true. XLA:CPU
// has a code generation bug on stablehlo.convert from bf16 to i1 (fused with
// other integer work it stops with "LLVM ERROR: Cannot select ... X86ISD::CMPP
// v16f32"); the comparison compiles.
//
// From i1 to a float is written select(p, 1, 0): XLA's simplifier rewrites
// x * convert(p) into select(p, x, 0), which turns NaN * 0 and inf * 0 into 0
// instead of NaN (checked); with a select there is no convert to match.
func (e *emitter) convertOp(x hv, t ir.Type) hv {
	if d := x.t.DType; d.IsComplex() && !t.DType.IsComplex() {
		// Complex to a real type keeps the real part, which the reference
		// executor then converts as a float (to i1: re != 0, the imaginary
		// part ignored); written out, so no backend has to agree on it.
		x = e.unary(ir.OpReal, x)
	}
	switch {
	case t.DType == ir.I1 && x.t.DType != ir.I1:
		return e.compare("NE", x, e.fconst(x.t, 0))
	case x.t.DType == ir.I1 && t.DType.IsFloat():
		return e.selectOp(x, e.fconst(t, 1), e.fconst(t, 0))
	}
	return e.convert(x, t.DType)
}
