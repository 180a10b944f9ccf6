package llvm

import (
	"fmt"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// The swapped product (ragged_swap.go) of a bf16 checkpoint's MoE prefill
// on vdpbf16ps. The model rounds the experts' inputs to bf16 as linear
// does (models.roundBF16: the tokens and the activation go through
// convert to bf16 and back), so the lhs rows hold bf16 values in f32 and
// the matrices are bf16: the product of bf16 × bf16 with f32 sums, which
// vdpbf16ps computes as docs/ops.md states (each product of two bf16
// values exact in f32, neighbouring products added in f32, denormals
// flushed), two contracting indices per lane and instruction and without
// widening each weight first. Widened, the f32
// kernel ran the bf16 experts at 241–256 GFLOP/s against 640–660 for the
// dense bf16 products on vdpbf16ps (docs/PERFORMANCE.md).
//
// The chunk's rows are packed in pairs, [k/2][16] 32-bit words per panel
// of 16 rows (the high halves of two neighbouring f32 elements of a row:
// exact, since they are bf16 values); the matrix is read as stored, one
// 32-bit pair of each of its eight rows per step broadcast to the 16
// lanes. A tile is eight result columns by two panels, sixteen <16 x
// float>, stored through swapStore as the f32 kernel's.

// raggedBF16 reports whether the ragged_dot in runs its groups of many
// rows on vdpbf16ps: the host has it (and AVX-512), the matrices are bf16
// read as stored [n,k], and the lhs holds bf16 values (bf16Exact).
func (pl *planner) raggedBF16(in *ir.Instr, x *raggedCtx) bool {
	return pl.tgt.bf16 == bf16AVX512 && x.k.g.wide && x.rhsT && x.wdt == ir.BF16 && pl.bf16Exact(in.Args[0])
}

// bf16Exact reports whether every element of v (f32) is a bf16 value: v
// is a widening convert of a bf16 value, or data movement of one (copies,
// reshapes, transposes, rows taken), or such a fusion result.
func (pl *planner) bf16Exact(v *ir.Value) bool {
	if pl.exact == nil {
		pl.exact = map[*ir.Value]bool{}
		for _, f := range pl.m.Funcs {
			markBF16Exact(f.Body, pl.exact)
		}
	}
	return pl.exact[v]
}

// markBF16Exact marks b's bf16-exact values (bf16Exact) in ex, the
// regions inside it too: a fusion's parameters are its operands, other
// regions' parameters are not marked.
func markBF16Exact(b *ir.Block, ex map[*ir.Value]bool) {
	for _, in := range b.Instrs {
		if len(in.Results) == 0 || len(in.Args) == 0 {
			continue
		}
		r := in.Results[0]
		switch in.Op {
		case ir.OpConvert:
			ex[r] = r.Type.DType == ir.F32 && (in.Args[0].Type.DType == ir.BF16 || ex[in.Args[0]])
		case ir.OpCopy, ir.OpReshape, ir.OpTranspose, ir.OpTake:
			ex[r] = ex[in.Args[0]]
		case ir.OpFusion:
			body := in.FusionBody()
			for i, p := range body.Params {
				ex[p] = ex[in.Args[i]]
			}
			markBF16Exact(body, ex)
			ret := body.Instrs[len(body.Instrs)-1]
			for i, r := range in.Results {
				ex[r] = ret.Op == ir.OpReturn && ex[ret.Args[i]]
			}
			continue
		}
		for _, rg := range in.Regions {
			markBF16Exact(rg, ex)
		}
	}
}

// swappedBF16 is swapped on vdpbf16ps (raggedBF16): the current group's
// rows for the call's full tiles.
func (x *raggedCtx) swappedBF16() { x.swappedPairs(x.packPairs) }

// swappedPairs is swappedBF16 with the rows packed by pack (into dst,
// through tmp: packPairs' arguments).
func (x *raggedCtx) swappedPairs(pack func(dst, tmp, r0, last, np value.Value)) {
	k := x.k
	chunk := raggedSwapPanels(x.K) * gemmNR
	tmp := k.cur.NewBitCast(k.scratch, types.NewPointer(types.Float))
	panels := k.at(types.I32, k.cur.NewBitCast(k.scratch, types.NewPointer(types.I32)), ci(raggedSwapScratch(x.K)/4))
	tEnd := k.smin(k.hi, ci(x.tiles))
	rows := k.cur.NewSub(x.rowHi, x.rowLo)
	chunks := k.cur.NewSelect(k.cur.NewICmp(enum.IPredSLT, k.lo, tEnd), k.ceilDiv(rows, chunk), ci(0))
	pan := (x.K + 1) / 2 * gemmNR // 32-bit words a panel
	k.loop(ci(0), chunks, nil, func(c value.Value, _ []value.Value) []value.Value {
		r0 := k.mulAdd(c, chunk, x.rowLo)
		r1 := k.smin(k.cur.NewAdd(r0, ci(chunk)), x.rowHi)
		np := k.ceilDiv(k.cur.NewSub(r1, r0), gemmNR)
		pack(panels, tmp, r0, k.cur.NewSub(r1, ci(1)), np)
		k.loop(k.cur.NewMul(k.lo, ci(2)), k.cur.NewMul(tEnd, ci(2)), nil, func(nb value.Value, _ []value.Value) []value.Value {
			n0 := k.cur.NewMul(nb, ci(8))
			x.swapChunk(r0, r1, n0, func(rows int64, off value.Value) {
				at := k.at(types.I32, panels, k.cur.NewMul(k.cur.NewSDiv(off, ci(gemmNR)), ci(pan)))
				vt, n := v16, int(max(rows/gemmNR, 1)) // 32 rows: two panels; 16: one; 8: half of one
				if rows < gemmNR {
					vt = v8
				}
				x.swapStore(x.pairTile(at, n0, n, vt), k.cur.NewAdd(r0, off), r1, n0, vt, n)
			})
			return nil
		})
		return nil
	})
}

// packPairs packs np panels of 16 rows from r0 (rows past last as copies
// of it: computed, never stored) into dst: word (q, j) of panel p holds
// row r0+16p+j's elements 2q (low half) and 2q+1 as bf16, the high
// halves of their f32 bits (exact: they hold bf16 values); an odd last
// element pairs with zero. The rows are first packed as f32 panels
// [k][16] into tmp by gemmPackT's register transposes, then two of its
// vectors make one of pairs: element by element the packing cost a fifth
// of the product at 32 rows.
func (x *raggedCtx) packPairs(dst, tmp, r0, last, np value.Value) {
	k := x.k
	op := gemmOperand{row: func(i value.Value) value.Value {
		return k.at(types.Float, x.A, k.mulAdd(k.smin(i, last), x.K, ci(0)))
	}, rowDT: ir.F32}
	k.gemmPackT(tmp, op, gemmNR, r0, np, ci(0), ci(x.K))
	v16i32 := types.NewVector(16, types.I32)
	word := func(at value.Value) value.Value {
		return k.cur.NewBitCast(k.vload16(tmp, at), v16i32)
	}
	store := func(v, at value.Value) {
		ptr := k.cur.NewBitCast(k.at(types.I32, dst, at), types.NewPointer(v16i32))
		st := k.cur.NewStore(v, ptr)
		st.Align = 4
	}
	words := (x.K + 1) / 2 * gemmNR
	k.loop(ci(0), np, nil, func(p value.Value, _ []value.Value) []value.Value {
		src, out := k.cur.NewMul(p, ci(x.K*gemmNR)), k.cur.NewMul(p, ci(words))
		k.loop(ci(0), ci(x.K/2), nil, func(q value.Value, _ []value.Value) []value.Value {
			at := k.mulAdd(q, 2*gemmNR, src)
			store(k.pairWord(word(at), word(k.cur.NewAdd(at, ci(gemmNR)))), k.mulAdd(q, gemmNR, out))
			return nil
		})
		if x.K%2 == 1 {
			store(k.pairWord(word(k.cur.NewAdd(src, ci((x.K-1)*gemmNR))), nil), k.cur.NewAdd(out, ci(x.K/2*gemmNR)))
		}
		return nil
	})
}

// packWords packs np panels of 16 bf16 rows from r0 (rows past last as
// copies of it) into dst as packPairs does, for rows stored bf16 (x.A
// holds bf16 and K is even): a row's pairs are its 32-bit words as
// stored, moved by gemmPackT's transposes as f32 lanes (the bits kept).
func (x *raggedCtx) packWords(dst, _, r0, last, np value.Value) {
	k := x.k
	op := gemmOperand{row: func(i value.Value) value.Value {
		return k.cur.NewBitCast(k.at(types.I16, x.A, k.mulAdd(k.smin(i, last), x.K, ci(0))), types.NewPointer(types.Float))
	}, rowDT: ir.F32}
	k.gemmPackT(k.cur.NewBitCast(dst, types.NewPointer(types.Float)), op, gemmNR, r0, np, ci(0), ci(x.K/2))
}

// raggedBF16Scratch is the scratch of swappedBF16: a chunk's rows as f32
// panels (packPairs' tmp), then as pairs.
func raggedBF16Scratch(k int64) int64 {
	return raggedSwapScratch(k) + 4*raggedSwapPanels(k)*gemmNR*((k+1)/2)
}

// pairTile is the tile of swappedBF16: result columns [n0, n0+8) (rows
// of the matrix) x the first vt.Len rows (16: all) of each of n
// consecutive panels at pan, over the whole contraction; acc[n*i+j] is
// column n0+i for panel j, as swapTile's.
func (x *raggedCtx) pairTile(pan, n0 value.Value, n int, vt *types.VectorType) []value.Value {
	k := x.k
	vi32 := types.NewVector(vt.Len, types.I32)
	dp := k.g.declare(fmt.Sprintf("llvm.x86.avx512bf16.dpbf16ps.%d", 32*vt.Len), vt, vt, vi32, vi32)
	wRow := x.matrixRows(n0, 8)
	words := (x.K + 1) / 2 * gemmNR
	step := func(q value.Value, acc []value.Value, pair func(i int) value.Value) []value.Value {
		b := make([]value.Value, n)
		for j := range b {
			ptr := k.cur.NewBitCast(k.at(types.I32, pan, k.mulAdd(q, gemmNR, ci(int64(j)*words))), types.NewPointer(vi32))
			l := k.cur.NewLoad(vi32, ptr)
			l.Align = 4
			b[j] = l
		}
		next := make([]value.Value, len(acc))
		for i := range wRow {
			w := k.splatOf(vi32, pair(i))
			for j := range n {
				next[n*i+j] = k.cur.NewCall(dp, acc[n*i+j], b[j], w)
			}
		}
		return next
	}
	acc := make([]value.Value, 8*n)
	for i := range acc {
		acc[i] = constant.NewZeroInitializer(vt)
	}
	i32p := types.NewPointer(types.I32)
	acc = k.loop(ci(0), ci(x.K/2), acc, func(q value.Value, acc []value.Value) []value.Value {
		x.prefetchNextTile(wRow[0], q)
		return step(q, acc, func(i int) value.Value {
			l := k.cur.NewLoad(types.I32, k.cur.NewBitCast(k.at(types.I16, x.B, k.mulAdd(q, 2, wRow[i])), i32p))
			l.Align = 2
			return l
		})
	})
	if x.K%2 == 1 { // the last element of each row, paired with zero
		acc = step(ci(x.K/2), acc, func(i int) value.Value {
			return k.cur.NewZExt(k.load(types.I16, x.B, k.cur.NewAdd(wRow[i], ci(x.K-1))), types.I32)
		})
	}
	return acc
}

// streamTPairs is streamT on vdpbf16ps (raggedBF16): a small group's rows
// (fewer than raggedSwapRows, a batched decode's few tokens per expert)
// are first written as bf16 words into scratch, each row's pairs in order
// (rowWords), and each tile then takes dot products of 32 contracting
// elements a step: one <16 x i32> of the matrix row as stored (its pairs
// along K are vdpbf16ps's operand) and one of each packed row. Widened,
// each step of 8 elements took a conversion per weight vector: the bf16
// experts ran at 56-79 GFLOP/s in a Qwen3-30B-A3B-shaped decode at batch 64
// (4 rows an expert), about half the rate of reading them.
func (x *raggedCtx) streamTPairs(rows value.Value) {
	k := x.k
	words := (x.K + 1) / 2
	packed := k.cur.NewBitCast(k.scratch, types.NewPointer(types.I32))
	k.ifElse(k.cur.NewICmp(enum.IPredSLT, k.lo, k.smin(k.hi, ci(x.tiles))), func() {
		x.rowWords(packed, rows)
	}, nil)
	k.loop(k.lo, k.smin(k.hi, ci(x.tiles)), nil, func(t value.Value, _ []value.Value) []value.Value {
		n0 := k.cur.NewMul(t, ci(gemmNR))
		blocks := k.cur.NewSDiv(rows, ci(raggedTRows))
		k.loop(ci(0), blocks, nil, func(b value.Value, _ []value.Value) []value.Value {
			x.tilePairs(packed, k.cur.NewMul(b, ci(raggedTRows)), raggedTRows, n0, words)
			return nil
		})
		r0 := k.cur.NewMul(blocks, ci(raggedTRows))
		left := k.cur.NewSub(rows, r0)
		for n := int64(1); n < raggedTRows; n++ {
			k.ifElse(k.cur.NewICmp(enum.IPredEQ, left, ci(n)), func() { x.tilePairs(packed, r0, n, n0, words) }, nil)
		}
		return nil
	})
}

// rowWords writes the group's rows (rowLo on, rows of them) into dst as
// bf16 words: row i's word q holds its elements 2q (low half) and 2q+1,
// the high halves of their f32 bits; an odd last element pairs with zero.
func (x *raggedCtx) rowWords(dst, rows value.Value) {
	k := x.k
	words := (x.K + 1) / 2
	k.loop(ci(0), rows, nil, func(i value.Value, _ []value.Value) []value.Value {
		row := k.at(types.Float, x.A, k.mulAdd(k.cur.NewAdd(x.rowLo, i), x.K, ci(0)))
		bits := func(at value.Value) value.Value { return k.cur.NewBitCast(k.load(types.Float, row, at), types.I32) }
		out := k.cur.NewMul(i, ci(words))
		k.loop(ci(0), ci(x.K/2), nil, func(q value.Value, _ []value.Value) []value.Value {
			at := k.cur.NewMul(q, ci(2))
			k.store(k.pairWord(bits(at), bits(k.cur.NewAdd(at, ci(1)))), dst, k.cur.NewAdd(out, q))
			return nil
		})
		if x.K%2 == 1 {
			k.store(k.pairWord(bits(ci(x.K-1)), nil), dst, k.cur.NewAdd(out, ci(x.K/2)))
		}
		return nil
	})
}

// pairWord is the 32-bit word that holds two bf16 values kept in f32,
// given the floats' bits lo and hi (i32, or vectors of them): lo's high
// half in the low half, hi's in the high half (exact for bf16 values); a
// nil hi pairs lo with zero.
func (k *kfn) pairWord(lo, hi value.Value) value.Value {
	c := func(v int64) value.Value {
		n := constant.NewInt(types.I32, v)
		if vt, ok := lo.Type().(*types.VectorType); ok {
			return k.splatOf(vt, n)
		}
		return n
	}
	w := k.cur.NewLShr(lo, c(16))
	if hi == nil {
		return w
	}
	return k.cur.NewOr(w, k.cur.NewAnd(hi, c(-0x10000)))
}

// tilePairs computes the group's rows [r0, r0+n) (from rowLo; their words
// in packed) of the result at the 16 columns from n0, raggedTCols matrix
// rows at a time: n x raggedTCols <16 x float> sums over 32 contracting
// elements a step, summed across their lanes (laneSums), then the last K%32
// elements one by one in f32. Each step prefetches the next tile's
// matrix rows (prefetchNextRows).
func (x *raggedCtx) tilePairs(packed, r0 value.Value, n int64, n0 value.Value, words int64) {
	k := x.k
	v16i32 := types.NewVector(16, types.I32)
	dp := k.g.declare("llvm.x86.avx512bf16.dpbf16ps.512", v16, v16, v16i32, v16i32)
	load := func(base value.Value, typ types.Type, at value.Value) value.Value {
		l := k.cur.NewLoad(v16i32, k.cur.NewBitCast(k.at(typ, base, at), types.NewPointer(v16i32)))
		l.Align = 2
		return l
	}
	for c0 := int64(0); c0 < gemmNR; c0 += raggedTCols {
		aRow, aElem := make([]value.Value, n), make([]value.Value, n)
		for i := range aRow {
			r := k.cur.NewAdd(r0, ci(int64(i)))
			aRow[i] = k.cur.NewMul(r, ci(words))
			aElem[i] = k.mulAdd(k.cur.NewAdd(x.rowLo, r), x.K, ci(0))
		}
		wRow := x.matrixRows(k.cur.NewAdd(n0, ci(c0)), raggedTCols)
		init := make([]value.Value, n*raggedTCols)
		for i := range init {
			init[i] = constant.NewZeroInitializer(v16)
		}
		acc := k.loop(ci(0), ci(x.K/32), init, func(kv value.Value, acc []value.Value) []value.Value {
			x.prefetchNextRows(wRow, kv)
			ws := make([]value.Value, raggedTCols)
			for c := range ws {
				ws[c] = load(x.B, types.I16, k.mulAdd(kv, 32, wRow[c]))
			}
			next := make([]value.Value, len(acc))
			for i := range aRow {
				av := load(packed, types.I32, k.mulAdd(kv, 16, aRow[i]))
				for c := range ws {
					j := int64(i)*raggedTCols + int64(c)
					next[j] = k.cur.NewCall(dp, acc[j], av, ws[c])
				}
			}
			return next
		})
		sums := k.laneSums(acc)[0]
		for i := range aRow {
			for c := range wRow {
				s := k.cur.NewExtractElement(sums, constant.NewInt(types.I32, int64(i)*raggedTCols+int64(c)))
				tail := k.loop(ci(x.K/32*32), ci(x.K), []value.Value{s}, func(kk value.Value, t []value.Value) []value.Value {
					av := k.load(types.Float, x.A, k.cur.NewAdd(aElem[i], kk))
					wv := k.loadDT(x.B, k.cur.NewAdd(wRow[c], kk), x.wdt)
					return []value.Value{k.cur.NewCall(x.fma, av, wv, t[0])}
				})
				col := k.cur.NewAdd(n0, ci(c0+int64(c)))
				k.store(tail[0], x.c, k.mulAdd(k.cur.NewAdd(x.rowLo, k.cur.NewAdd(r0, ci(int64(i)))), x.N, col))
			}
		}
	}
}

// prefetchNextRows asks, at step kv of tilePairs (32 bf16 elements, one
// 64-byte line, of each of its matrix rows wRow a step), for line kv of
// each of the raggedTCols rows that follow them (into L2): by the next
// tile's first step its rows, short streams of K/32 lines that the
// hardware prefetcher barely ramps up on, are on their way.
// BenchmarkRaggedDot/prefill-t4-qwen3-*-bf16-rows (a bf16 MoE decode at
// batch 64: 4 rows an expert) on one core, three rounds alternated: up
// 17.3-19.0 -> 21.8-22.3 GB/s of weights per CPU-second, down 14.1-15.0
// -> 17.8-19.5 (docs/PERFORMANCE.md). Two tiles ahead, or into L1, was
// no better.
func (x *raggedCtx) prefetchNextRows(wRow []value.Value, kv value.Value) {
	k := x.k
	for _, r := range wRow { // clamped into the matrices (prefetchWeight)
		x.prefetchWeight(k.mulAdd(kv, 32, k.cur.NewAdd(r, ci(raggedTCols*x.K))))
	}
}
