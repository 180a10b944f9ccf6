package stablehlo

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// The Lanczos approximation (g = 7, n = 9) that CHLO's legalisation of
// chlo.lgamma uses, the constants as it writes them: XLA runs it, and
// jax.export writes it in the op's place.
const lanczosG, lanczosBase = 7.0, 0.99999999999980993

var lanczosCoefs = []float64{676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
	12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7}

// lgamma maps chlo.lgamma, log|Γ(x)|, as CHLO's legalisation expands it
// (f16 and bf16 through f32), so the numbers are XLA's.
func (bd *builder) lgamma(o *op, args []*ir.Value) *ir.Value {
	return bd.realFloat(o, args, func(x *ir.Value) *ir.Value { return bd.lgammaOf(o, x) })
}

// lgammaOf is Lanczos' lgamma(z+1) for z = x-1 at x >= 0.5, and Euler's
// reflection log π - log|sin πx| - lgamma(1-x) below, with |sin πx| taken
// at x's fractional part folded into [0, 0.5]; ±inf gives +inf.
func (bd *builder) lgammaOf(o *op, x *ir.Value) *ir.Value {
	k, half, one, reflect, z := bd.lanczosArg(o, x)
	c, un, bin, sel, cmp := k.c, k.un, k.bin, k.sel, k.cmp
	a := c(lanczosBase)
	for i, k := range lanczosCoefs {
		a = bin(ir.OpAdd, a, bin(ir.OpDiv, c(k), bin(ir.OpAdd, z, c(float64(i+1)))))
	}
	// log t = log(g + 0.5 + z) as log(g + 0.5) + log1p(z / (g + 0.5)), and
	// (z + 0.5) log t - t as (z + 0.5 - t / log t) log t, which does not overflow.
	gh := c(lanczosG + 0.5)
	t := bin(ir.OpAdd, gh, z)
	logT := bin(ir.OpAdd, c(math.Log(lanczosG+0.5)), un(ir.OpLog1p, bin(ir.OpDiv, z, gh)))
	r := bin(ir.OpMul, bin(ir.OpSub, bin(ir.OpAdd, z, half), bin(ir.OpDiv, t, logT)), logT)
	lg := bin(ir.OpAdd, bin(ir.OpAdd, c((math.Log(2)+math.Log(math.Pi))/2), r), un(ir.OpLog, a))
	absX := un(ir.OpAbs, x)
	frac := bin(ir.OpSub, absX, un(ir.OpFloor, absX))
	frac = sel(cmp(ir.CmpLT, half, frac), bin(ir.OpSub, one, frac), frac)
	denom := un(ir.OpLog, un(ir.OpSin, bin(ir.OpMul, c(math.Pi), frac)))
	refl := bin(ir.OpSub, bin(ir.OpSub, c(math.Log(math.Pi)), denom), lg)
	// A pole (denom = -inf) gives +inf rather than -inf - inf.
	finite := cmp(ir.CmpLT, un(ir.OpAbs, denom), c(math.Inf(1)))
	refl = sel(finite, refl, un(ir.OpNeg, denom))
	res := sel(reflect, refl, lg)
	inf := c(math.Inf(1))
	return sel(cmp(ir.CmpEQ, un(ir.OpAbs, x), inf), inf, res)
}

// digamma maps chlo.digamma, ψ(x) = d/dx log Γ(x) (the gradient of
// lgamma), as CHLO's legalisation expands it (f16 and bf16 through f32).
func (bd *builder) digamma(o *op, args []*ir.Value) *ir.Value {
	return bd.realFloat(o, args, func(x *ir.Value) *ir.Value { return bd.digammaOf(o, x) })
}

