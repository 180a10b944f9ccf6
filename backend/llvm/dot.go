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

// dotRows is how many rows of the result the micro-kernel computes at once:
// 6 rows x 2 vectors are 12 accumulators, which with two rhs vectors and a
// broadcast lhs element fill AVX2's 16 vector registers.
const dotRows = 6

// dot generates an f32 dot_general. The kernel's outer range is (batch,
// column tile of 16): each tile's rhs panel (K x 16) is read from memory
// once and stays in cache while every row block of the lhs passes over it.
// With a rhs strided along n (or a last tile narrower than 16) each
// element is a dot product over k instead.
func (pl *planner) dot(in *ir.Instr, env map[*ir.Value]int) bool {
	d, ok := analyseDot(in)
	if !ok {
		return false
	}
	k, st := pl.newKernelStep(in, env)
	pl.p.scratchBytes = max(pl.p.scratchBytes, d.K*dotTile*4)
	tiles := d.N / dotTile
	if d.rn != 1 {
		tiles = 0
	}
	perB := tiles
	if tiles*dotTile < d.N {
		perB++ // one more range index for the leftover columns
	}
	st.rows, st.work = d.B*perB, d.B*d.M*d.N*d.K
	c, A, B := k.buf(0, types.Float), k.buf(1, types.Float), k.buf(2, types.Float)
	fma := k.g.declare("llvm.fmuladd.f32", types.Float, types.Float, types.Float, types.Float)
	k.loop(k.lo, k.hi, nil, func(r value.Value, _ []value.Value) []value.Value {
		b := k.cur.NewSDiv(r, ci(perB))
		t := k.cur.NewSRem(r, ci(perB))
		x := dotCtx{k: k, d: d, c: c, A: A, B: B, fma: fma,
			aBase: k.mulAdd(b, d.lb, ci(0)), bBase: k.mulAdd(b, d.rb, ci(0)), cBase: k.mulAdd(b, d.M*d.N, ci(0))}
		isTile := k.cur.NewICmp(enum.IPredSLT, t, ci(tiles))
		tileB, restB, join := k.f.NewBlock(""), k.f.NewBlock(""), k.f.NewBlock("")
		k.cur.NewCondBr(isTile, tileB, restB)
		k.cur = tileB
		x.tile(k.cur.NewMul(t, ci(dotTile)))
		k.cur.NewBr(join)
		k.cur = restB
		x.rest(tiles * dotTile)
		k.cur.NewBr(join)
		k.cur = join
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// dotCtx is one (batch, tile) of a dot kernel.
type dotCtx struct {
	k                   *kfn
	d                   dotShape
	c, A, B             value.Value
	fma                 *lir.Func
	aBase, bBase, cBase value.Value
}

// tile computes columns [n0, n0+16) of every row. It first packs the
// rhs panel (K x 16) contiguously into scratch, so the micro-kernel reads
// one cache line per k instead of one page per k, then runs blocks of
// dotRows rows and one block of the leftover rows.
func (x *dotCtx) tile(n0 value.Value) {
	k, d := x.k, x.d
	panel := k.cur.NewBitCast(k.scratch, types.NewPointer(types.Float))
	k.loopN(d.K, func(kk value.Value) {
		src := k.cur.NewAdd(k.mulAdd(kk, d.rk, x.bBase), n0)
		dst := k.cur.NewMul(kk, ci(dotTile))
		k.vstore(k.vload(x.B, src), panel, dst)
		k.vstore(k.vload(x.B, k.cur.NewAdd(src, ci(8))), panel, k.cur.NewAdd(dst, ci(8)))
	})
	full := d.M / dotRows
	block := func(m0 value.Value, n int64) {
		ms := make([]value.Value, n)
		for i := range ms {
			ms[i] = k.cur.NewAdd(m0, ci(int64(i)))
		}
		x.micro(ms, panel, n0)
	}
	k.loopN(full, func(blk value.Value) { block(k.cur.NewMul(blk, ci(dotRows)), dotRows) })
	if left := d.M - full*dotRows; left > 0 {
		block(ci(full*dotRows), left)
	}
}

// rest computes columns [from, N) of every row as dot products.
func (x *dotCtx) rest(from int64) {
	k, d := x.k, x.d
	k.loopN(d.M, func(m value.Value) {
		aRow := k.mulAdd(m, d.lm, x.aBase)
		row := k.mulAdd(m, d.N, x.cBase)
		k.loop(ci(from), ci(d.N), nil, func(n value.Value, _ []value.Value) []value.Value {
			bCol := k.mulAdd(n, d.rn, x.bBase)
			acc := k.loop(ci(0), ci(d.K), []value.Value{f32(0)}, func(kk value.Value, acc []value.Value) []value.Value {
				av := k.load(types.Float, x.A, k.mulAdd(kk, d.lk, aRow))
				bv := k.load(types.Float, x.B, k.mulAdd(kk, d.rk, bCol))
				return []value.Value{k.cur.NewCall(x.fma, av, bv, acc[0])}
			})
			k.store(acc[0], x.c, k.cur.NewAdd(row, n))
			return nil
		})
	})
}

// dotTile is the micro-kernel's width: two <8 x float> vectors per row.
const dotTile = 16

var v8 = types.NewVector(8, types.Float)

// micro is the register-blocked micro-kernel: len(ms) rows x 16 columns
// of the result kept in vector accumulators over the whole k loop (each
// rhs vector loaded once, each lhs element broadcast), then stored.
func (x *dotCtx) micro(ms []value.Value, panel, n0 value.Value) {
	k, d := x.k, x.d
	vfma := k.g.declare("llvm.fmuladd.v8f32", v8, v8, v8, v8)
	init := make([]value.Value, 2*len(ms))
	for i := range init {
		init[i] = constant.NewZeroInitializer(v8)
	}
	aRows := make([]value.Value, len(ms))
	for i, m := range ms {
		aRows[i] = k.mulAdd(m, d.lm, x.aBase)
	}
	acc := k.loop(ci(0), ci(d.K), init, func(kk value.Value, acc []value.Value) []value.Value {
		bAt := k.cur.NewMul(kk, ci(dotTile))
		b0 := k.vload(panel, bAt)
		b1 := k.vload(panel, k.cur.NewAdd(bAt, ci(8)))
		next := make([]value.Value, len(acc))
		for i := range ms {
			av := k.splat(k.load(types.Float, x.A, k.mulAdd(kk, d.lk, aRows[i])))
			next[2*i] = k.cur.NewCall(vfma, av, b0, acc[2*i])
			next[2*i+1] = k.cur.NewCall(vfma, av, b1, acc[2*i+1])
		}
		return next
	})
	for i, m := range ms {
		at := k.cur.NewAdd(k.mulAdd(m, d.N, x.cBase), n0)
		k.vstore(acc[2*i], x.c, at)
		k.vstore(acc[2*i+1], x.c, k.cur.NewAdd(at, ci(8)))
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
