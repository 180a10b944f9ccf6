package llvm

import (
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// A batched decode step multiplies a few dozen rows (one per sequence) by
// weights stored [N, K], as Hugging Face stores a projection. The blocked
// product packs the weights into panels for every call, and with 64 rows
// that packing is a large part of the work: a dense Qwen3-0.6B decode step
// at batch 64 ran its projections at about 130 GFLOP/s, against 160+ for
// the same products at 512 rows. ragged_dot's swapped product
// (ragged_swap.go) reads the weights as they are stored and packs only the
// rows, so such a product runs as a ragged_dot of one group.

// dotSwapMaxRows bounds the rows that take the swapped product with AVX2
// tiles (from raggedSwapRows; 8 rows or fewer stream the rhs, gemv.go):
// one chunk of packed rows (raggedSwapPanels: 4 panels of 16 up to K =
// 2048), so the weights are read once per call. Larger products keep the
// blocked one. With AVX-512 (gen.wide) there is no bound on the rows of
// f32 weights (f16/bf16 ones: dotSwapNarrowRows): the 8 x 32
// two-panel tile of swapKinds beats the blocked product at every row count
// measured, a prefill's 512 rows included, though each chunk of 64 rows
// reads the weights again (BenchmarkGemm/rhsT/512x1024x3072: 182-185 ->
// 198-203 GFLOP/s; eleven projection shapes of Qwen3-0.6B and -30B-A3B,
// 128 to 2048 rows, 5-12% faster on average, none slower). The swapped
// product shares a call among the threads by 16-column tiles only, so past
// 64 rows it takes products with at least dotSwapTilesPerThread tiles a
// thread: the blocked product also shares rows, which a product of many
// rows and few columns needs on a machine of many cores.
const (
	dotSwapMaxRows        = 64
	dotSwapTilesPerThread = 4
)

// dotSwapFits reports whether d runs as the swapped product on tgt: one
// product (no batch, an f32 result) of a row-major f32 lhs [M, K] and a
// rhs stored [N, K] (f32, or f16/bf16 weights read at their width), M rows
// within the bounds (no upper one when wide and N has tiles enough for
// the threads, up to dotSwapNarrowRows for f16/bf16 weights), N a whole
// number of 16-column tiles.
func dotSwapFits(d dotShape, tgt target) bool {
	rows := d.rhs.dt == ir.F32 || d.M <= dotSwapNarrowRows
	return dotSwapShape(d, tgt) && d.lhs.dt == ir.F32 && wideable(d.rhs.dt) && rows
}

// dotSwapNarrowRows bounds the rows of a swapped product over f16/bf16
// weights; more (a prefill's 512) take the blocked product. When this
// was measured the swapped tile widened each weight alone (a scalar load,
// the conversion and a broadcast beside two FMAs) once per chunk of 32-64
// rows, eight times or more at 512 rows; the blocked product's packing
// widens eight at a time (gemmPackT), once per call. The tile now widens
// its rows 16 at a time once per chunk (widenTile), and at 512 rows the
// two plans were measured again (2026-12-07 20:03, the calls alternated,
// weights cold from 8 copies, median GFLOP/s swapped / blocked): level at
// K = 1024 and 2048 (f16 95.9/97.1, bf16 90.0/90.7 on one thread; f16
// 113/112, +add 162/158, +mul 138/136 on two), slower at K = 3072, whose
// chunks are 32 rows (f16 88.0/96.6 and bf16 85.5/90.5 on one thread,
// f16+add 149/162 on two): the bound stays. Earlier, one thread, the two
// plans' calls interleaved in one process, best / first-quartile GFLOP/s (docs/
// PERFORMANCE.md, sitting of 2026-12-07 13:07): at 512 rows bf16
// weights 200/161 swapped against 227/218 blocked (1024x3072) and
// 195/192 against 226/223 (3072x1024), f16 184/163 against 195/167 and
// 221/210 against 229/217; at 128 and 256 rows f16 was faster swapped
// (218/214 against 197/193, 220/193 against 191/188).
const dotSwapNarrowRows = 256

// dotSwapShape reports whether d has the swapped product's shape on tgt,
// whatever its operands' dtypes (dotSwapFits).
func dotSwapShape(d dotShape, tgt target) bool {
	rowsOfK := func(o dotOperand) bool {
		return len(o.batch.sizes) == 0 &&
			len(o.contract.sizes) == 1 && o.contract.strides[0] == 1 &&
			len(o.free.sizes) == 1 && o.free.strides[0] == d.K
	}
	return d.B == 1 && d.out == ir.F32 && d.M >= raggedSwapRows &&
		(d.M <= dotSwapMaxRows || tgt.wide && d.N/gemmNR >= dotSwapTilesPerThread*int64(tgt.threads)) &&
		d.N%gemmNR == 0 && d.K > 0 && rowsOfK(d.lhs) && rowsOfK(d.rhs)
}

// dotSwap generates d (dotSwapFits, or dotSwapBF16Fits with dp) as
// ragged_dot's swapped product over the call's 16-column tiles, with the
// fused epilogue epi, if any, applied to each row of a tile as it is
// stored. With dp it runs on vdpbf16ps, the rows' pairs being the 32-bit
// words of the bf16 rows as stored (packWords).
func (pl *planner) dotSwap(in *ir.Instr, env map[*ir.Value]int, epi *dotEpilogue, dp bool) bool {
	d := pl.dotShape(in)
	k, st := pl.newKernelStep(in, env)
	st.what = "dot_general (swapped)"
	x := raggedCtx{k: k, M: d.M, K: d.K, G: 1, N: d.N, tiles: d.N / gemmNR, rhsT: true, wdt: d.rhs.dt, adt: d.lhs.dt, dp: dp}
	st.rows, st.work = x.tiles, d.M*d.N*d.K
	scratch := x.swapScratch()
	if dp {
		st.what, scratch = "dot_general (swapped, vdpbf16ps)", raggedBF16Scratch(x.K)
	}
	pl.p.scratchBytes = max(pl.p.scratchBytes, scratch)
	if epi != nil {
		st.what += "+" + epi.ops
		epiAt := pl.epilogue(k, &st, in, env, epi)
		x.epi = func(m, n value.Value) { epiAt(ci(0), m, n) }
	}
	x.c, x.A, x.B = k.buf(0, types.Float), k.fbuf(1, d.lhs.dt).p, k.fbuf(2, d.rhs.dt).p
	x.rowLo, x.rowHi, x.wBase = ci(0), ci(d.M), ci(0)
	if dp {
		x.swappedPairs(x.packWords)
	} else {
		x.swapped()
	}
	k.finish()
	pl.addDotStep(in, env, st, epi)
	return true
}

// dotSwapBF16Fits reports whether d runs as the swapped product on
// vdpbf16ps (ragged_bf16.go): dotSwapFits' shapes with both operands bf16
// in memory (a bf16 model's projections: the rounded activations, the
// weights), an even contraction, and 16 to dotSwapMaxRows rows (a batched
// decode step). The packed vdpbf16ps GEMM (bf16gemm.go) packs every weight
// panel for those few rows of work; this product packs only the rows and
// reads the weights as stored, whose pairs along K are vdpbf16ps's operand.
func dotSwapBF16Fits(d dotShape, tgt target) bool {
	return tgt.bf16 == bf16AVX512 && tgt.wide && d.lhs.dt == ir.BF16 && d.rhs.dt == ir.BF16 &&
		d.M >= bf16GemmMinRows && d.M <= dotSwapMaxRows && d.K%2 == 0 && dotSwapShape(d, tgt)
}
