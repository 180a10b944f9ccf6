package llvm

import (
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// selectAndScatter generates select_and_scatter (max pooling's gradient)
// as the reference kernel computes it: each window, row-major, selects
// the first of its positions inside x that select keeps against every
// later one, and adds the window's source element there; the sums are
// kept in the scratch (f64 for floats, i64 for integers, as the
// reference's), and the result is init plus each sum, rounded once.
// Windows overlap, so one call does all of them in order, unsplit.
func (pl *planner) selectAndScatter(in *ir.Instr, env map[*ir.Value]int) bool {
	x, src := in.Args[0].Type, in.Args[1].Type
	n, _ := x.NumElements()
	ns, _ := src.NumElements()
	float := floatStatic(in)
	if !float && !intStatic(in) || n == 0 || ns == 0 {
		return false
	}
	a := in.Attr.(*ir.SelectScatterAttr)
	dt := x.DType
	_, mem, _ := elemType(dt)
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work, st.scratch = 1, ns*product(a.Size)+n, 8*n
	out, xp, sp, ip := k.buf(0, mem), k.buf(1, mem), k.buf(2, mem), k.buf(3, mem)
	accT := types.Type(types.I64)
	if float {
		accT = types.Double
	}
	acc := k.cur.NewBitCast(k.scratch, types.NewPointer(accT))
	// wide reads element i of p in the sums' type: f64, or i64 extended
	// by the dtype's signedness.
	wide := func(p, i value.Value) value.Value {
		if float {
			return k.cur.NewFPExt(k.loadDT(p, i, dt), types.Double)
		}
		switch v := k.load(mem, p, i); {
		case mem.Equal(types.I64):
			return v
		case dt.IsUnsigned():
			return k.cur.NewZExt(v, types.I64)
		default:
			return k.cur.NewSExt(v, types.I64)
		}
	}
	keep := windowSelect(k, a.Select, float, func(i value.Value) value.Value {
		if float {
			return k.loadDT(xp, i, dt)
		}
		return wide(xp, i)
	})
	k.loop(k.lo, k.hi, nil, func(value.Value, []value.Value) []value.Value {
		zero := value.Value(constant.NewInt(types.I64, 0))
		if float {
			zero = constant.NewFloat(types.Double, 0)
		}
		k.loopN(n, func(i value.Value) { k.store(zero, acc, i) })
		nestLoops(k, src.Dims(), func(win []value.Value) {
			sel := windowPick(k, &a.Window, x.Dims(), win, keep)
			k.ifElse(k.cur.NewICmp(enum.IPredSGE, sel, ci(0)), func() {
				s := wide(sp, k.linear(win, src.Dims()))
				old := k.load(accT, acc, sel)
				if float {
					k.store(k.cur.NewFAdd(old, s), acc, sel)
				} else {
					k.store(k.cur.NewAdd(old, s), acc, sel)
				}
			}, nil)
		})
		init := wide(ip, ci(0))
		k.loopN(n, func(i value.Value) {
			v := k.load(accT, acc, i)
			switch {
			case mem.Equal(types.I64):
				k.store(k.cur.NewAdd(init, v), out, i)
			case !float:
				k.store(k.cur.NewTrunc(k.cur.NewAdd(init, v), mem), out, i)
			case dt == ir.F32:
				k.store(k.cur.NewFPTrunc(k.cur.NewFAdd(init, v), types.Float), out, i)
			default: // through f32, as the reference's SetFloat64 rounds
				k.store(k.narrow(k.cur.NewFPTrunc(k.cur.NewFAdd(init, v), types.Float), dt), out, i)
			}
		})
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// windowSelect is select's comparison of x's elements p and q (keep p),
// on values load gives: ordered for floats (NaN compares false), signed
// on the i64 values for integers.
func windowSelect(k *kfn, dir ir.CmpDir, float bool, load func(i value.Value) value.Value) func(p, q value.Value) value.Value {
	fp := map[ir.CmpDir]enum.FPred{ir.CmpGE: enum.FPredOGE, ir.CmpGT: enum.FPredOGT, ir.CmpLE: enum.FPredOLE, ir.CmpLT: enum.FPredOLT}
	ip := map[ir.CmpDir]enum.IPred{ir.CmpGE: enum.IPredSGE, ir.CmpGT: enum.IPredSGT, ir.CmpLE: enum.IPredSLE, ir.CmpLT: enum.IPredSLT}
	return func(p, q value.Value) value.Value {
		if float {
			return k.cur.NewFCmp(fp[dir], load(p), load(q))
		}
		return k.cur.NewICmp(ip[dir], load(p), load(q))
	}
}

// windowPick returns the flat index in x (of dims) that window win
// selects, -1 when none of its positions is inside x: positions in
// row-major order, the first inside x taken, then replaced by each later
// one that keep does not prefer it to.
func windowPick(k *kfn, w *ir.Window, dims []int64, win []value.Value, keep func(p, q value.Value) value.Value) value.Value {
	n := len(dims)
	pos := make([]value.Value, n)
	var rec func(d int, sel value.Value) value.Value
	rec = func(d int, sel value.Value) value.Value {
		if d == n {
			flat, inside := value.Value(ci(0)), value.Value(constant.NewBool(true))
			for e := range n {
				var p value.Value = k.cur.NewSub(k.cur.NewAdd(k.cur.NewMul(win[e], ci(w.Stride[e])), k.cur.NewMul(pos[e], ci(w.WindowDilation[e]))), ci(w.PadLow[e]))
				var ok value.Value = k.cur.NewICmp(enum.IPredSGE, p, ci(0))
				if bd := w.BaseDilation[e]; bd != 1 {
					ok = k.cur.NewAnd(ok, k.cur.NewICmp(enum.IPredEQ, k.cur.NewSRem(p, ci(bd)), ci(0)))
					p = k.cur.NewSDiv(p, ci(bd))
				}
				ok = k.cur.NewAnd(ok, k.cur.NewICmp(enum.IPredSLT, p, ci(dims[e])))
				inside = k.cur.NewAnd(inside, ok)
				flat = k.mulAdd(flat, dims[e], p)
			}
			// Both loads stay in x: a position outside is never chosen.
			cand := k.cur.NewSelect(inside, flat, ci(0))
			none := k.cur.NewICmp(enum.IPredSLT, sel, ci(0))
			kept := keep(k.smax(sel, ci(0)), cand)
			take := k.cur.NewAnd(inside, k.cur.NewOr(none, k.cur.NewXor(kept, constant.NewBool(true))))
			return k.cur.NewSelect(take, flat, sel)
		}
		return k.loop(ci(0), ci(w.Size[d]), []value.Value{sel}, func(i value.Value, acc []value.Value) []value.Value {
			pos[d] = i
			return []value.Value{rec(d+1, acc[0])}
		})[0]
	}
	return rec(0, ci(-1))
}

// nestLoops emits loops over dims (a scalar: body once) and calls body
// with the indices.
func nestLoops(k *kfn, dims []int64, body func(idx []value.Value)) {
	idx := make([]value.Value, len(dims))
	var rec func(d int)
	rec = func(d int) {
		if d == len(dims) {
			body(idx)
			return
		}
		k.loopN(dims[d], func(i value.Value) {
			idx[d] = i
			rec(d + 1)
		})
	}
	rec(0)
}

func product(xs []int64) int64 {
	p := int64(1)
	for _, x := range xs {
		p *= x
	}
	return p
}
