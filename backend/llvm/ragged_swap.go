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
// over the whole contraction (a last panel of at most 8 rows: 8 x 8), so
// the matrix streams from memory once per chunk of rows and every panel
// after the first finds its eight rows in cache; the tile is transposed in
// registers and stored row by row. With AVX-512 a tile covers two panels
// (swappedWide).
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
			if k.g.wide {
				x.swappedWide(panels, np, r0, r1, n0)
				return nil
			}
			k.loop(ci(0), np, nil, func(p value.Value, _ []value.Value) []value.Value {
				pan := k.at(types.Float, panels, k.cur.NewMul(p, ci(x.K*gemmNR)))
				rt := k.mulAdd(p, gemmNR, r0)
				tile := func(halves int) func() {
					return func() { x.swapStore(x.swapMicro(pan, n0, halves), rt, r1, n0, v8, halves) }
				}
				// A last panel of at most 8 rows computes only them.
				k.ifElse(k.cur.NewICmp(enum.IPredSLE, k.cur.NewSub(r1, rt), ci(8)), tile(1), tile(2))
				return nil
			})
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
	_, elem, _ := elemType(x.wdt)
	// Past the last tile the offset is clamped into the matrices: an
	// inbounds address past the buffer would be poison, even for a hint.
	at := k.cur.NewAdd(k.mulAdd(row, x.K, k.cur.NewAdd(row0, ci(8*x.K))), line)
	k.prefetchL2(k.at(elem, x.B, k.smin(at, ci(max(x.G*x.N*x.K-1, 0)))))
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

// swappedWide is swapped's loop over a chunk's panels on a host with
// AVX-512 (gen.wide): a tile takes two panels (32 rows), each one
// <16 x float> in sixteen accumulators, which halves the broadcasts of
// the matrix per multiply-add against the 8 x 16 tile of two AVX2
// halves. A last panel alone takes eight accumulators, or the AVX2 8 x 8
// tile when it holds at most 8 rows. BenchmarkRaggedDot, two alternated
// runs each: prefill-t32-qwen3-up 176-178 -> 187-192 GFLOP/s, -down
// 166-169 -> 175-176, t64 188-191 -> 202-203, t16 160-162 -> 172; with
// bf16 experts (one widened weight now feeds 32 lanes) 156-163 -> 204-207.
func (x *raggedCtx) swappedWide(panels, np, r0, r1, n0 value.Value) {
	k := x.k
	k.loop(ci(0), k.ceilDiv(np, 2), nil, func(pp value.Value, _ []value.Value) []value.Value {
		p := k.cur.NewMul(pp, ci(2))
		pan := k.at(types.Float, panels, k.cur.NewMul(p, ci(x.K*gemmNR)))
		rt := k.mulAdd(p, gemmNR, r0)
		rem := k.cur.NewSub(r1, rt)
		wide := func(n int) func() {
			return func() { x.swapStore(x.swapMicroWide(pan, n0, n), rt, r1, n0, v16, n) }
		}
		k.ifElse(k.cur.NewICmp(enum.IPredSGT, rem, ci(gemmNR)), wide(2), func() {
			k.ifElse(k.cur.NewICmp(enum.IPredSGT, rem, ci(8)), wide(1), func() {
				x.swapStore(x.swapMicro(pan, n0, 1), rt, r1, n0, v8, 1)
			})
		})
		return nil
	})
}

// swapMicroWide is the tile of swappedWide: result columns [n0, n0+8) x
// the 16 rows of each of panels consecutive panels, one <16 x float> each.
func (x *raggedCtx) swapMicroWide(pan, n0 value.Value, panels int) []value.Value {
	return x.swapTile(v16, n0, panels, func(at value.Value, j int64) value.Value {
		return x.k.vload16(pan, x.k.cur.NewAdd(at, ci(j*x.K*gemmNR)))
	})
}
