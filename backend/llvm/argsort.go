package llvm

import (
	"math/bits"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// argsortInsertMax is the longest line sorted by insertion, which moves
// O(n²) indices: cheap for a decode step's routing (batch times k), not
// for a prefill's (1024 tokens times 8 is 8192); longer lines are merged.
const argsortInsertMax = 256

// argsort as a generated kernel, one line along the axis per index of its
// range, in the reference's stable order (equal keys keep their order);
// keys are sortKey's, so ties, NaN and ±0 order as the reference. Short
// lines are sorted by insertion, long ones by merging.
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
	if n == 0 || outer*inner == 0 {
		return false
	}
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work = outer*inner, outer*inner*n*int64(bits.Len64(uint64(n)))
	op, xp := k.buf(0, types.I32), k.buf(1, elem)
	if n > argsortInsertMax {
		st.scratch = 8 * n
	}
	k.loop(k.lo, k.hi, nil, func(r value.Value, _ []value.Value) []value.Value {
		base := k.mulAdd(k.cur.NewSDiv(r, ci(inner)), n*inner, k.cur.NewSRem(r, ci(inner)))
		at := func(j value.Value) value.Value { return k.mulAdd(j, inner, base) }
		key := func(j value.Value) value.Value { return sortKey(k, x.DType, xp, at(j)) }
		if n > argsortInsertMax {
			k.mergeSort(op, n, at, key)
		} else {
			k.insertionSort(op, n, at, key)
		}
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// insertionSort sorts the line of n indices at op[at(j)] by key: element i
// is inserted after every kept element whose key is <= its own, found by a
// binary search of the sorted prefix.
func (k *kfn) insertionSort(op value.Value, n int64, at, key func(j value.Value) value.Value) {
	steps := int64(bits.Len64(uint64(n)))
	kept := func(j value.Value) value.Value { return k.cur.NewSExt(k.load(types.I32, op, at(j)), i64) }
	zero := constant.NewInt(types.I32, 0)
	k.loopN(n, func(j value.Value) { k.store(zero, op, at(j)) }) // every kept index readable
	k.loopN(n, func(i value.Value) {
		ki := key(i)
		b := k.loop(ci(0), ci(steps), []value.Value{ci(0), i}, func(_ value.Value, acc []value.Value) []value.Value {
			lo, hi := acc[0], acc[1]
			mid := k.cur.NewSDiv(k.cur.NewAdd(lo, hi), ci(2))
			le := k.cur.NewICmp(enum.IPredSLE, key(kept(mid)), ki)
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
}

// mergeSort sorts the line of n indices at op[at(j)] by key, stably:
// runs of 1, 2, 4, ... indices merged pairwise between two arrays of n in
// the scratch (8n bytes), the left run's index taken on equal keys; then
// the sorted indices are copied to the line.
func (k *kfn) mergeSort(op value.Value, n int64, at, key func(j value.Value) value.Value) {
	var a value.Value = k.cur.NewBitCast(k.scratch, types.NewPointer(types.I32))
	b := k.at(types.I32, a, ci(n))
	k.loopN(n, func(j value.Value) { k.store(k.cur.NewTrunc(j, types.I32), a, j) })
	passes := int64(bits.Len64(uint64(n - 1)))
	k.loop(ci(0), ci(passes), nil, func(p value.Value, _ []value.Value) []value.Value {
		even := k.cur.NewICmp(enum.IPredEQ, k.cur.NewAnd(p, ci(1)), ci(0))
		from, to := k.cur.NewSelect(even, a, b), k.cur.NewSelect(even, b, a)
		w := k.cur.NewShl(ci(1), p)
		w2 := k.cur.NewShl(w, ci(1)) // a pair of runs
		pairs := k.cur.NewSDiv(k.cur.NewAdd(ci(n-1), w2), w2)
		k.loop(ci(0), pairs, nil, func(q value.Value, _ []value.Value) []value.Value {
			lo := k.cur.NewMul(q, w2)
			mid, hi := k.smin(k.cur.NewAdd(lo, w), ci(n)), k.smin(k.cur.NewAdd(lo, w2), ci(n))
			k.merge(from, to, lo, mid, hi, key)
			return nil
		})
		return nil
	})
	sorted := a
	if passes%2 == 1 {
		sorted = b
	}
	k.loopN(n, func(j value.Value) { k.store(k.load(types.I32, sorted, j), op, at(j)) })
}

// merge merges the sorted runs from[lo, mid) and from[mid, hi) into
// to[lo, hi), the left run's index first on equal keys.
func (k *kfn) merge(from, to, lo, mid, hi value.Value, key func(j value.Value) value.Value) {
	k.loop(lo, hi, []value.Value{lo, mid}, func(t value.Value, acc []value.Value) []value.Value {
		i, j := acc[0], acc[1]
		// Both heads are read in range; a finished run's is not chosen.
		li := k.load(types.I32, from, k.smin(i, k.cur.NewSub(mid, ci(1))))
		ri := k.load(types.I32, from, k.smin(j, k.cur.NewSub(hi, ci(1))))
		le := k.cur.NewICmp(enum.IPredSLE, key(k.cur.NewSExt(li, i64)), key(k.cur.NewSExt(ri, i64)))
		rightDone := k.cur.NewICmp(enum.IPredSGE, j, hi)
		left := k.cur.NewAnd(k.cur.NewICmp(enum.IPredSLT, i, mid), k.cur.NewOr(rightDone, le))
		k.store(k.cur.NewSelect(left, li, ri), to, t)
		l64 := k.cur.NewZExt(left, i64)
		return []value.Value{k.cur.NewAdd(i, l64), k.cur.NewAdd(j, k.cur.NewSub(ci(1), l64))}
	})
}
