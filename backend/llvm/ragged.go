package llvm

import (
	"fmt"
	"slices"

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
// threads gives each the same share of every expert's weights whatever
// the group sizes, which are known only when the kernel runs. Inside a
// call the loop is group by group, then tile by tile:
//
//   - a group of few rows (a decode step: about 4 rows per expert) runs
//     the register-blocked micro-kernel straight on the expert's weights:
//     each 16-float line of the tile is loaded once and multiplied into
//     every row of the group, so the weights are read from memory exactly
//     once, which is the cost of decoding;
//   - a group of many rows (prefill) is a blocked matrix product of its
//     own (gemm.go: packed panels, the 6x16 micro-kernel) over the call's
//     columns, whose first row block packs the weights as it reads them
//     (gemmFuse: an expert's 64 rows feed each packed block little work,
//     and packing it first, with nothing to overlap its reads, took a
//     quarter of the time); when the matrices are stored [n,k] (Hugging
//     Face's layout), the swapped product of ragged_swap.go instead, which
//     packs the rows and reads the weights as stored.
//
// f16 and bf16 stay on the reference kernel.

// raggedGemmRows is the group size from which a group runs as a blocked
// product: packing reads and writes the weights once more, which pays off
// when more than one block of rows passes over them.
const raggedGemmRows = 2 * gemmMR

// raggedGenerated reports whether the ragged_dot in runs as a kernel: f32,
// static shapes, and something to compute (an empty result stays on the
// reference kernel, which is as fast). The planner asks it before it
// leaves a transposed rhs unmaterialised, so the two must agree.
func raggedGenerated(in *ir.Instr) bool {
	l, r, g, res := in.Args[0].Type, in.Args[1].Type, in.Args[2].Type, in.Results[0].Type
	for _, t := range []ir.Type{l, r, g, res} {
		if !t.IsStatic() {
			return false
		}
	}
	n, _ := res.NumElements()
	return l.DType == ir.F32 && r.DType == ir.F32 && res.DType == ir.F32 && g.DType == ir.I32 && n > 0
}

// raggedRhsT is, when argument i of in is the rhs of a generated
// ragged_dot and a transpose [0,2,1] (defs: the group's virtual values),
// the transpose's operand [g,n,k]; else nil. The moe-route pass puts that
// transpose on weights stored [experts, out, in], as Hugging Face stores
// them; materialised, it copied every expert's weights on every call (a
// Qwen3-30B-A3B layer's 805 MB per projection, 2 s of a 2-layer decode
// step), where the kernel can read them as they are.
//
// The copies that bind an opened fusion's result are followed: the fusion
// pass leaves a layer loop's experts as one loop fusion of slice, reshape,
// convert and transpose beside each ragged_dot.
func raggedRhsT(in *ir.Instr, i int, defs map[*ir.Value]*ir.Instr) *ir.Value {
	if in.Op != ir.OpRaggedDot || i != 1 || !raggedGenerated(in) {
		return nil
	}
	t := defs[in.Args[1]]
	for t != nil && t.Op == ir.OpCopy {
		t = defs[t.Args[0]]
	}
	if t == nil || t.Op != ir.OpTranspose || !slices.Equal(t.Attr.(*ir.PermAttr).Perm, []int64{0, 2, 1}) {
		return nil
	}
	return t.Args[0]
}

// raggedSource is the value a ragged_dot's kernel reads for the transposed
// rhs t (raggedRhsT): through copies, a row-major reshape and a widening
// convert (operandSource) to what is in memory or a contiguous slice of it
// (a layer's experts in a stacked weight, which the group reads as a view),
// else t. The layer's experts were otherwise converted (and transposed) on
// every call: 1.8 s a projection of a bf16 Qwen3-30B-A3B-shaped layer.
func raggedSource(t *ir.Value, defs map[*ir.Value]*ir.Instr) *ir.Value {
	if x, _ := operandSource(t, defs, true); x != nil {
		return x
	}
	return t
}

func (pl *planner) raggedDot(in *ir.Instr, env map[*ir.Value]int) bool {
	if !raggedGenerated(in) {
		return false
	}
	l, r := in.Args[0].Type, in.Args[1].Type
	ld, rd := l.Dims(), r.Dims()
	x := raggedCtx{M: ld[0], K: ld[1], G: rd[0], N: rd[2], wdt: ir.F32, adt: ir.F32}
	x.tiles = x.N / gemmNR
	ranges := x.tiles
	if x.tiles*gemmNR < x.N {
		ranges++
	}
	k, st := pl.newKernelStep(in, env)
	if w := pl.raggedT[in]; w != nil {
		if src := pl.narrowSrc[w]; src != nil { // read at its width (narrow.go)
			w = src
		}
		x.wdt = w.Type.DType // f32, or f16/bf16 read through a convert (raggedSource)
		st.bufs[st.outs+1], x.rhsT = env[w], true
		st.what += " (rhs [g,n,k])"
	}
	x.k = k
	if x.dp = pl.raggedBF16(in, &x); x.dp {
		st.what += " (vdpbf16ps)"
	}
	st.rows, st.work = ranges, x.M*x.N*max(x.K, 1)
	x.c, x.A, x.B = k.buf(0, types.Float), k.buf(1, types.Float), k.fbuf(2, x.wdt).p
	x.sizes = k.buf(3, types.I32)
	x.fma = k.g.declare("llvm.fmuladd.f32", types.Float, types.Float, types.Float, types.Float)
	x.vfma = k.g.declare("llvm.fmuladd.v8f32", v8, v8, v8, v8)
	if x.byExpert() { // ragged_expert.go
		st.rows, st.each = x.G, true
		st.what += " (by expert)"
		x.emitByExpert()
		k.finish()
		pl.addStep(in, env, st)
		return true
	}
	pl.p.scratchBytes = max(pl.p.scratchBytes, gemmScratch(gemmBlocks(x.M, x.K, x.N)))
	if x.rhsT {
		pl.p.scratchBytes = max(pl.p.scratchBytes, x.swapScratch())
	}
	if x.dp {
		pl.p.scratchBytes = max(pl.p.scratchBytes, raggedBF16Scratch(x.K))
	}
	x.emit()
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// raggedCtx is one ragged_dot kernel being generated.
type raggedCtx struct {
	k            *kfn
	M, K, G, N   int64
	tiles        int64
	c, A, B      value.Value
	sizes        value.Value
	fma, vfma    value.Value
	vfma16       value.Value // ragged_expert.go's sweep
	rowLo, rowHi value.Value // the current group's rows
	pfDist       value.Value // how far below its line the micro-kernel prefetches
	wBase        value.Value // the current group's matrix: B + g*K*N
	// rhsT: the matrices are stored [n,k] (contiguous along the
	// contraction), not [k,n].
	rhsT bool
	// epi, when not nil, is a dot_general's fused epilogue at (row, col),
	// applied by the swapped product as it stores (dot_swap.go).
	epi func(m, n value.Value)
	// wdt is the matrices' dtype: f32, or f16/bf16 read at their own width
	// (narrow.go) by the kernels of matrices stored [n,k] (the swapped
	// product, streamT and rest), which are the ones that take them.
	wdt ir.DType
	// dp: the groups of many rows run on vdpbf16ps (ragged_bf16.go).
	dp bool
	// adt is the rows' dtype in A: f32, or bf16 for dotSwap on vdpbf16ps
	// (packWords); dotRows reads them at it.
	adt ir.DType
	// wide, while the swapped product generates a tile of f16/bf16
	// weights, is the tile's eight matrix rows widened to f32 in scratch
	// (widenTile); nil otherwise.
	wide value.Value
}

// emit generates the loop over groups, carrying the running end, and then
// zeroes the rows no group covers.
func (x *raggedCtx) emit() {
	k := x.k
	x.pfDist = x.prefetchDistance()
	end := k.loop(ci(0), ci(x.G), []value.Value{ci(0)}, func(g value.Value, acc []value.Value) []value.Value {
		size := k.cur.NewSExt(k.load(types.I32, x.sizes, g), i64)
		size2 := k.smax(size, ci(0))
		next := k.cur.NewAdd(acc[0], size2)
		x.rowLo, x.rowHi = k.smin(acc[0], ci(x.M)), k.smin(next, ci(x.M))
		x.wBase = k.mulAdd(g, x.K*x.N, ci(0))
		k.ifElse(k.cur.NewICmp(enum.IPredSLT, x.rowLo, x.rowHi), x.group, nil)
		return []value.Value{next}
	})[0]
	covered := k.smin(end, ci(x.M))
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
		c0 := k.cur.NewMul(t, ci(gemmNR))
		body(c0, k.smin(k.cur.NewAdd(c0, ci(gemmNR)), ci(x.N)))
		return nil
	})
}

