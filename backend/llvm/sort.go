package llvm

import (
	"math/bits"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// sortRegion generates sort with a comparator region: each line along the
// sort's dimension (the kernel's range, one line per index) is merge
// sorted, stably, as the reference's slices.SortStableFunc orders it,
// with the comparator compiled inline as an expression on the two
// elements' scalars; then every operand is permuted as the line's order
// says. A comparator with an instruction that is not an expression on
// the kernels' types is left to the reference executor.
func (pl *planner) sortRegion(in *ir.Instr, env map[*ir.Value]int) bool {
	x := in.Args[0].Type
	n0, ok := x.NumElements()
	if !ok || n0 == 0 || len(in.Regions) != 1 || !comparatorExpr(in) {
		return false
	}
	for _, a := range in.Args {
		if _, whole := copyType(a.Type.DType); !whole || !supportedType(a.Type) {
			return false
		}
	}
	outer, n, inner := lines(x.Dims(), int(in.Attr.(*ir.SortAttr).Dimension))
	k, st := pl.newKernelStep(in, env)
	ops := len(in.Args)
	st.rows, st.work, st.scratch = outer*inner, outer*inner*n*int64(bits.Len64(uint64(n)))*4, 8*n
	less := comparator(k, in, ops)
	k.loop(k.lo, k.hi, nil, func(r value.Value, _ []value.Value) []value.Value {
		base := k.mulAdd(k.cur.NewSDiv(r, ci(inner)), n*inner, k.cur.NewSRem(r, ci(inner)))
		at := func(j value.Value) value.Value { return k.mulAdd(j, inner, base) }
		sorted := k.mergeSortBy(n, func(p, q value.Value) value.Value { return less(at(p), at(q)) })
		for o := range ops {
			elem, _ := copyType(in.Args[o].Type.DType)
			dst, src := k.buf(o, elem), k.buf(ops+o, elem)
			k.loopN(n, func(j value.Value) {
				p := k.cur.NewSExt(k.load(types.I32, sorted, j), i64)
				k.store(k.load(elem, src, at(p)), dst, at(j))
			})
		}
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// comparatorExpr reports whether every instruction of in's comparator is
// an expression this backend computes, on scalars.
func comparatorExpr(in *ir.Instr) bool {
	blk := in.Regions[0]
	if len(blk.Params) != 2*len(in.Args) {
		return false
	}
	for _, x := range blk.Instrs {
		if x.Op == ir.OpReturn {
			if len(x.Args) != 1 || x.Args[0].Type.DType != ir.I1 || x.Args[0].Type.Rank() != 0 {
				return false
			}
			continue
		}
		if !isExpr(x) || x.Results[0].Type.Rank() != 0 {
			return false
		}
	}
	return true
}

// comparator compiles in's comparator region: less(a, b) is its result
// for elements a and b (flat indices into the operands, buffers ops on).
func comparator(k *kfn, in *ir.Instr, ops int) func(a, b value.Value) value.Value {
	blk := in.Regions[0]
	defs := map[*ir.Value]*ir.Instr{}
	var ret *ir.Value
	for _, x := range blk.Instrs {
		if x.Op == ir.OpReturn {
			ret = x.Args[0]
			continue
		}
		defs[x.Results[0]] = x
	}
	scalar := func(o int, i value.Value) value.Value {
		dt := in.Args[o].Type.DType
		reg, mem, _ := elemType(dt)
		v := k.load(mem, k.buf(ops+o, mem), i)
		switch {
		case dt == ir.F16 || dt == ir.BF16:
			return k.widen(v, dt)
		case reg != mem:
			return k.cur.NewTrunc(v, reg)
		}
		return v
	}
	return func(a, b value.Value) value.Value {
		e := &expr{k: k, defs: defs, memo: map[string]value.Value{}, bufs: map[*ir.Value]int{},
			leaf: func(*ir.Value) (int, bool) { return 0, false }}
		for o := range ops {
			e.memo[memoKey(blk.Params[2*o], nil)] = scalar(o, a)
			e.memo[memoKey(blk.Params[2*o+1], nil)] = scalar(o, b)
		}
		return e.at(ret, nil)
	}
}

// mergeSortBy sorts the line positions 0..n-1 stably by less, in runs of
// 1, 2, 4, ... merged pairwise between two arrays of n i32 in the scratch
// (8n bytes), the left run's position taken unless the right one is
// less; it returns the array holding the sorted positions.
func (k *kfn) mergeSortBy(n int64, less func(p, q value.Value) value.Value) value.Value {
	var a value.Value = k.cur.NewBitCast(k.scratch, types.NewPointer(types.I32))
	b := k.at(types.I32, a, ci(n))
	k.loopN(n, func(j value.Value) { k.store(k.cur.NewTrunc(j, types.I32), a, j) })
	passes := int64(bits.Len64(uint64(n - 1)))
	k.loop(ci(0), ci(passes), nil, func(p value.Value, _ []value.Value) []value.Value {
		even := k.cur.NewICmp(enum.IPredEQ, k.cur.NewAnd(p, ci(1)), ci(0))
		from, to := k.cur.NewSelect(even, a, b), k.cur.NewSelect(even, b, a)
		w := k.cur.NewShl(ci(1), p)
		w2 := k.cur.NewShl(w, ci(1))
		pairs := k.cur.NewSDiv(k.cur.NewAdd(ci(n-1), w2), w2)
		k.loop(ci(0), pairs, nil, func(q value.Value, _ []value.Value) []value.Value {
			lo := k.cur.NewMul(q, w2)
			mid, hi := k.smin(k.cur.NewAdd(lo, w), ci(n)), k.smin(k.cur.NewAdd(lo, w2), ci(n))
			k.loop(lo, hi, []value.Value{lo, mid}, func(t value.Value, acc []value.Value) []value.Value {
				i, j := acc[0], acc[1]
				li := k.load(types.I32, from, k.smin(i, k.cur.NewSub(mid, ci(1))))
				ri := k.load(types.I32, from, k.smin(j, k.cur.NewSub(hi, ci(1))))
				rightLess := less(k.cur.NewSExt(ri, i64), k.cur.NewSExt(li, i64))
				rightDone := k.cur.NewICmp(enum.IPredSGE, j, hi)
				leftOpen := k.cur.NewICmp(enum.IPredSLT, i, mid)
				left := k.cur.NewAnd(leftOpen, k.cur.NewOr(rightDone, k.cur.NewXor(rightLess, constant.NewBool(true))))
				k.store(k.cur.NewSelect(left, li, ri), to, t)
				l64 := k.cur.NewZExt(left, i64)
				return []value.Value{k.cur.NewAdd(i, l64), k.cur.NewAdd(j, k.cur.NewSub(ci(1), l64))}
			})
			return nil
		})
		return nil
	})
	if passes%2 == 1 {
		return b
	}
	return a
}
