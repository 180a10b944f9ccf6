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
	if len(args) != 1 || !args[0].Type.DType.IsFloat() || args[0].Type.DType.IsComplex() {
		bd.s.failf(o.pos, "%s needs one real float operand", o.name)
	}
	x := args[0]
	if x.Type.DType == ir.F32 || x.Type.DType == ir.F64 {
		return bd.lgammaOf(o, x)
	}
	y := bd.lgammaOf(o, bd.emit(o, ir.OpConvert, nil, []ir.Type{x.Type.WithDType(ir.F32)}, x))
	return bd.emit(o, ir.OpConvert, nil, []ir.Type{x.Type}, y)
}

// lgammaOf is Lanczos' lgamma(z+1) for z = x-1 at x >= 0.5, and Euler's
// reflection log π - log|sin πx| - lgamma(1-x) below, with |sin πx| taken
// at x's fractional part folded into [0, 0.5]; ±inf gives +inf.
func (bd *builder) lgammaOf(o *op, x *ir.Value) *ir.Value {
	c := func(v float64) *ir.Value {
		return bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Floats: []float64{v}}}, []ir.Type{x.Type})
	}
	un := func(code ir.Op, a *ir.Value) *ir.Value { return bd.emit(o, code, nil, nil, a) }
	bin := func(code ir.Op, a, b *ir.Value) *ir.Value { return bd.emit(o, code, nil, nil, a, b) }
	sel := func(p, a, b *ir.Value) *ir.Value { return bd.emit(o, ir.OpSelect, nil, nil, p, a, b) }
	cmp := func(d ir.CmpDir, a, b *ir.Value) *ir.Value {
		return bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: d}, nil, a, b)
	}
	half, one := c(0.5), c(1)
	reflect := cmp(ir.CmpLT, x, half)
	z := sel(reflect, un(ir.OpNeg, x), bin(ir.OpSub, x, one))
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