// group computes the current group's rows for the call's columns: a
// blocked product when it has many rows, else tile by tile on the
// expert's weights as they are stored. Matrices stored [n,k] take the
// swapped product or streamT over the call's full tiles, and dot products
// for the columns past them.
func (x *raggedCtx) group() {
	k := x.k
	rows := k.cur.NewSub(x.rowHi, x.rowLo)
	if x.rhsT {
		swapped, stream := x.swapped, x.streamT
		if x.dp {
			swapped, stream = x.swappedBF16, x.streamTPairs
		}
		k.ifElse(k.cur.NewICmp(enum.IPredSGE, rows, ci(raggedSwapRows)), swapped, func() { stream(rows) })
		k.ifElse(k.cur.NewICmp(enum.IPredSGT, k.hi, ci(x.tiles)), func() { x.rest(ci(x.tiles * gemmNR)) }, nil)
		return
	}
	k.ifElse(k.cur.NewICmp(enum.IPredSGE, rows, ci(raggedGemmRows)), x.gemm, func() {
		nkb := max((x.K+raggedKB-1)/raggedKB, 1)
		k.loop(ci(0), ci(nkb), nil, func(kb value.Value, _ []value.Value) []value.Value {
			k0 := k.cur.NewMul(kb, ci(raggedKB))
			kcur := k.smin(ci(raggedKB), k.cur.NewSub(ci(x.K), k0))
			first := k.cur.NewICmp(enum.IPredEQ, kb, ci(0))
			k.loop(k.lo, k.hi, nil, func(t value.Value, _ []value.Value) []value.Value {
				n0 := k.cur.NewMul(t, ci(gemmNR))
				k.ifElse(k.cur.NewICmp(enum.IPredSLT, t, ci(x.tiles)), func() {
					x.rowBlocks(n0, rows, k0, kcur, first)
				}, func() { k.ifElse(first, func() { x.rest(n0) }, nil) })
				return nil
			})
			return nil
		})
	})
}

