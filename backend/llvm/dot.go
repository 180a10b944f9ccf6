package llvm

import (
	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// dotShape is a dot_general whose batch, free and contracting dimensions
// each collapse to one strided dimension: lhs (b, m, k), rhs (b, k, n), the
// result [B, M, N] row-major.
type dotShape struct {
	B, M, K, N    int64
	lb, lm, lk    int64 // lhs strides
	rb, rk, rn    int64 // rhs strides
	lhsFree, rhsF []int64
}

// collapse returns the size and stride of dims of a row-major shape taken
// together, if they are laid out as one strided dimension (in order).
func collapse(shape []int64, dims []int64) (size, stride int64, ok bool) {
	strides := make([]int64, len(shape))
	s := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = s
		s *= shape[i]
	}
	size, stride = 1, 0
	for i, d := range dims {
		size *= shape[d]
		if i == len(dims)-1 {
			stride = strides[d]
		} else if strides[dims[i]] != strides[dims[i+1]]*shape[dims[i+1]] {
			return 0, 0, false
		}
	}
	return size, stride, true
}

func free(rank int, used ...[]int64) []int64 {
	taken := map[int64]bool{}
	for _, u := range used {
		for _, d := range u {
			taken[d] = true
		}
	}
	var out []int64
	for d := 0; d < rank; d++ {
		if !taken[int64(d)] {
			out = append(out, int64(d))
		}
	}
	return out
}

func analyseDot(in *ir.Instr) (dotShape, bool) {
	a := in.Attr.(*ir.DotAttr)
	ls, rs := in.Args[0].Type.Dims(), in.Args[1].Type.Dims()
	var d dotShape
	ok := true
	col := func(shape, dims []int64) (int64, int64) {
		n, s, c := collapse(shape, dims)
		ok = ok && c
		return n, s
	}
	lf := free(len(ls), a.LhsBatch, a.LhsContract)
	rf := free(len(rs), a.RhsBatch, a.RhsContract)
	d.B, d.lb = col(ls, a.LhsBatch)
	_, d.rb = col(rs, a.RhsBatch)
	d.M, d.lm = col(ls, lf)
	d.K, d.lk = col(ls, a.LhsContract)
	_, d.rk = col(rs, a.RhsContract)
	d.N, d.rn = col(rs, rf)
	return d, ok
}

// dotRows is how many rows of the result one block of the kernel computes:
// each element of the rhs is loaded once per block.
const dotRows = 4

