package llvm

import (
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// floatBits is a float dtype's bit layout: exponent and mantissa bits
// (the sign is the top bit of the rest).
type floatBits struct{ exp, man uint }

var floatBitLayouts = map[ir.DType]floatBits{ir.F64: {11, 52}, ir.F32: {8, 23}, ir.F16: {5, 10}, ir.BF16: {8, 7}}

// reducePrecision generates reduce_precision on each element's own bit
// pattern, as the reference kernel (backend/cpu/precision.go) and XLA do:
// the mantissa rounded to nearest even at mantissa_bits, then an exponent
// beyond exponent_bits' range made ±inf and one at or below its least
// normal exponent ±0; a NaN is kept, or is ±inf when no mantissa bit is
// left. The attribute is known here, so only its steps are emitted.
func (pl *planner) reducePrecision(in *ir.Instr, env map[*ir.Value]int) bool {
	x := in.Args[0].Type
	l, ok := floatBitLayouts[x.DType]
	n, static := x.NumElements()
	if !ok || !static || n == 0 {
		return false
	}
	a := in.Attr.(*ir.ReducePrecisionAttr)
	exp, man := uint(min(a.ExponentBits, 64)), uint(min(a.MantissaBits, 64))
	bits := l.exp + l.man + 1
	it := types.NewInt(uint64(bits))
	// Constants are written signed at the type's width, as LLVM reads them.
	c := func(v uint64) value.Value { return constant.NewInt(it, int64(v<<(64-bits))>>(64-bits)) }
	expMask := (uint64(1)<<l.exp - 1) << l.man
	sign := uint64(1) << (bits - 1)
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work = n, n
	out, src := k.buf(0, it), k.buf(1, it)
	k.loop(k.lo, k.hi, nil, func(i value.Value, _ []value.Value) []value.Value {
		x := k.load(it, src, i)
		r := x
		if man < l.man {
			last := uint64(1) << (l.man - man) // the lowest mantissa bit kept
			odd := k.cur.NewLShr(k.cur.NewAnd(r, c(last)), c(uint64(l.man-man)))
			bias := k.cur.NewAdd(c(last>>1-1), odd)
			// The add wraps at the type's width, as the reference's mask does.
			r = k.cur.NewAnd(k.cur.NewAdd(r, bias), c(^(last - 1)))
		}
		if exp < l.exp {
			s := k.cur.NewAnd(r, c(sign))
			e := k.cur.NewAnd(r, c(expMask))
			srcBias, dstBias := uint64(1)<<(l.exp-1)-1, uint64(1)<<(exp-1)-1
			over := k.cur.NewICmp(enum.IPredUGT, e, c((srcBias+dstBias)<<l.man))
			under := k.cur.NewICmp(enum.IPredULE, e, c((srcBias-dstBias)<<l.man))
			r = k.cur.NewSelect(over, k.cur.NewOr(s, c(expMask)), k.cur.NewSelect(under, s, r))
		}
		nan := k.cur.NewICmp(enum.IPredUGT, k.cur.NewAnd(x, c(sign-1)), c(expMask))
		keep := x // a NaN stays, or becomes ±inf with no mantissa bit to hold it
		if man == 0 {
			keep = k.cur.NewOr(k.cur.NewAnd(x, c(sign)), c(expMask))
		}
		k.store(k.cur.NewSelect(nan, keep, r), out, i)
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}