// raggedKB is how many rows of an expert's matrix a small group's pass
// over the call's columns reads: the micro-kernel's tiles move along the
// rows of the matrix, so memory sees raggedKB sequential streams instead
// of one line per row at a stride of n floats.
const raggedKB = 64

// gemm is the group's rows times its matrix ([k,n]) over the call's
// columns, in NC-column blocks and KC-deep slices (dot_general's
// blocking).
func (x *raggedCtx) gemm() {
	k := x.k
	mc, kc, nc := gemmBlocks(x.M, x.K, x.N)
	ap, bp, tile := k.gemmScratchPtrs(mc, kc, nc)
	lhs := gemmOperand{at: func(i, kk value.Value) value.Value { return k.load(types.Float, x.A, k.mulAdd(i, x.K, kk)) },
		// the token rows are contiguous along K: packed by register transposes
		row:   func(i value.Value) value.Value { return k.at(types.Float, x.A, k.mulAdd(i, x.K, ci(0))) },
		rowDT: ir.F32}
	rhs := gemmOperand{
		at: func(i, kk value.Value) value.Value {
			return k.load(types.Float, x.B, k.cur.NewAdd(k.mulAdd(kk, x.N, x.wBase), i))
		},
		ptr: func(i, kk value.Value) value.Value {
			return k.at(types.Float, x.B, k.cur.NewAdd(k.mulAdd(kk, x.N, x.wBase), i))
		},
	}
	c := gemmC{buf: fbuf{k: k, p: x.c, dt: ir.F32}, base: ci(0), ld: x.N}
	cLo := k.cur.NewMul(k.lo, ci(gemmNR))
	cHi := k.smin(k.cur.NewMul(k.hi, ci(gemmNR)), ci(x.N))
	rows := k.cur.NewSub(x.rowHi, x.rowLo)
	nPC := max((x.K+kc-1)/kc, 1)
	nJC := k.ceilDiv(k.cur.NewSub(cHi, cLo), nc)
	k.loop(ci(0), nJC, nil, func(jc value.Value, _ []value.Value) []value.Value {
		n0 := k.mulAdd(jc, nc, cLo)
		ncur := k.smin(ci(nc), k.cur.NewSub(cHi, n0))
		k.loop(ci(0), ci(nPC), nil, func(pc value.Value, _ []value.Value) []value.Value {
			k0 := k.cur.NewMul(pc, ci(kc))
			kcur := k.smin(ci(kc), k.cur.NewSub(ci(x.K), k0))
			// The first row block's first panel packs the full tiles as it
			// reads them (gemmFuse), the rest is packed here; later row
			// blocks of a large group read the packed block.
			fused := k.gemmPackFused(bp, rhs, n0, cHi, ncur, k0, kcur)
			first := k.cur.NewICmp(enum.IPredEQ, pc, ci(0))
			last := k.cur.NewICmp(enum.IPredEQ, pc, ci(nPC-1))
			// What is packed next: the next slice of these columns, else
			// the first slice of the next column block, else the first
			// block of the next expert.
			lastJC := k.cur.NewICmp(enum.IPredEQ, jc, k.cur.NewSub(nJC, ci(1)))
			nextK0 := k.cur.NewSelect(last, ci(0), k.cur.NewAdd(k0, ci(kc)))
			shift := k.cur.NewSelect(last, k.cur.NewSelect(lastJC, k.cur.NewSub(cLo, n0), ci(nc)), ci(0))
			nextW := k.cur.NewSelect(k.cur.NewAnd(last, lastJC), ci(x.K*x.N), ci(0))
			k.loop(ci(0), k.ceilDiv(rows, mc), nil, func(ic value.Value, _ []value.Value) []value.Value {
				m0 := k.mulAdd(ic, mc, x.rowLo)
				mcur := k.smin(ci(mc), k.cur.NewSub(x.rowHi, m0))
				fuse := *fused
				fuse.full = k.cur.NewSelect(k.cur.NewICmp(enum.IPredEQ, ic, ci(0)), fused.full, ci(0))
				k.gemmBlock(lhs, c, ap, bp, tile, m0, x.rowHi, mcur, n0, cHi, ncur, k0, kcur, first, last,
					func(nt, line value.Value) {
						x.prefetchNext(k.cur.NewAdd(nt, shift), line, nextK0, k.cur.NewAdd(x.wBase, nextW), kc)
					}, &fuse)
				return nil
			})
			return nil
		})
		return nil
	})
}

