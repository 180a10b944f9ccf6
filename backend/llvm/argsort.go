package llvm

import (
	"math/bits"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// argsortMaxLine is the longest line argsort is generated for: the
// insertion below moves O(n²) indices, cheap for routing's lines (tokens
// times k) and not for long ones, which stay on the reference's sort.
const argsortMaxLine = 4096

// argsort as a generated kernel, one line along the axis per index of its
// range: the line's result is kept sorted ascending by key while element
// i is inserted after every kept element whose key is <= its own (a
// binary search of the sorted prefix), which is the reference's stable
// order; keys are sortKey's, so ties, NaN and ±0 order as the reference.
func (pl *planner) argsort(in *ir.Instr, env map[*ir.Value]int) bool {
	x, res := in.Args[0].Type, in.Results[0].Type
	if !x.IsStatic() || res.DType != ir.I32 {
		return false
	}
	elem, ok := copyType(x.DType)
	if !ok || (!floatish(x.DType) && !intKeyed(x.DType)) {
		return false
	}
	outer, n, inner := lines(x.Dims(), int(in.Attr.(*ir.AxisAttr).Axis))
	if n == 0 || n > argsortMaxLine || outer*inner == 0 {
		return false
	}
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work = outer*inner, outer*inner*n*int64(bits.Len64(uint64(n)))
	op, xp := k.buf(0, types.I32), k.buf(1, elem)
	steps := int64(bits.Len64(uint64(n)))
	k.loop(k.lo, k.hi, nil, func(r value.Value, _ []value.Value) []value.Value {
		base := k.mulAdd(k.cur.NewSDiv(r, ci(inner)), n*inner, k.cur.NewSRem(r, ci(inner)))
		at := func(j value.Value) value.Value { return k.mulAdd(j, inner, base) }
		kept := func(j value.Value) value.Value { return k.cur.NewSExt(k.load(types.I32, op, at(j)), i64) }
		zero := constant.NewInt(types.I32, 0)
		k.loopN(n, func(j value.Value) { k.store(zero, op, at(j)) }) // every kept index readable
		k.loopN(n, func(i value.Value) {
			ki := sortKey(k, x.DType, xp, at(i))
			b := k.loop(ci(0), ci(steps), []value.Value{ci(0), i}, func(_ value.Value, acc []value.Value) []value.Value {
				lo, hi := acc[0], acc[1]
				mid := k.cur.NewSDiv(k.cur.NewAdd(lo, hi), ci(2))
				le := k.cur.NewICmp(enum.IPredSLE, sortKey(k, x.DType, xp, at(kept(mid))), ki)
				open := k.cur.NewICmp(enum.IPredSLT, lo, hi)
				nlo := k.cur.NewSelect(k.cur.NewAnd(open, le), k.cur.NewAdd(mid, ci(1)), lo)
				nhi := k.cur.NewSelect(k.cur.NewAnd(open, k.cur.NewXor(le, constant.NewBool(true))), mid, hi)
				return []value.Value{nlo, nhi}
			})
			p := b[0]
			k.loop(ci(0), k.cur.NewSub(i, p), nil, func(t value.Value, _ []value.Value) []value.Value {
				j := k.cur.NewSub(i, t)
				k.store(k.load(types.I32, op, at(k.cur.NewSub(j, ci(1)))), op, at(j))
				return nil
			})
			k.store(k.cur.NewTrunc(i, types.I32), op, at(p))
		})
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}
