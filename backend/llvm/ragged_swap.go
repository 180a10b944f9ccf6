package llvm

import (
	"fmt"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// The product of a group of many rows when the experts' matrices are
// stored [n,k] (Hugging Face's [experts, out, in], the moe-route pass's
// transposed operand). A prefill gives an expert a few dozen rows (512
// tokens at top-8 of 128: 32 on average), and the blocked product of
// gemm.go packed every expert's matrix: a read of the weights from memory
// and a write, with little work to hide it behind.
//
// Here the roles are swapped: the result's transpose is the matrix times
// the rows' transpose. The group's rows, the small operand, are packed
// transposed once per call into 16-row panels ([k][16], register
// transposes); the matrix is read as it is stored, eight of its rows at a
// time, each element broadcast across the panel's rows. The micro-kernel
// keeps an 8 x 16 tile (8 result columns x 16 rows) in sixteen vectors
// over the whole contraction (smaller tiles and dot products take a
// chunk's last rows: swapKinds), so
// the matrix streams from memory once per chunk of rows and every panel
// after the first finds its eight rows in cache; the tile is transposed in
// registers and stored row by row. With AVX-512 a tile covers two panels
// (swapKinds).
//
// BenchmarkRaggedDot/prefill-t32 (128 experts of 32 rows, best of 8, the
// blocked product first): up 121-133 -> 179 GFLOP/s, down 107-129 -> 159;
// with the sizes drawn at random (mean 32) up 96-122 -> 120-148, down
// 108-118 -> 137-157; at 16 rows 91-100 -> 135-166; at 64 rows 159-171 ->
// 160-179. Prefetching the next eight rows of the matrix in software made
// no difference that this VM's noise let through.

// raggedSwapRows is the group size from which the swapped product runs:
// below it the rows go a few at a time through streamT, each block of them
// reading the matrix as 8-float vectors (at 4 rows per expert, a batch-64
// decode, 21-23 GB/s of weights against the swapped product's 17-18; at 8
// rows the swapped product's 18-21 against 15-18, BenchmarkRaggedDot/
// prefill-t4 and -t8).
const raggedSwapRows = 8

// raggedSwapPanels is how many 16-row panels a chunk of a group's rows
// packs: the packed chunk (raggedSwapPanels*16*k floats) should stay in
// L2 next to the matrix rows being read, at most 512 KiB.
func raggedSwapPanels(k int64) int64 {
	return max(1, min(4, (512<<10)/(gemmNR*4*max(k, 1))))
}

// raggedSwapScratch is the scratch the swapped product needs: one chunk.
func raggedSwapScratch(k int64) int64 { return 4 * raggedSwapPanels(k) * gemmNR * max(k, 1) }

// swapScratch is the scratch x's swapped product needs: one chunk, and
// after it a tile's eight matrix rows widened to f32 when the weights are
// f16/bf16 (widenTile).
func (x *raggedCtx) swapScratch() int64 {
	if x.wdt == ir.F32 {
		return raggedSwapScratch(x.K)
	}
	return raggedSwapScratch(x.K) + 4*8*max(x.K, 1)
}

// swapped computes the current group's rows for the call's full tiles by
// the swapped product (a call with none packs nothing).
func (x *raggedCtx) swapped() {
	k := x.k
	chunk := raggedSwapPanels(x.K) * gemmNR
	panels := k.cur.NewBitCast(k.scratch, types.NewPointer(types.Float))
	tEnd := k.smin(k.hi, ci(x.tiles))
	rows := k.cur.NewSub(x.rowHi, x.rowLo)
	chunks := k.cur.NewSelect(k.cur.NewICmp(enum.IPredSLT, k.lo, tEnd), k.ceilDiv(rows, chunk), ci(0))
	if x.wdt != ir.F32 { // each tile's weights widened after the chunk (swapScratch)
		x.wide = k.at(types.Float, panels, ci(raggedSwapScratch(x.K)/4))
		defer func() { x.wide = nil }()
	}
	k.loop(ci(0), chunks, nil, func(c value.Value, _ []value.Value) []value.Value {
		r0 := k.mulAdd(c, chunk, x.rowLo)
		r1 := k.smin(k.cur.NewAdd(r0, ci(chunk)), x.rowHi)
		last := k.cur.NewSub(r1, ci(1))
		// Rows past the chunk's last pack as copies of it: their lanes are
		// computed and never stored.
		op := gemmOperand{row: func(i value.Value) value.Value {
			return k.at(types.Float, x.A, k.mulAdd(k.smin(i, last), x.K, ci(0)))
		}, rowDT: ir.F32}
		np := k.ceilDiv(k.cur.NewSub(r1, r0), gemmNR)
		k.gemmPackT(panels, op, gemmNR, r0, np, ci(0), ci(x.K))
		k.loop(k.cur.NewMul(k.lo, ci(2)), k.cur.NewMul(tEnd, ci(2)), nil, func(nb value.Value, _ []value.Value) []value.Value {
			n0 := k.cur.NewMul(nb, ci(8))
			if x.wide != nil {
				x.widenTile(n0)
			}
			x.swapChunk(r0, r1, n0, func(rows int64, off value.Value) { x.swapAt(rows, off, panels, r0, r1, n0) })
			return nil
		})
		return nil
	})
}

// swapMicro is the 8 x 16 tile: result columns [n0, n0+8) (rows of the
// matrix) x the panel's 16 rows (its first 8 when halves is 1), in AVX2
// halves. acc[halves*i+h] is column n0+i for the panel's rows 8h..8h+7.
func (x *raggedCtx) swapMicro(pan, n0 value.Value, halves int) []value.Value {
	return x.swapTile(v8, n0, halves, func(at value.Value, h int64) value.Value {
		if h > 0 {
			at = x.k.cur.NewAdd(at, ci(8*h))
		}
		return x.k.vload(pan, at)
	})
}

// swapTile multiplies the matrix rows n0..n0+7 (result columns), each
// weight broadcast to vt, into n vectors of packed rows, vec(at, j) for
// j < n at offset at = kk*16 of the chunk, over the whole contraction.
// acc[n*i+j] is column n0+i for vector j.
func (x *raggedCtx) swapTile(vt *types.VectorType, n0 value.Value, n int, vec func(at value.Value, j int64) value.Value) []value.Value {
	k := x.k
	vfma := k.g.declare(fmt.Sprintf("llvm.fmuladd.v%df32", vt.Len), vt, vt, vt, vt)
	wRow := x.matrixRows(n0, 8)
	init := make([]value.Value, 8*n)
	for i := range init {
		init[i] = constant.NewZeroInitializer(vt)
	}
	return k.loop(ci(0), ci(x.K), init, func(kk value.Value, acc []value.Value) []value.Value {
		x.prefetchNextTile(wRow[0], kk)
		at := k.cur.NewMul(kk, ci(gemmNR))
		b := make([]value.Value, n)
		for j := range b {
			b[j] = vec(at, int64(j))
		}
		next := make([]value.Value, len(acc))
		for i := range wRow {
			var w value.Value
			if x.wide != nil {
				w = k.load(types.Float, x.wide, k.mulAdd(ci(int64(i)), x.K, kk))
			} else {
				w = k.loadDT(x.B, k.cur.NewAdd(wRow[i], kk), x.wdt)
			}
			w = k.splatOf(vt, w)
			for j := range n {
				next[n*i+j] = k.cur.NewCall(vfma, w, b[j], acc[n*i+j])
			}
		}
		return next
	})
}

// widenTile writes the matrix rows n0..n0+7 (f16/bf16) into x.wide as f32,
// row i at i*K, 16 weights of each row a step. swapTile broadcasts every
// weight into a multiply-add once per pair of panels, and a narrow weight
// read alone is a scalar load, a conversion and a broadcast beside its two
// multiply-adds (an f32 one folds into them): a batch-64 decode with f16
// weights ran slower than with f32 ones. Widened once per tile, the
// weights cost a sixteenth of that, and the tile reads f32 from L1/L2.
func (x *raggedCtx) widenTile(n0 value.Value) {
	k := x.k
	wRow := x.matrixRows(n0, 8)
	vecs := x.K / 16
	k.loop(ci(0), ci(vecs), nil, func(q value.Value, _ []value.Value) []value.Value {
		at := k.cur.NewMul(q, ci(16))
		for i, r := range wRow {
			k.vstoreOf(k.vloadDTOf(v16, x.B, k.cur.NewAdd(r, at), x.wdt), x.wide, k.mulAdd(ci(int64(i)), x.K, at))
		}
		return nil
	})
	k.loop(ci(vecs*16), ci(x.K), nil, func(kk value.Value, _ []value.Value) []value.Value {
		for i, r := range wRow {
			k.store(k.loadDT(x.B, k.cur.NewAdd(r, kk), x.wdt), x.wide, k.mulAdd(ci(int64(i)), x.K, kk))
		}
		return nil
	})
}

// swapStore writes swapTile's tile of n vectors of vt: rows r0.. (those
// before end) of the result at columns [n0, n0+8), vector j's rows from
// r0 + j*lanes, eight at a time through storeRows.
func (x *raggedCtx) swapStore(acc []value.Value, r0, end, n0 value.Value, vt *types.VectorType, n int) {
	lanes := int64(vt.Len)
	for j := range n {
		for h := range lanes / 8 {
			blk := make([]value.Value, 8)
			for i := range blk {
				blk[i] = acc[n*i+j]
				if lanes > 8 {
					blk[i] = x.k.half8(blk[i], h)
				}
			}
			x.storeRows(blk, x.k.cur.NewAdd(r0, ci(int64(j)*lanes+8*h)), end, n0)
		}
	}
}

// storeRows stores blk (blk[i]: column n0+i of rows r0..r0+7) as rows
// r0.. (those before end) at columns [n0, n0+8), an 8 x 8 transpose, and
// applies the epilogue (x.epi) to each row as it is stored.
func (x *raggedCtx) storeRows(blk []value.Value, r0, end, n0 value.Value) {
	k := x.k
	for j, v := range k.transpose8(blk) {
		row := k.cur.NewAdd(r0, ci(int64(j)))
		k.ifElse(k.cur.NewICmp(enum.IPredSLT, row, end), func() {
			k.vstore(v, x.c, k.mulAdd(row, x.N, n0))
			if x.epi != nil { // the row's 8 results are final: in cache now
				for c := range int64(8) {
					x.epi(row, k.cur.NewAdd(n0, ci(c)))
				}
			}
		}, nil)
	}
}

// prefetchNextTile asks, at step q of a tile whose matrix rows start at
// offset row0, for one line of the next tile's eight rows into L2: line
// q/8 of row q%8 (a tile's steps, K or K/2, cover the rows' lines). Each
// tile otherwise starts eight short streams of the matrix from memory
// (2 KiB a row for bf16 at K = 1024), on which the hardware prefetcher
// barely ramps up. BenchmarkGemm/rhsT-cold at 64 rows, with and without,
// alternated under load (docs/PERFORMANCE.md): 9-22% less CPU time a
// call for bf16 x bf16 on vdpbf16ps (pairTile), about 10% for f32
// weights (swapTile); level at 512 rows.
func (x *raggedCtx) prefetchNextTile(row0, q value.Value) {
	k := x.k
	perLine := 64 / int64(x.wdt.Size())
	row := k.cur.NewAnd(q, ci(7))
	line := k.smin(k.cur.NewMul(k.cur.NewLShr(q, ci(3)), ci(perLine)), ci(max(x.K-1, 0)))
	// Past the last tile the offset is clamped (prefetchWeight).
	x.prefetchWeight(k.cur.NewAdd(k.mulAdd(row, x.K, k.cur.NewAdd(row0, ci(8*x.K))), line))
}

// matrixRows are the offsets in x.B of the current matrix's n rows from
// n0 (result columns): a swapped tile's eight, a streamed tile's
// raggedTCols.
func (x *raggedCtx) matrixRows(n0 value.Value, n int64) []value.Value {
	wRow := make([]value.Value, n)
	for i := range wRow {
		wRow[i] = x.k.mulAdd(x.k.cur.NewAdd(n0, ci(int64(i))), x.K, x.wBase)
	}
	return wRow
}

// swapKind is one of the swapped product's tiles: the rows it covers
// (the packed panels' rows it reads from a panel's start), and the fewest
// rows left to it for which it runs; with fewer they go to the next
// smaller tile, and the last few to dot products (tailDots).
type swapKind struct{ rows, min int64 }

// swapKinds are the tiles of the host, largest first. With AVX-512
// (gen.wide) a tile takes two panels (32 rows), each one <16 x float> in
// sixteen accumulators, which halves the broadcasts of the matrix per
// multiply-add against the 8 x 16 tile of two AVX2 halves; a single panel
// takes eight accumulators. BenchmarkRaggedDot, two alternated runs
// each: prefill-t32-qwen3-up 176-178 -> 187-192 GFLOP/s, -down 166-169
// -> 175-176, t64 188-191 -> 202-203, t16 160-162 -> 172; with bf16
// experts (one widened weight now feeds 32 lanes) 156-163 -> 204-207.
//
// A tile computes all its rows whether or not the group has them: before
// the tails, a prefill's groups (32 rows on average, drawn as routing
// gives them) left 12% of the lanes computed padding. The minimums let a
// tile pad at most 2 rows (7 for the two-panel tile, whose broadcasts
// feed twice the lanes); the rest, at most 5 rows, go to tailDots.
// BenchmarkRaggedDot/prefill-t32-drawn (512 tokens' top-8 of 128),
// before and after, alternated twice: up 171-175 -> 188-190 GFLOP/s
// (best 179-183 -> 195-196), down 172-178 -> 180-184; 32 rows to every
// expert (no part panels) level. Minimums of 30/14/6, 25/12/6, 25/14/4,
// 25/14/8 and 28/16/8 were all within the noise of these. The product on
// vdpbf16ps (swappedPairs) takes the same tiles and tails: its 8-row
// tile is half a panel in 8-lane vectors.
func (x *raggedCtx) swapKinds() []swapKind {
	if x.k.g.wide {
		return []swapKind{{32, 25}, {16, 14}, {8, 6}}
	}
	return []swapKind{{16, 14}, {8, 6}}
}

// swapChunk computes the chunk's rows [r0, r1) at result columns [n0,
// n0+8): the largest tile while it has enough rows, then each smaller
// tile once if it has, then the rows left (fewer than the last tile's
// minimum) by dot products. tile(rows, off) runs the tile of that many
// rows on the chunk's rows from r0+off: every tile but the last covers a
// multiple of 16 rows, so each one starts at a packed panel's first row.
func (x *raggedCtx) swapChunk(r0, r1, n0 value.Value, tile func(rows int64, off value.Value)) {
	k := x.k
	kinds := x.swapKinds()
	rows := k.cur.NewSub(r1, r0)
	big := kinds[0]
	n := k.ceilDiv(k.smax(k.cur.NewSub(rows, ci(big.min-1)), ci(0)), big.rows)
	k.loop(ci(0), n, nil, func(i value.Value, _ []value.Value) []value.Value {
		tile(big.rows, k.cur.NewMul(i, ci(big.rows)))
		return nil
	})
	var done value.Value = k.cur.NewMul(n, ci(big.rows))
	for _, t := range kinds[1:] {
		run := k.cur.NewICmp(enum.IPredSGE, k.cur.NewSub(rows, done), ci(t.min))
		at := done
		k.ifElse(run, func() { tile(t.rows, at) }, nil)
		done = k.cur.NewSelect(run, k.cur.NewAdd(done, ci(t.rows)), done)
	}
	left, rt := k.cur.NewSub(rows, done), k.cur.NewAdd(r0, done)
	for m := int64(1); m < kinds[len(kinds)-1].min; m++ {
		k.ifElse(k.cur.NewICmp(enum.IPredEQ, left, ci(m)), func() { x.tailDots(rt, m, n0) }, nil)
	}
}

// swapAt runs the tile of the given rows on the chunk's rows from r0+off
// (off a multiple of 16: a panel's first row) at columns [n0, n0+8).
func (x *raggedCtx) swapAt(rows int64, off, panels, r0, r1, n0 value.Value) {
	k := x.k
	pan := k.at(types.Float, panels, k.cur.NewMul(off, ci(x.K)))
	rt := k.cur.NewAdd(r0, off)
	switch {
	case rows == 8:
		x.swapStore(x.swapMicro(pan, n0, 1), rt, r1, n0, v8, 1)
	case k.g.wide:
		x.swapStore(x.swapMicroWide(pan, n0, int(rows/16)), rt, r1, n0, v16, int(rows/16))
	default:
		x.swapStore(x.swapMicro(pan, n0, 2), rt, r1, n0, v8, 2)
	}
}

// tailDots computes m rows from r0 (the few a chunk's tiles leave) at
// columns [n0, n0+8) as dot products (dotRows) in the host's widest
// vectors: the rows are read where they lie in x.A, the matrix rows where
// the tiles read them (in cache after a tile), and no lane computes
// padding.
func (x *raggedCtx) tailDots(r0 value.Value, m int64, n0 value.Value) {
	vt := v8
	if x.k.g.wide {
		vt = v16
	}
	x.dotRows(r0, m, n0, 8, vt)
}

// swapMicroWide is the AVX-512 tile of swapKinds: result columns [n0, n0+8) x
// the 16 rows of each of panels consecutive panels, one <16 x float> each.
func (x *raggedCtx) swapMicroWide(pan, n0 value.Value, panels int) []value.Value {
	return x.swapTile(v16, n0, panels, func(at value.Value, j int64) value.Value {
		return x.k.vload16(pan, x.k.cur.NewAdd(at, ci(j*x.K*gemmNR)))
	})
}