// rowBlocks runs the micro-kernel over blocks of gemmMR rows, then once
// over the leftover rows (a switch on their count: each count is its own
// register-blocked loop).
func (x *raggedCtx) rowBlocks(n0, rows, k0, kcur, first value.Value) {
	k := x.k
	blocks := k.cur.NewSDiv(rows, ci(gemmMR))
	k.loop(ci(0), blocks, nil, func(b value.Value, _ []value.Value) []value.Value {
		x.micro(k.mulAdd(b, gemmMR, x.rowLo), gemmMR, n0, k0, kcur, first)
		return nil
	})
	r0 := k.mulAdd(blocks, gemmMR, x.rowLo)
	left := k.cur.NewSub(x.rowHi, r0)
	for n := int64(1); n < gemmMR; n++ {
		k.ifElse(k.cur.NewICmp(enum.IPredEQ, left, ci(n)), func() { x.micro(r0, n, n0, k0, kcur, first) }, nil)
	}
}

// micro adds rows [r0, r0+n) of lhs x rows [k0, k0+kcur) of the matrix
// into columns [n0, n0+16) of the result (stores them when first): 2n
// vector accumulators, each weight vector loaded once and multiplied into
// every row.
func (x *raggedCtx) micro(r0 value.Value, n int64, n0, k0, kcur, first value.Value) {
	k := x.k
	zero := constant.NewZeroInitializer(v8)
	init := make([]value.Value, 2*n)
	for i := range init {
		// Before the first slice the result holds anything: select, not add.
		at := k.cur.NewAdd(k.mulAdd(k.cur.NewAdd(r0, ci(int64(i/2))), x.N, ci(0)), k.cur.NewAdd(n0, ci(int64(8*(i%2)))))
		init[i] = k.cur.NewSelect(first, zero, k.vload(x.c, at))
	}
	aRows := make([]value.Value, n)
	for i := range aRows {
		aRows[i] = k.mulAdd(k.cur.NewAdd(r0, ci(int64(i))), x.K, ci(0))
	}
	acc := k.loop(k0, k.cur.NewAdd(k0, kcur), init, func(kk value.Value, acc []value.Value) []value.Value {
		at := k.cur.NewAdd(k.mulAdd(kk, x.N, x.wBase), n0)
		b0 := k.vload(x.B, at)
		b1 := k.vload(x.B, k.cur.NewAdd(at, ci(8)))
		x.prefetch(k.cur.NewAdd(at, x.pfDist))
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
			var wCol value.Value = k.cur.NewAdd(x.wBase, col)
			step := x.N // B[k][col] along k
			if x.rhsT {
				wCol, step = k.mulAdd(col, x.K, x.wBase), 1 // B[col][k]
			}
			acc := k.loop(ci(0), ci(x.K), []value.Value{f32(0)}, func(kk value.Value, acc []value.Value) []value.Value {
				av := k.load(types.Float, x.A, k.cur.NewAdd(aRow, kk))
				bv := k.loadDT(x.B, k.mulAdd(kk, step, wCol), x.wdt)
				return []value.Value{k.cur.NewCall(x.fma, av, bv, acc[0])}
			})
			k.store(acc[0], x.c, k.mulAdd(row, x.N, col))
			return nil
		})
		return nil
	})
}