// digammaOf is the derivative of lgammaOf's Lanczos sum, log t + num/denom
// - g/t, with the reflection ψ(x) - π/tan(πx) below 0.5 (taken at x plus
// |floor(x + 0.5)|, which has the same tangent); NaN at 0, -1, -2, ...
func (bd *builder) digammaOf(o *op, x *ir.Value) *ir.Value {
	k, half, _, reflect, z := bd.lanczosArg(o, x)
	c, un, bin, sel, cmp := k.c, k.un, k.bin, k.sel, k.cmp
	num, denom := c(0), c(lanczosBase)
	for i, k := range lanczosCoefs {
		zi := bin(ir.OpAdd, z, c(float64(i+1)))
		num = bin(ir.OpSub, num, bin(ir.OpDiv, c(k), bin(ir.OpMul, zi, zi)))
		denom = bin(ir.OpAdd, denom, bin(ir.OpDiv, c(k), zi))
	}
	gh := c(lanczosG + 0.5)
	t := bin(ir.OpAdd, gh, z)
	logT := bin(ir.OpAdd, c(math.Log(lanczosG+0.5)), un(ir.OpLog1p, bin(ir.OpDiv, z, gh)))
	y := bin(ir.OpSub, bin(ir.OpAdd, logT, bin(ir.OpDiv, num, denom)), bin(ir.OpDiv, c(lanczosG), t))
	reduced := bin(ir.OpAdd, x, un(ir.OpAbs, un(ir.OpFloor, bin(ir.OpAdd, x, half))))
	pix := bin(ir.OpMul, c(math.Pi), reduced)
	refl := bin(ir.OpSub, y, bin(ir.OpDiv, bin(ir.OpMul, c(math.Pi), un(ir.OpCos, pix)), un(ir.OpSin, pix)))
	res := sel(reflect, refl, y)
	pole := bin(ir.OpAnd, cmp(ir.CmpLE, x, c(0)), cmp(ir.CmpEQ, x, un(ir.OpFloor, x)))
	return sel(pole, c(math.NaN()), res)
}

// lanczosArg is the start of lgammaOf and digammaOf: whether x reflects
// (x < 0.5), and the Lanczos argument z (-x where it does, else x - 1).
func (bd *builder) lanczosArg(o *op, x *ir.Value) (k kit, half, one, reflect, z *ir.Value) {
	k = kit{bd, o, x.Type}
	half, one = k.c(0.5), k.c(1)
	reflect = k.cmp(ir.CmpLT, x, half)
	return k, half, one, reflect, k.sel(reflect, k.un(ir.OpNeg, x), k.bin(ir.OpSub, x, one))
}

// realFloat checks that args is one real float and applies f to it, in f32
// for f16 and bf16 (as CHLO's legalisation upcasts them).
func (bd *builder) realFloat(o *op, args []*ir.Value, f func(*ir.Value) *ir.Value) *ir.Value {
	if len(args) != 1 || !args[0].Type.DType.IsFloat() || args[0].Type.DType.IsComplex() {
		bd.s.failf(o.pos, "%s needs one real float operand", o.name)
	}
	x := args[0]
	if x.Type.DType == ir.F32 || x.Type.DType == ir.F64 {
		return f(x)
	}
	y := f(bd.emit(o, ir.OpConvert, nil, []ir.Type{x.Type.WithDType(ir.F32)}, x))
	return bd.emit(o, ir.OpConvert, nil, []ir.Type{x.Type}, y)
}

// kit emits the ops of an expansion at o, its constants splats of type t.
type kit struct {
	bd *builder
	o  *op
	t  ir.Type
}

func (k kit) c(v float64) *ir.Value {
	return k.bd.emit(k.o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Floats: []float64{v}}}, []ir.Type{k.t})
}
func (k kit) un(code ir.Op, a *ir.Value) *ir.Value     { return k.bd.emit(k.o, code, nil, nil, a) }
func (k kit) bin(code ir.Op, a, b *ir.Value) *ir.Value { return k.bd.emit(k.o, code, nil, nil, a, b) }
func (k kit) sel(p, a, b *ir.Value) *ir.Value          { return k.bd.emit(k.o, ir.OpSelect, nil, nil, p, a, b) }
func (k kit) cmp(d ir.CmpDir, a, b *ir.Value) *ir.Value {
	return k.bd.emit(k.o, ir.OpCompare, &ir.CompareAttr{Dir: d}, nil, a, b)
}