// dot generates an f32 dot_general. The kernel's outer range is blocks of
// dotRows rows of one batch; with a contiguous rhs row it accumulates
// dotRows result rows at once (c[i][n] += a[i][k] * b[k][n], vectorised
// over n), else it computes each element as a vectorised dot product.
func (pl *planner) dot(in *ir.Instr, env map[*ir.Value]int) bool {
	d, ok := analyseDot(in)
	if !ok {
		return false
	}
	k, st := pl.newKernelStep(in, env)
	mb := (d.M + dotRows - 1) / dotRows
	st.rows, st.work = d.B*mb, d.B*d.M*d.N*d.K
	c, A, B := k.buf(0, types.Float), k.buf(1, types.Float), k.buf(2, types.Float)
	fma := k.g.declare("llvm.fmuladd.f32", types.Float, types.Float, types.Float, types.Float)
	k.loop(k.lo, k.hi, nil, func(rb value.Value, _ []value.Value) []value.Value {
		b := k.cur.NewSDiv(rb, ci(mb))
		m0 := k.cur.NewMul(k.cur.NewSRem(rb, ci(mb)), ci(dotRows))
		aBase := k.mulAdd(b, d.lb, ci(0))
		bBase := k.mulAdd(b, d.rb, ci(0))
		cRow := func(m value.Value) value.Value { return k.mulAdd(k.mulAdd(b, d.M, m), d.N, ci(0)) }
		rowsOf := func(m value.Value, n int) {
			ms := make([]value.Value, n)
			for i := range ms {
				ms[i] = k.cur.NewAdd(m, ci(int64(i)))
			}
			if d.rn == 1 {
				pl.dotAxpy(k, d, c, A, B, fma, ms, aBase, bBase, cRow)
			} else {
				pl.dotInner(k, d, c, A, B, ms, aBase, bBase, cRow)
			}
		}
		full := k.cur.NewICmp(enum.IPredSLE, k.cur.NewAdd(m0, ci(dotRows)), ci(d.M))
		blk, tail, join := k.f.NewBlock(""), k.f.NewBlock(""), k.f.NewBlock("")
		k.cur.NewCondBr(full, blk, tail)
		k.cur = blk
		rowsOf(m0, dotRows)
		k.cur.NewBr(join)
		k.cur = tail
		k.loop(m0, ci(d.M), nil, func(m value.Value, _ []value.Value) []value.Value {
			rowsOf(m, 1)
			return nil
		})
		k.cur.NewBr(join)
		k.cur = join
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// dotTile is the micro-kernel's width: two <8 x float> vectors per row.
const dotTile = 16

var v8 = types.NewVector(8, types.Float)

// dotAxpy computes len(ms) rows of the result: a register-blocked
// micro-kernel keeps a len(ms) x 16 tile of the result in vector
// accumulators over the whole k loop (each rhs vector loaded once per
// tile, each lhs element broadcast), then stores it; the columns past the
// last full tile are dot products.
func (pl *planner) dotAxpy(k *kfn, d dotShape, c, A, B value.Value, fma *lir.Func, ms []value.Value, aBase, bBase value.Value, cRow func(value.Value) value.Value) {
	vfma := k.g.declare("llvm.fmuladd.v8f32", v8, v8, v8, v8)
	zero := constant.NewZeroInitializer(v8)
	tiles := d.N / dotTile
	k.loopN(tiles, func(t value.Value) {
		n0 := k.cur.NewMul(t, ci(dotTile))
		init := make([]value.Value, 2*len(ms))
		for i := range init {
			init[i] = zero
		}
		acc := k.loop(ci(0), ci(d.K), init, func(kk value.Value, acc []value.Value) []value.Value {
			bAt := k.cur.NewAdd(k.mulAdd(kk, d.rk, bBase), n0)
			b0 := k.vload(B, bAt)
			b1 := k.vload(B, k.cur.NewAdd(bAt, ci(8)))
			next := make([]value.Value, len(acc))
			for i, m := range ms {
				a := k.load(types.Float, A, k.mulAdd(m, d.lm, k.mulAdd(kk, d.lk, aBase)))
				av := k.splat(a)
				next[2*i] = k.cur.NewCall(vfma, av, b0, acc[2*i])
				next[2*i+1] = k.cur.NewCall(vfma, av, b1, acc[2*i+1])
			}
			return next
		})
		for i, m := range ms {
			at := k.cur.NewAdd(cRow(m), n0)
			k.vstore(acc[2*i], c, at)
			k.vstore(acc[2*i+1], c, k.cur.NewAdd(at, ci(8)))
		}
	})
	if rest := d.N - tiles*dotTile; rest > 0 {
		for _, m := range ms {
			row := cRow(m)
			aRow := k.mulAdd(m, d.lm, aBase)
			k.loop(ci(tiles*dotTile), ci(d.N), nil, func(n value.Value, _ []value.Value) []value.Value {
				bCol := k.cur.NewAdd(n, bBase)
				acc := k.loop(ci(0), ci(d.K), []value.Value{f32(0)}, func(kk value.Value, acc []value.Value) []value.Value {
					av := k.load(types.Float, A, k.mulAdd(kk, d.lk, aRow))
					bv := k.load(types.Float, B, k.mulAdd(kk, d.rk, bCol))
					return []value.Value{k.cur.NewCall(fma, av, bv, acc[0])}
				})
				k.store(acc[0], c, k.cur.NewAdd(row, n))
				return nil
			})
		}
	}
}

// vload loads 8 floats at p[idx] (4-byte aligned).
func (k *kfn) vload(p, idx value.Value) value.Value {
	ptr := k.cur.NewBitCast(k.at(types.Float, p, idx), types.NewPointer(v8))
	l := k.cur.NewLoad(v8, ptr)
	l.Align = 4
	return l
}

func (k *kfn) vstore(v, p, idx value.Value) {
	ptr := k.cur.NewBitCast(k.at(types.Float, p, idx), types.NewPointer(v8))
	s := k.cur.NewStore(v, ptr)
	s.Align = 4
}

// splat broadcasts a float to all 8 lanes.
func (k *kfn) splat(x value.Value) value.Value {
	one := k.cur.NewInsertElement(constant.NewUndef(v8), x, constant.NewInt(types.I32, 0))
	mask := constant.NewZeroInitializer(types.NewVector(8, types.I32))
	return k.cur.NewShuffleVector(one, constant.NewUndef(v8), mask)
}

// dotInner computes each element as a dot product over k (the rhs is
// contiguous along k, or nothing is).
func (pl *planner) dotInner(k *kfn, d dotShape, c, A, B value.Value, ms []value.Value, aBase, bBase value.Value, cRow func(value.Value) value.Value) {
	for _, m := range ms {
		row := cRow(m)
		aRow := k.mulAdd(m, d.lm, aBase)
		k.loopN(d.N, func(n value.Value) {
			bCol := k.mulAdd(n, d.rn, bBase)
			acc := k.loop(ci(0), ci(d.K), []value.Value{f32(0)}, func(kk value.Value, acc []value.Value) []value.Value {
				av := k.load(types.Float, A, k.mulAdd(kk, d.lk, aRow))
				bv := k.load(types.Float, B, k.mulAdd(kk, d.rk, bCol))
				return []value.Value{fast(k.cur.NewFAdd(acc[0], fast(k.cur.NewFMul(av, bv))))}
			})
			k.store(acc[0], c, k.cur.NewAdd(row, n))
		})
	}
}