// raggedPFPass is the most bytes a thread's pass over its columns (raggedKB
// rows of them) may take for the micro-kernel to prefetch two passes ahead;
// a larger pass is prefetched one pass ahead. For each line it reads the
// micro-kernel asks for the same line that many slices below: 192 KB per
// thread ahead at n = 768 with two passes, in L2. One pass ahead was 15-20 %
// slower there on the host of 5cfdb9e (BenchmarkRaggedDot/decode; level on
// Zen 5); a prefetch a few rows ahead in the same tile, less than one
// memory latency ahead, slower still. At n = 2048 (an expert's down
// projection) a thread's pass is 256 KB, and two of them ahead with the
// current one filled most of a 1 MiB L2: 24-28 GB/s of weights read against
// 34-38 one pass ahead. Past the expert's last slices it fetches the next
// expert's first ones.
const raggedPFPass = 128 << 10

// prefetchDistance is how many floats below its line the micro-kernel
// prefetches in this call: two passes (raggedKB rows each) when the
// call's columns make a pass of at most raggedPFPass bytes, else one.
func (x *raggedCtx) prefetchDistance() value.Value {
	k := x.k
	passBytes := k.cur.NewMul(k.cur.NewSub(k.hi, k.lo), ci(raggedKB*gemmNR*4))
	small := k.cur.NewICmp(enum.IPredSLE, passBytes, ci(raggedPFPass))
	return k.cur.NewSelect(small, ci(2*raggedKB*x.N), ci(raggedKB*x.N))
}

