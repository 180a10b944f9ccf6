package llvm

import (
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// ragged_dot (the grouped matmul of MoE layers) in f32: lhs [m,k], rhs
// [g,k,n], i32 group sizes [g] -> [m,n]. Row r of lhs is multiplied by
// rhs[i] when end[i-1] <= r < end[i], end being the running sum of the
// sizes with negative sizes taken as 0; rows past the groups are 0 and
// groups past m are cut at m (docs/ops.md, backend/cpu/ragged.go).
//
// The kernel's range is the 16-column tiles of the result (and one more
// index for the columns past the last full tile), so a split across
// goroutines gives each the same share of every expert's weights whatever
// the group sizes, which are known only when the kernel runs. Inside a
// call the loop is group by group, then tile by tile:
//
//   - a group of few rows (a decode step: about 4 rows per expert) runs
//     the register-blocked micro-kernel straight on the expert's weights:
//     each 16-float line of the tile is loaded once and multiplied into
//     every row of the group, so the weights are read from memory exactly
//     once, which is the cost of decoding;
//   - a group of many rows (prefill) first packs the tile's panel (k x 16)
//     into scratch, as dot_general does, so the micro-kernel's row blocks
//     read one cache line per k step instead of one page.
//
// f16 and bf16 stay on the reference kernel.

// raggedPackRows is the group size from which a tile's panel is packed:
// packing reads and writes the panel once, which pays off when more than
// one block of rows passes over it.
const raggedPackRows = 2 * dotRows

func (pl *planner) raggedDot(in *ir.Instr, env map[*ir.Value]int) bool {
	l, r, g, res := in.Args[0].Type, in.Args[1].Type, in.Args[2].Type, in.Results[0].Type
	for _, t := range []ir.Type{l, r, g, res} {
		if !t.IsStatic() {
			return false
		}
	}
	if l.DType != ir.F32 || r.DType != ir.F32 || res.DType != ir.F32 || g.DType != ir.I32 {
		return false
	}
	ld, rd := l.Dims(), r.Dims()
	x := raggedCtx{M: ld[0], K: ld[1], G: rd[0], N: rd[2]}
	x.tiles = x.N / dotTile
	ranges := x.tiles
	if x.tiles*dotTile < x.N {
		ranges++
	}
	if ranges == 0 || x.M == 0 {
		return false // nothing to compute: the reference kernel is as fast
	}
	k, st := pl.newKernelStep(in, env)
	x.k = k
	pl.p.scratchBytes = max(pl.p.scratchBytes, x.K*dotTile*4)
	st.rows, st.work = ranges, x.M*x.N*max(x.K, 1)
	x.c, x.A, x.B = k.buf(0, types.Float), k.buf(1, types.Float), k.buf(2, types.Float)
	x.sizes = k.buf(3, types.I32)
	x.fma = k.g.declare("llvm.fmuladd.f32", types.Float, types.Float, types.Float, types.Float)
	x.vfma = k.g.declare("llvm.fmuladd.v8f32", v8, v8, v8, v8)
	x.emit()
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// raggedCtx is one ragged_dot kernel being generated.
type raggedCtx struct {
	k             *kfn
	M, K, G, N    int64
	tiles         int64
	c, A, B       value.Value
	sizes         value.Value
	fma, vfma     value.Value
	rowLo, rowHi  value.Value // the current group's rows
	wBase         value.Value // the current group's matrix: B + g*K*N
	panel, stride value.Value // where the micro-kernel reads the tile, and its k stride
}

// emit generates the loop over groups, carrying the running end, and then
// zeroes the rows no group covers.
func (x *raggedCtx) emit() {
	k := x.k
	end := k.loop(ci(0), ci(x.G), []value.Value{ci(0)}, func(g value.Value, acc []value.Value) []value.Value {
		size := k.cur.NewSExt(k.load(types.I32, x.sizes, g), i64)
		size2 := x.smax(size, ci(0))
		next := k.cur.NewAdd(acc[0], size2)
		x.rowLo, x.rowHi = x.smin(acc[0], ci(x.M)), x.smin(next, ci(x.M))
		x.wBase = k.mulAdd(g, x.K*x.N, ci(0))
		x.ifThen(k.cur.NewICmp(enum.IPredSLT, x.rowLo, x.rowHi), x.group)
		return []value.Value{next}
	})[0]
	covered := x.smin(end, ci(x.M))
	k.loop(covered, ci(x.M), nil, func(row value.Value, _ []value.Value) []value.Value {
		x.forTiles(func(c0, c1 value.Value) {
			k.loop(c0, c1, nil, func(col value.Value, _ []value.Value) []value.Value {
				k.store(f32(0), x.c, k.mulAdd(row, x.N, col))
				return nil
			})
		})
		return nil
	})
}

// forTiles runs body for the column range of each index of [lo, hi).
func (x *raggedCtx) forTiles(body func(c0, c1 value.Value)) {
	k := x.k
	k.loop(k.lo, k.hi, nil, func(t value.Value, _ []value.Value) []value.Value {
		c0 := k.cur.NewMul(t, ci(dotTile))
		body(c0, x.smin(k.cur.NewAdd(c0, ci(dotTile)), ci(x.N)))
		return nil
	})
}

// group computes the current group's rows for every tile of the call.
func (x *raggedCtx) group() {
	k := x.k
	rows := k.cur.NewSub(x.rowHi, x.rowLo)
	pack := k.cur.NewICmp(enum.IPredSGE, rows, ci(raggedPackRows))
	panel := k.cur.NewBitCast(k.scratch, types.NewPointer(types.Float))
	k.loop(k.lo, k.hi, nil, func(t value.Value, _ []value.Value) []value.Value {
		n0 := k.cur.NewMul(t, ci(dotTile))
		full := k.cur.NewICmp(enum.IPredSLT, t, ci(x.tiles))
		x.ifElse(full, func() {
			direct := k.at(types.Float, x.B, k.cur.NewAdd(x.wBase, n0))
			x.ifThen(pack, func() { x.pack(panel, n0) })
			x.panel = k.cur.NewSelect(pack, panel, direct)
			x.stride = k.cur.NewSelect(pack, ci(dotTile), ci(x.N))
			x.rowBlocks(n0, rows)
		}, func() { x.rest(n0) })
		return nil
	})
}

// pack copies the tile's panel (K x 16 floats at column n0) into scratch.
func (x *raggedCtx) pack(panel, n0 value.Value) {
	k := x.k
	k.loopN(x.K, func(kk value.Value) {
		src := k.cur.NewAdd(k.mulAdd(kk, x.N, x.wBase), n0)
		dst := k.cur.NewMul(kk, ci(dotTile))
		k.vstore(k.vload(x.B, src), panel, dst)
		k.vstore(k.vload(x.B, k.cur.NewAdd(src, ci(8))), panel, k.cur.NewAdd(dst, ci(8)))
	})
}

// rowBlocks runs the micro-kernel over blocks of dotRows rows, then once
// over the leftover rows (a switch on their count: each count is its own
// register-blocked loop).
func (x *raggedCtx) rowBlocks(n0, rows value.Value) {
	k := x.k
	blocks := k.cur.NewSDiv(rows, ci(dotRows))
	k.loop(ci(0), blocks, nil, func(b value.Value, _ []value.Value) []value.Value {
		x.micro(k.mulAdd(b, dotRows, x.rowLo), dotRows, n0)
		return nil
	})
	first := k.mulAdd(blocks, dotRows, x.rowLo)
	left := k.cur.NewSub(x.rowHi, first)
	for n := int64(1); n < dotRows; n++ {
		x.ifThen(k.cur.NewICmp(enum.IPredEQ, left, ci(n)), func() { x.micro(first, n, n0) })
	}
}

// micro computes rows [r0, r0+n) x columns [n0, n0+16): 2n vector
// accumulators over the whole k loop, each weight vector loaded once and
// multiplied into every row.
func (x *raggedCtx) micro(r0 value.Value, n int64, n0 value.Value) {
	k := x.k
	init := make([]value.Value, 2*n)
	for i := range init {
		init[i] = constant.NewZeroInitializer(v8)
	}
	aRows := make([]value.Value, n)
	for i := range aRows {
		aRows[i] = k.mulAdd(k.cur.NewAdd(r0, ci(int64(i))), x.K, ci(0))
	}
	acc := k.loop(ci(0), ci(x.K), init, func(kk value.Value, acc []value.Value) []value.Value {
		at := k.cur.NewMul(kk, x.stride)
		b0 := k.vload(x.panel, at)
		b1 := k.vload(x.panel, k.cur.NewAdd(at, ci(8)))
		next := make([]value.Value, len(acc))
		for i := range aRows {
			av := k.splat(k.load(types.Float, x.A, k.cur.NewAdd(aRows[i], kk)))
			next[2*i] = k.cur.NewCall(x.vfma, av, b0, acc[2*i])
			next[2*i+1] = k.cur.NewCall(x.vfma, av, b1, acc[2*i+1])
		}
		return next
	})
	for i := int64(0); i < n; i++ {
		at := k.cur.NewAdd(k.mulAdd(k.cur.NewAdd(r0, ci(i)), x.N, ci(0)), n0)
		k.vstore(acc[2*i], x.c, at)
		k.vstore(acc[2*i+1], x.c, k.cur.NewAdd(at, ci(8)))
	}
}

// rest computes the columns past the last full tile of the group's rows
// as dot products over k.
func (x *raggedCtx) rest(n0 value.Value) {
	k := x.k
	k.loop(x.rowLo, x.rowHi, nil, func(row value.Value, _ []value.Value) []value.Value {
		aRow := k.mulAdd(row, x.K, ci(0))
		k.loop(n0, ci(x.N), nil, func(col value.Value, _ []value.Value) []value.Value {
			wCol := k.cur.NewAdd(x.wBase, col)
			acc := k.loop(ci(0), ci(x.K), []value.Value{f32(0)}, func(kk value.Value, acc []value.Value) []value.Value {
				av := k.load(types.Float, x.A, k.cur.NewAdd(aRow, kk))
				bv := k.load(types.Float, x.B, k.mulAdd(kk, x.N, wCol))
				return []value.Value{k.cur.NewCall(x.fma, av, bv, acc[0])}
			})
			k.store(acc[0], x.c, k.mulAdd(row, x.N, col))
			return nil
		})
		return nil
	})
}

func (x *raggedCtx) smin(a, b value.Value) value.Value {
	return x.k.cur.NewSelect(x.k.cur.NewICmp(enum.IPredSLT, a, b), a, b)
}

func (x *raggedCtx) smax(a, b value.Value) value.Value {
	return x.k.cur.NewSelect(x.k.cur.NewICmp(enum.IPredSGT, a, b), a, b)
}

// ifThen emits if cond { then() }.
func (x *raggedCtx) ifThen(cond value.Value, then func()) {
	x.ifElse(cond, then, func() {})
}

// ifElse emits if cond { then() } else { els() } and continues after both.
func (x *raggedCtx) ifElse(cond value.Value, then, els func()) {
	k := x.k
	tb, eb, join := k.f.NewBlock(""), k.f.NewBlock(""), k.f.NewBlock("")
	k.cur.NewCondBr(cond, tb, eb)
	k.cur = tb
	then()
	k.cur.NewBr(join)
	k.cur = eb
	els()
	k.cur.NewBr(join)
	k.cur = join
}
