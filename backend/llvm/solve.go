package llvm

import (
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// triangularSolve generates triangular_solve as the reference kernel
// (backend/cpu/solve.go) computes it: each vector of b (a column on the
// left side, a row on the right) is solved on its own by substitution in
// f64, subtracting the products in ascending order, and each solution
// element is rounded once into the dtype. The vectors are the kernel's
// range; a part keeps the vector it solves in its scratch. The right side
// is the left side on the transposes, as there.
func (pl *planner) triangularSolve(in *ir.Instr, env map[*ir.Value]int) bool {
	bt := in.Args[1].Type
	if !floatStatic(in) {
		return false
	}
	at := in.Attr.(*ir.TriangularSolveAttr)
	dims := bt.Dims()
	r := len(dims)
	n, _ := bt.NumElements()
	m, vecs, stride, step := dims[r-2], dims[r-1], dims[r-1], int64(1) // columns of b
	if !at.LeftSide {
		m, vecs, stride, step = dims[r-1], dims[r-2], 1, dims[r-1] // rows of b
	}
	if n == 0 {
		return false
	}
	trans := at.TransposeA != !at.LeftSide
	lower := at.Lower != trans
	dt := bt.DType
	_, mem, _ := elemType(dt)
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work, st.scratch = n/m, n*m, 8*m
	out, ap, bp := k.buf(0, mem), k.buf(1, mem), k.buf(2, mem)
	x := k.cur.NewBitCast(k.scratch, types.NewPointer(types.Double))
	wide := func(p, i value.Value) value.Value { return k.cur.NewFPExt(k.loadDT(p, i, dt), types.Double) }
	k.loop(k.lo, k.hi, nil, func(row value.Value, _ []value.Value) []value.Value {
		batch, v := k.cur.NewSDiv(row, ci(vecs)), k.cur.NewSRem(row, ci(vecs))
		off := k.mulAdd(batch, m*vecs, k.mulAdd(v, step, ci(0)))
		base := k.mulAdd(batch, m*m, ci(0))
		elem := func(i value.Value) value.Value { return k.mulAdd(i, stride, off) }
		t := func(i, j value.Value) value.Value {
			if trans {
				i, j = j, i
			}
			return wide(ap, k.mulAdd(i, m, k.cur.NewAdd(base, j)))
		}
		k.loopN(m, func(i value.Value) { k.store(wide(bp, elem(i)), x, i) })
		k.loopN(m, func(nn value.Value) {
			i, from, to := nn, value.Value(ci(0)), nn
			if !lower {
				i = k.cur.NewSub(ci(m-1), nn)
				from, to = k.cur.NewAdd(i, ci(1)), ci(m)
			}
			sum := k.loop(from, to, []value.Value{k.load(types.Double, x, i)}, func(kk value.Value, acc []value.Value) []value.Value {
				return []value.Value{k.cur.NewFSub(acc[0], k.cur.NewFMul(t(i, kk), k.load(types.Double, x, kk)))}
			})[0]
			if !at.UnitDiagonal {
				sum = k.cur.NewFDiv(sum, t(i, i))
			}
			k.store(sum, x, i)
		})
		k.loopN(m, func(i value.Value) {
			s := k.cur.NewFPTrunc(k.load(types.Double, x, i), types.Float)
			if dt != ir.F32 { // through f32, as the reference's SetFloat64 rounds
				k.store(k.narrow(s, dt), out, elem(i))
				return
			}
			k.store(s, out, elem(i))
		})
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}