// prefetch asks for the line of the weights at B[at] into L2.
func (x *raggedCtx) prefetch(at value.Value) {
	x.k.prefetchL2(x.k.cur.NewGetElementPtr(types.Float, x.B, at))
}

// prefetchWeight asks for the line of the matrices' element at (of x.wdt)
// into L2, the offset clamped into the matrices: the prefetches that run
// ahead of a matrix's end would otherwise address past the buffer, and an
// inbounds address past it is poison, even for a hint.
func (x *raggedCtx) prefetchWeight(at value.Value) {
	_, elem, _ := elemType(x.wdt)
	x.k.prefetchL2(x.k.at(elem, x.B, x.k.smin(at, ci(max(x.G*x.N*x.K-1, 0)))))
}

// streamT computes a small group's rows for the call's full tiles when the
// matrices are stored [n,k]: gemv.go's way, for raggedTCols rows of the
// matrix at a time, eight contracting elements per step, every lhs row's
// vector multiplied into its own accumulator, each accumulator summed
// across lanes at the end. Rows go raggedTRows at a time, then the rest (a
// switch on its count); each matrix row is read once per block of rows.
func (x *raggedCtx) streamT(rows value.Value) {
	k := x.k
	k.loop(k.lo, k.smin(k.hi, ci(x.tiles)), nil, func(t value.Value, _ []value.Value) []value.Value {
		n0 := k.cur.NewMul(t, ci(gemmNR))
		blocks := k.cur.NewSDiv(rows, ci(raggedTRows))
		k.loop(ci(0), blocks, nil, func(b value.Value, _ []value.Value) []value.Value {
			x.tileT(k.mulAdd(b, raggedTRows, x.rowLo), raggedTRows, n0)
			return nil
		})
		r0 := k.mulAdd(blocks, raggedTRows, x.rowLo)
		left := k.cur.NewSub(x.rowHi, r0)
		for n := int64(1); n < raggedTRows; n++ {
			k.ifElse(k.cur.NewICmp(enum.IPredEQ, left, ci(n)), func() { x.tileT(r0, n, n0) }, nil)
		}
		return nil
	})
}

const (
	raggedTRows = 4 // lhs rows at a time: 4 x raggedTCols accumulators
	raggedTCols = 4 // matrix rows (result columns) at a time
)

// tileT computes rows [r0, r0+n) of the result at the 16 columns from n0.
func (x *raggedCtx) tileT(r0 value.Value, n int64, n0 value.Value) { x.dotRows(r0, n, n0, gemmNR, v8) }

