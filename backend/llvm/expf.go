package llvm

import (
	"math"

	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"
)

// An f32 exp written out in the module, inlined where it is called.
//
// llvm.exp.f32 in a loop becomes a call to libmvec's _ZGVdN8v_expf per 8
// elements: the loop spills its live vectors around every call and is not
// unrolled, and on the chain (x*sigmoid(x) + bias + residual over 16M
// floats) the exp doubled the kernel's time over memory's. Written out as
// straight-line code, the exp vectorises with the rest of the loop.
//
// exp(x) = 2^n · e^r with n = round(x·log2 e) and r = x - n·ln 2 (ln 2 in
// two parts, so r is exact enough), e^r by Cephes' expf polynomial on
// |r| <= ln2/2; its error is within 2 ulps, as libmvec's is.
// n comes from adding 1.5·2^23, which rounds x·log2 e to an integer in the
// low mantissa bits: no fptosi, which would be poison on NaN. x is first
// clamped to [-104, 89] (a NaN passes the clamp and stays NaN throughout),
// and 2^n is applied as two factors 2^(n>>1) and 2^(n-(n>>1)), each a
// normal float, so results round into the subnormals below 2^-126 and
// overflow to +Inf above ln(MaxFloat32) as a correctly rounded exp does.

const expfName = "tpucc.expf"

// expfPoly are Cephes' expf coefficients, the highest power first.
var expfPoly = []float64{1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1}

// expf returns the module's inlined f32 exp, defining it once.
func (g *gen) expf() *lir.Func {
	if f, ok := g.decls[expfName]; ok {
		return f
	}
	x := lir.NewParam("x", types.Float)
	f := g.m.NewFunc(expfName, types.Float, x)
	f.Linkage = enum.LinkageInternal
	f.FuncAttrs = append(f.FuncAttrs, enum.FuncAttrAlwaysInline)
	g.decls[expfName] = f
	b := f.NewBlock("")
	fma := func(a, m, c value.Value) value.Value {
		return b.NewCall(g.declare("llvm.fma.f32", types.Float, types.Float, types.Float, types.Float), a, m, c)
	}
	c := func(v float64) value.Value { return constant.NewFloat(types.Float, float64(float32(v))) }
	hi := b.NewSelect(b.NewFCmp(enum.FPredOGT, x, c(89)), c(89), x)
	xc := b.NewSelect(b.NewFCmp(enum.FPredOLT, hi, c(-104)), c(-104), hi)
	const shifter = 12582912 // 1.5·2^23
	t := fma(xc, c(1.44269504088896341), c(shifter))
	n := b.NewFSub(t, c(shifter))
	r := fma(n, c(-0.693359375), xc)
	r = fma(n, c(2.12194440e-4), r)
	p := c(expfPoly[0])
	for _, k := range expfPoly[1:] {
		p = fma(p, r, c(k))
	}
	p = fma(p, b.NewFMul(r, r), r)
	p = b.NewFAdd(p, c(1))
	ni := b.NewSub(b.NewBitCast(t, types.I32), constant.NewInt(types.I32, int64(math.Float32bits(shifter))))
	n1 := b.NewAShr(ni, constant.NewInt(types.I32, 1))
	n2 := b.NewSub(ni, n1)
	y := b.NewFMul(p, pow2(b, n1))
	b.NewRet(b.NewFMul(y, pow2(b, n2)))
	return f
}

// pow2 is 2^n as a float, for n in [-126, 127].
func pow2(b *lir.Block, n value.Value) value.Value {
	e := b.NewShl(b.NewAdd(n, constant.NewInt(types.I32, 127)), constant.NewInt(types.I32, 23))
	return b.NewBitCast(e, types.Float)
}
