package llvm

import (
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// top_k (MoE routing: the k best experts of every token) as a generated
// kernel, one row of the last axis per index of its range. The row's
// indices are kept in the index result, sorted descending by key: element
// i goes in at the number p of kept elements whose key is >= its own (so
// an equal key stays behind the lower index, as the reference's stable
// sort puts it) when p < k, the elements from p on moving down one.
// That is n·k compares a row, cheap for routing's small k. Values are
// copied from x as integers of their size, bit for bit.
func (pl *planner) topK(in *ir.Instr, env map[*ir.Value]int) bool {
	x, vals, inds := in.Args[0].Type, in.Results[0].Type, in.Results[1].Type
	if !x.IsStatic() || !vals.IsStatic() || inds.DType != ir.I32 || len(x.Dims()) == 0 {
		return false
	}
	elem, ok := copyType(x.DType)
	if !ok || (!floatish(x.DType) && !intKeyed(x.DType)) {
		return false
	}
	dims := x.Dims()
	n, kk := dims[len(dims)-1], in.Attr.(*ir.TopKAttr).K
	rows := int64(1)
	for _, d := range dims[:len(dims)-1] {
		rows *= d
	}
	if n == 0 || kk == 0 || rows == 0 || kk > n {
		return false
	}
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work = rows, rows*n*kk
	vp, ip, xp := k.buf(0, elem), k.buf(1, types.I32), k.buf(2, elem)
	key := func(base, i value.Value) value.Value { return sortKey(k, x.DType, xp, k.cur.NewAdd(base, i)) }
	k.loop(k.lo, k.hi, nil, func(r value.Value, _ []value.Value) []value.Value {
		xb, ob := k.mulAdd(r, n, ci(0)), k.mulAdd(r, kk, ci(0))
		kept := func(j value.Value) value.Value {
			return k.cur.NewSExt(k.load(types.I32, ip, k.cur.NewAdd(ob, j)), i64)
		}
		k.loop(ci(0), ci(n), nil, func(i value.Value, _ []value.Value) []value.Value {
			ki := key(xb, i)
			cnt := k.smin(i, ci(kk))
			// The loops over the kept slots go without loop's interleave
			// hint: their trip count is at most k, and clang 14 folded the
			// hinted count loop's tail by reading all four slots of an
			// interleaved step unmasked, the slots past cnt not yet written,
			// and then x at those garbage indices: a top_k of u8[1,6,1,7]
			// over a reused buffer crashed (progen seed 20303, SIGSEGV).
			p, _ := k.loopBack(ci(0), cnt, []value.Value{ci(0)}, func(j value.Value, acc []value.Value) []value.Value {
				ge := k.cur.NewICmp(enum.IPredSGE, key(xb, kept(j)), ki)
				return []value.Value{k.cur.NewAdd(acc[0], k.cur.NewZExt(ge, i64))}
			})
			k.ifElse(k.cur.NewICmp(enum.IPredSLT, p[0], ci(kk)), func() {
				last := k.smin(cnt, ci(kk-1)) // the slot the last kept element moves to
				k.loopBack(ci(0), k.cur.NewSub(last, p[0]), nil, func(t value.Value, _ []value.Value) []value.Value {
					j := k.cur.NewSub(last, t)
					v := k.load(types.I32, ip, k.cur.NewAdd(ob, k.cur.NewSub(j, ci(1))))
					k.store(v, ip, k.cur.NewAdd(ob, j))
					return nil
				})
				k.store(k.cur.NewTrunc(i, types.I32), ip, k.cur.NewAdd(ob, p[0]))
			}, nil)
			return nil
		})
		k.loopN(kk, func(j value.Value) {
			k.store(k.load(elem, xp, k.cur.NewAdd(xb, kept(j))), vp, k.cur.NewAdd(ob, j))
		})
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// intKeyed dtypes are ordered by their value read as Buffer.Int64At does.
func intKeyed(dt ir.DType) bool {
	_, ok := indexLoad(dt)
	return ok
}

// sortKey is x[i]'s key as an i64 whose signed order is the reference's
// (backend/cpu totalKey): for floats IEEE totalOrder of the value widened
// to f64, which quiets a signalling NaN, so the quiet bit is set here too.
func sortKey(k *kfn, dt ir.DType, xp, i value.Value) value.Value {
	if !floatish(dt) {
		r, _ := indexLoad(dt)
		_, mem, _ := elemType(dt)
		p := k.cur.NewBitCast(xp, types.NewPointer(mem))
		return r.load(k, p, i)
	}
	_, mem, _ := elemType(dt)
	p := k.cur.NewBitCast(xp, types.NewPointer(mem))
	f := fbuf{k: k, p: p, dt: dt}.load(i)
	c := k.cur
	i32c := func(v int64) value.Value { return constant.NewInt(types.I32, v) }
	var b value.Value = c.NewBitCast(f, types.I32)
	b = c.NewSelect(c.NewFCmp(enum.FPredUNO, f, f), c.NewOr(b, i32c(0x400000)), b)
	neg := c.NewICmp(enum.IPredSLT, b, i32c(0))
	b = c.NewSelect(neg, c.NewXor(b, i32c(0x7fffffff)), b)
	return c.NewSExt(b, i64)
}