// dotRows computes rows [r0, r0+n) of the result at the cols columns
// from n0 (a multiple of raggedTCols) as dot products along the
// contraction in vectors of vt, raggedTCols matrix rows at a time: each
// step loads their vectors once and multiplies every lhs row's vector
// into its own accumulator; each accumulator is summed across its lanes
// at the end, the contraction's last elements one at a time. The matrix
// rows are those in x.B, or while the swapped product generates a tile
// of f16/bf16 weights, that tile's rows widened to f32 (x.wide, from
// column n0); the lhs rows are read at their dtype (x.adt). Each result
// is stored, then given the epilogue (x.epi).
func (x *raggedCtx) dotRows(r0 value.Value, n int64, n0 value.Value, cols int64, vt *types.VectorType) {
	k := x.k
	lanes := int64(vt.Len)
	vfma := k.g.declare(fmt.Sprintf("llvm.fmuladd.v%df32", vt.Len), vt, vt, vt, vt)
	fma := k.g.declare("llvm.fmuladd.f32", types.Float, types.Float, types.Float, types.Float)
	aRow := make([]value.Value, n)
	for i := range aRow {
		aRow[i] = k.mulAdd(k.cur.NewAdd(r0, ci(int64(i))), x.K, ci(0))
	}
	for c0 := int64(0); c0 < cols; c0 += raggedTCols {
		src, dt, wRow := x.B, x.wdt, x.matrixRows(k.cur.NewAdd(n0, ci(c0)), raggedTCols)
		if x.wide != nil {
			src, dt = x.wide, ir.F32
			for c := range wRow {
				wRow[c] = ci((c0 + int64(c)) * x.K)
			}
		}
		init := make([]value.Value, n*raggedTCols)
		for i := range init {
			init[i] = constant.NewZeroInitializer(vt)
		}
		acc := k.loop(ci(0), ci(x.K/lanes), init, func(kv value.Value, acc []value.Value) []value.Value {
			kk := k.cur.NewMul(kv, ci(lanes))
			ws := make([]value.Value, raggedTCols)
			for c := range ws {
				ws[c] = k.vloadDTOf(vt, src, k.cur.NewAdd(wRow[c], kk), dt)
			}
			next := make([]value.Value, len(acc))
			for i := range aRow {
				av := k.vloadDTOf(vt, x.A, k.cur.NewAdd(aRow[i], kk), x.adt)
				for c := range ws {
					j := int64(i)*raggedTCols + int64(c)
					next[j] = k.cur.NewCall(vfma, av, ws[c], acc[j])
				}
			}
			return next
		})
		for i := range aRow {
			row := k.cur.NewAdd(r0, ci(int64(i)))
			for c := range wRow {
				s := acc[int64(i)*raggedTCols+int64(c)]
				if lanes > 8 {
					s = k.cur.NewFAdd(k.half8(s, 0), k.half8(s, 1))
				}
				tail := k.loop(ci(x.K/lanes*lanes), ci(x.K), []value.Value{k.hsum(s)}, func(kk value.Value, t []value.Value) []value.Value {
					av := k.loadDT(x.A, k.cur.NewAdd(aRow[i], kk), x.adt)
					wv := k.loadDT(src, k.cur.NewAdd(wRow[c], kk), dt)
					return []value.Value{k.cur.NewCall(fma, av, wv, t[0])}
				})
				col := k.cur.NewAdd(n0, ci(c0+int64(c)))
				k.store(tail[0], x.c, k.mulAdd(row, x.N, col))
				if x.epi != nil {
					x.epi(row, col)
				}
			}
		}
	}
}

// prefetchNext asks for line (line) of what the group's blocked product
// packs next for a column panel: rows [k0, k0+kc) of the 16 columns from
// col of the matrix at w, kc lines in all, one per row (lines past kc ask
// for the last one). Packing read the weights from memory with nothing to
// overlap: at 64 rows per expert a slice took about as long to pack as to
// multiply (BenchmarkRaggedDot/prefill-qwen3-up: best 125 GFLOP/s without
// these prefetches, 140-147 with them).
func (x *raggedCtx) prefetchNext(col, line, k0, w value.Value, kc int64) {
	k := x.k
	line = k.smin(line, ci(kc-1))
	at := k.cur.NewAdd(k.cur.NewAdd(k.cur.NewMul(k.cur.NewAdd(k0, line), ci(x.N)), w), col)
	x.prefetch(k.smin(at, ci(x.G*x.K*x.N-1)))
}
