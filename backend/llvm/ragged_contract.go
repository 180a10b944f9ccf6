package llvm

import (
	"fmt"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// ragged_contract (ragged_dot's weight gradient) in f32: lhs [m,k], rhs
// [m,n], i32 group sizes [g] -> [g,k,n], result[i] = lhs[rows of group i]ᵀ ·
// rhs[rows of group i], the groups' rows as ragged_dot's (a running sum of
// the sizes, negative sizes as 0, cut at m); a group with no rows is 0
// (docs/ops.md, backend/cpu/ragged.go).
//
// Each group's product is a matrix product of its own whose contraction
// runs over the group's rows, which only the sizes give, at run time. The
// kernel's range is blocks of gemmMR result rows (rows of k), so a split
// across threads gives each the same share of every group whatever the
// sizes. For each group, column tile and block, a register-blocked
// micro-kernel walks the group's rows once: the tile's floats of an rhs row
// (two vectors: 16 with AVX2's 8-float ones, 32 with AVX-512's 16-float
// ones, gen.wide) are loaded once and multiplied into the gemmMR lhs
// entries of that row (contiguous in lhs), 2·gemmMR vector accumulators
// stored when the rows end. A last vector's width of columns takes one
// vector a row; the columns past those are dot products over the rows.

// raggedContractGenerated reports whether the ragged_contract in runs as a
// kernel: f32 operands and result, i32 sizes, static shapes, nothing empty
// (fallbackReason names an empty tensor).
func raggedContractGenerated(in *ir.Instr) bool {
	l, r, g, res := in.Args[0].Type, in.Args[1].Type, in.Args[2].Type, in.Results[0].Type
	for _, t := range []ir.Type{l, r, g, res} {
		if n, _ := t.NumElements(); !t.IsStatic() || n == 0 {
			return false
		}
	}
	return l.DType == ir.F32 && r.DType == ir.F32 && res.DType == ir.F32 && g.DType == ir.I32
}

func (pl *planner) raggedContract(in *ir.Instr, env map[*ir.Value]int) bool {
	if !raggedContractGenerated(in) {
		return false
	}
	ld, rd, gd := in.Args[0].Type.Dims(), in.Args[1].Type.Dims(), in.Args[2].Type.Dims()
	x := contractCtx{M: ld[0], K: ld[1], N: rd[1], G: gd[0], vt: v8}
	k, st := pl.newKernelStep(in, env)
	if k.g.wide {
		x.vt = v16
	}
	x.tiles = x.N / (2 * int64(x.vt.Len))
	x.k = k
	st.rows, st.work = (x.K+gemmMR-1)/gemmMR, x.M*x.K*x.N
	x.c, x.A, x.B = k.buf(0, types.Float), k.buf(1, types.Float), k.buf(2, types.Float)
	x.sizes = k.buf(3, types.I32)
	x.fma = k.g.declare("llvm.fmuladd.f32", types.Float, types.Float, types.Float, types.Float)
	x.vfma = k.g.declare(fmt.Sprintf("llvm.fmuladd.v%df32", x.vt.Len), x.vt, x.vt, x.vt, x.vt)
	x.emit()
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// contractCtx is one ragged_contract kernel being generated.
type contractCtx struct {
	k            *kfn
	M, K, N, G   int64
	vt           *types.VectorType // v8, or v16 with AVX-512
	tiles        int64             // full tiles of two vectors a row
	c, A, B      value.Value
	sizes        value.Value
	fma, vfma    value.Value
	rowLo, rowHi value.Value // the current group's rows
	cBase        value.Value // the current group's result: c + g*K*N
}

// emit loops over the groups, carrying the running end, and over the call's
// blocks of result rows in each, tile by tile: a tile's column of the
// group's rhs rows (one or two vectors a row) stays in L1 while the call's
// blocks pass over it. Every group's block is stored, so a group with no
// rows gets its zeros.
func (x *contractCtx) emit() {
	k := x.k
	k.loop(ci(0), ci(x.G), []value.Value{ci(0)}, func(g value.Value, acc []value.Value) []value.Value {
		size := k.smax(k.cur.NewSExt(k.load(types.I32, x.sizes, g), i64), ci(0))
		next := k.cur.NewAdd(acc[0], size)
		x.rowLo, x.rowHi = k.smin(acc[0], ci(x.M)), k.smin(next, ci(x.M))
		x.cBase = k.mulAdd(g, x.K*x.N, ci(0))
		lanes := int64(x.vt.Len)
		k.loop(ci(0), ci(x.tiles), nil, func(t value.Value, _ []value.Value) []value.Value {
			n0 := k.cur.NewMul(t, ci(2*lanes))
			x.blocks(func(k0 value.Value, n int64) { x.micro(k0, n, n0, 2) })
			return nil
		})
		done := x.tiles * 2 * lanes
		if x.N-done >= lanes {
			x.blocks(func(k0 value.Value, n int64) { x.micro(k0, n, ci(done), 1) })
			done += lanes
		}
		if done < x.N {
			x.blocks(func(k0 value.Value, n int64) { x.rest(k0, n, done) })
		}
		return []value.Value{next}
	})
}

// blocks runs body for each of the call's blocks of result rows: from k0,
// n rows (gemmMR, or fewer in the last block, whose count is known here).
func (x *contractCtx) blocks(body func(k0 value.Value, n int64)) {
	k := x.k
	full := x.K / gemmMR
	k.loop(k.lo, k.hi, nil, func(b value.Value, _ []value.Value) []value.Value {
		k0 := k.cur.NewMul(b, ci(gemmMR))
		if full*gemmMR == x.K {
			body(k0, gemmMR)
			return nil
		}
		k.ifElse(k.cur.NewICmp(enum.IPredSLT, b, ci(full)), func() { body(k0, gemmMR) },
			func() { body(k0, x.K-full*gemmMR) })
		return nil
	})
}

// rest computes the columns from col0 of result rows [k0, k0+n) as dot
// products over the group's rows.
func (x *contractCtx) rest(k0 value.Value, n, col0 int64) {
	k := x.k
	for i := int64(0); i < n; i++ {
		kk := k.cur.NewAdd(k0, ci(i))
		k.loop(ci(col0), ci(x.N), nil, func(col value.Value, _ []value.Value) []value.Value {
			s := k.loop(x.rowLo, x.rowHi, []value.Value{f32(0)}, func(r value.Value, acc []value.Value) []value.Value {
				a := k.load(types.Float, x.A, k.mulAdd(r, x.K, kk))
				b := k.load(types.Float, x.B, k.mulAdd(r, x.N, col))
				return []value.Value{k.cur.NewCall(x.fma, a, b, acc[0])}
			})[0]
			k.store(s, x.c, k.cur.NewAdd(x.cBase, k.mulAdd(kk, x.N, col)))
			return nil
		})
	}
}

// micro computes result rows [k0, k0+n) at the vecs vectors of columns
// from n0 over the group's rows.
func (x *contractCtx) micro(k0 value.Value, n int64, n0 value.Value, vecs int64) {
	k := x.k
	lanes := int64(x.vt.Len)
	init := make([]value.Value, vecs*n)
	for i := range init {
		init[i] = constant.NewZeroInitializer(x.vt)
	}
	acc := k.loop(x.rowLo, x.rowHi, init, func(r value.Value, acc []value.Value) []value.Value {
		at := k.mulAdd(r, x.N, n0)
		bs := make([]value.Value, vecs)
		for v := range bs {
			bs[v] = k.vloadOf(x.vt, x.B, k.cur.NewAdd(at, ci(int64(v)*lanes)))
		}
		aRow := k.mulAdd(r, x.K, k0)
		next := make([]value.Value, len(acc))
		for i := int64(0); i < n; i++ {
			av := k.splatOf(x.vt, k.load(types.Float, x.A, k.cur.NewAdd(aRow, ci(i))))
			for v := int64(0); v < vecs; v++ {
				next[vecs*i+v] = k.cur.NewCall(x.vfma, av, bs[v], acc[vecs*i+v])
			}
		}
		return next
	})
	for i := int64(0); i < n; i++ {
		at := k.cur.NewAdd(x.cBase, k.cur.NewAdd(k.mulAdd(k.cur.NewAdd(k0, ci(i)), x.N, ci(0)), n0))
		for v := int64(0); v < vecs; v++ {
			k.vstoreOf(acc[vecs*i+v], x.c, k.cur.NewAdd(at, ci(v*lanes)))
		}
	}
}
