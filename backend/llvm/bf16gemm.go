package llvm

import (
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// The blocked bf16 × bf16 → f32 product (vdpbf16ps), for products with
// enough rows to amortise packing (a model's prefill): gemm.go's BLIS
// arrangement with the contraction taken in pairs. vdpbf16ps adds, into
// each of 16 f32 lanes, the products of one pair of bf16 elements from
// each source; so both operands are packed with the pair (k, k+1) of an
// index side by side in 32 bits: the rhs into panels of 32 columns
// [kc/2][32] (two 16-lane vectors per pair of contracting indices), the
// lhs into panels of 12 rows [kc/2][12]. The micro-kernel broadcasts one
// lhs pair per row and issues one vdpbf16ps per accumulator: a 12 x 32
// tile in 24 <16 x float>. Twice the f32 kernel's tile (6 x 32 in twelve,
// gemmTile) because on Zen 5 vdpbf16ps takes about 11 instructions in
// flight to fill its two pipes (latency ~1.6 ns, one issued each 0.14 ns
// a core): twelve chains ran at 0.87 of the peak, twenty-four at all of
// it (docs/PERFORMANCE.md, sitting of 2026-12-07 13:07). The tile is
// stored as two of the f32 kernel's 6 x 32 tiles (gemmC.update, which also
// runs the fused epilogue), the second only where it has rows.
//
// An operand contiguous along the contraction (the activations [M, K],
// a Hugging Face weight [N, K]) packs its whole panels by loading 8 pairs
// from each of 8 indices and transposing the 8 x 8 block of 32-bit pairs
// in registers (packT); element by element that packing took a quarter of
// the product's time at 512 rows. An operand contiguous along its free
// indices (attention's values [keys, head dim]) packs 16 pairs a vector
// from two rows' loads (packKN). A contraction of odd length (or a
// slice's last odd index) packs its last pair with a zero high half on
// both sides, so the result is exact there too; rows and columns past the
// edge pack as zeros and only the store of an edge tile is partial.
// Numerics as bf16dot.go's kernel: exact products, f32 sums.
//
// The blocks are the f32 product's (gemmParams) measured in bytes: a
// packed slice holds twice the contracting indices (kc = 2·KC), so the
// packed panels take the caches' room that the f32 ones were sized for;
// mc is rounded down to whole 12-row panels. Slices of 256 to 768
// contracting indices timed alike within this host's noise (±10%).

const (
	bf16GemmCols = 2 * gemmNR // columns of a packed rhs panel and of the tile
	bf16GemmRows = 2 * gemmMR // rows of a packed lhs panel and of the tile
)

// bf16GemmMinRows is the fewest lhs rows the packed product takes; below
// it bf16Dot's unpacked tiles (a decode step's few rows) read each weight
// once, without packing it. A variable only so that BenchmarkBF16Gemm can
// time the tiles at the prefill's sizes.
var bf16GemmMinRows int64 = 16

// bf16GemmFits reports whether d runs on the packed vdpbf16ps product.
func bf16GemmFits(d dotShape, tgt target) bool {
	return tgt.bf16 == bf16AVX512 && d.lhs.dt == ir.BF16 && d.rhs.dt == ir.BF16 && floatish(d.out) &&
		d.M >= bf16GemmMinRows && d.K >= 2 && d.N >= 1
}

// bf16GemmBlocks are the block sizes of an m x k x n packed bf16 product:
// mc rows (a multiple of bf16GemmRows), kc contracting indices (even), nc
// columns (a multiple of bf16GemmCols, the column blocks of equal width).
func (p gemmParams) bf16GemmBlocks(m, k, n int64) (mc, kc, nc int64) {
	mc = max(min(p.MC/bf16GemmRows*bf16GemmRows, (m+bf16GemmRows-1)/bf16GemmRows*bf16GemmRows), bf16GemmRows)
	kc = min(2*p.KC, (k+1)/2*2)
	nJC := max((n+p.NC-1)/p.NC, 1)
	nc = ((n+nJC-1)/nJC + bf16GemmCols - 1) / bf16GemmCols * bf16GemmCols
	return mc, kc, max(nc, bf16GemmCols)
}

// bf16GemmScratch is the scratch of one call: the packed lhs block
// (mc x kc/2 pairs), the packed rhs block (kc/2 x nc pairs) and the f32
// edge tile, 4 bytes each.
func bf16GemmScratch(mc, kc, nc int64) int64 {
	return 4 * (mc*kc/2 + kc/2*nc + gemmMR*bf16GemmCols)
}

// bf16Gemm generates d (bf16GemmFits) with the fused epilogue epi, if any.
// The range is dot's: (batch, column block, row panel) triples, row
// panels innermost, so the cores share a product evenly.
func (pl *planner) bf16Gemm(in *ir.Instr, env map[*ir.Value]int, epi *dotEpilogue) bool {
	d := pl.dotShape(in)
	k, st := pl.newKernelStep(in, env)
	st.what = "dot_general (avx512bf16 packed)"
	mc, kc, nc := pl.tgt.gemm.bf16GemmBlocks(d.M, d.K, d.N)
	if d.out != ir.F32 {
		kc = (d.K + 1) / 2 * 2 // one slice: the f32 sum is rounded once, when stored
	}
	pl.p.scratchBytes = max(pl.p.scratchBytes, bf16GemmScratch(mc, kc, nc))
	nP, nJC, nPC := (d.M+gemmMR-1)/gemmMR, (d.N+nc-1)/nc, (d.K+kc-1)/kc
	st.rows, st.work = d.B*nJC*nP, d.B*d.M*d.N*d.K
	var epiAt func(b, m, n value.Value)
	if epi != nil {
		st.what += "+" + epi.ops
		epiAt = pl.epilogue(k, &st, in, env, epi)
	}
	i32p := types.NewPointer(types.I32)
	base := k.cur.NewBitCast(k.scratch, i32p)
	ap, bp := base, k.at(types.I32, base, ci(mc*kc/2))
	tile := k.cur.NewBitCast(k.at(types.I32, base, ci(mc*kc/2+kc/2*nc)), types.NewPointer(types.Float))
	c := gemmC{buf: k.fbuf(0, d.out), ld: d.N}
	x, w := k.fbuf(1, ir.BF16), k.fbuf(2, ir.BF16)
	from, to := k.cur.NewSDiv(k.lo, ci(nP)), k.ceilDiv(k.hi, nP)
	k.loop(from, to, nil, func(bj value.Value, _ []value.Value) []value.Value {
		b, jc, r0, r1 := k.panelRange(bj, nP, nJC, d.M)
		lhs := bf16Packer{k: k, buf: x, op: d.lhs, base: k.offset(d.lhs.batch, b), end: ci(d.M), w: bf16GemmRows}
		rhs := bf16Packer{k: k, buf: w, op: d.rhs, base: k.offset(d.rhs.batch, b), end: ci(d.N), w: bf16GemmCols}
		c.base = k.cur.NewMul(b, ci(d.M*d.N))
		if epiAt != nil {
			c.epi = func(m, n value.Value) { epiAt(b, m, n) }
		}
		n0 := k.cur.NewMul(jc, ci(nc))
		ncur := k.smin(ci(nc), k.cur.NewSub(ci(d.N), n0))
		k.loop(ci(0), ci(nPC), nil, func(pc value.Value, _ []value.Value) []value.Value {
			k0 := k.cur.NewMul(pc, ci(kc))
			kend := k.smin(k.cur.NewAdd(k0, ci(kc)), ci(d.K))
			isFirst := k.cur.NewICmp(enum.IPredEQ, pc, ci(0))
			isLast := k.cur.NewICmp(enum.IPredEQ, pc, ci(nPC-1))
			rhs.pack(bp, n0, ncur, k0, kend)
			kp := k.ceilDiv(k.cur.NewSub(kend, k0), 2)
			k.loop(ci(0), k.ceilDiv(k.cur.NewSub(r1, r0), mc), nil, func(ib value.Value, _ []value.Value) []value.Value {
				m0 := k.mulAdd(ib, mc, r0)
				mcur := k.smin(ci(mc), k.cur.NewSub(r1, m0))
				lhs.pack(ap, m0, mcur, k0, kend)
				blk := bf16Block{k: k, c: c, ap: ap, bp: bp, tile: tile, kp: kp, first: isFirst, last: isLast}
				// A tile's 12 rows end at the block's end, not the product's:
				// the cores split the rows in panels of gemmMR (6), so a
				// thread's range can end inside a tile, whose other rows the
				// other thread owns (and this one never packed).
				blk.run(m0, mcur, k.cur.NewAdd(m0, mcur), n0, ncur, ci(d.N))
				return nil
			})
			return nil
		})
		return nil
	})
	k.finish()
	pl.addDotStep(in, env, st, epi)
	return true
}

// bf16Packer packs one bf16 operand of a product (at one batch index)
// into panels of w free indices, [panel][pairs][w] in 32-bit pairs.
type bf16Packer struct {
	k    *kfn
	buf  fbuf
	op   dotOperand
	base value.Value // the batch index's offset
	end  value.Value // the free indices' count: past it, zeros
	w    int64
}

// elem is the offset of element (i, kk).
func (p bf16Packer) elem(i, kk value.Value) value.Value {
	k := p.k
	return k.cur.NewAdd(p.base, k.cur.NewAdd(k.offset(p.op.free, i), k.offset(p.op.contract, kk)))
}

// half is element (i, kk)'s 16 bits, widened to i32.
func (p bf16Packer) half(i, kk value.Value) value.Value {
	return p.k.cur.NewZExt(p.k.load(types.I16, p.buf.p, p.elem(i, kk)), types.I32)
}

// pair is the 32 bits of elements (i, kk) (low half) and (i, kk+1): one
// load where the contraction is contiguous.
func (p bf16Packer) pair(i, kk value.Value) value.Value {
	k := p.k
	if p.op.contract.stride1() {
		ptr := k.cur.NewBitCast(k.at(types.I16, p.buf.p, p.elem(i, kk)), types.NewPointer(types.I32))
		l := k.cur.NewLoad(types.I32, ptr)
		l.Align = 2
		return l
	}
	hi := k.cur.NewShl(p.half(i, k.cur.NewAdd(kk, ci(1))), constant.NewInt(types.I32, 16))
	return k.cur.NewOr(p.half(i, kk), hi)
}

// pack packs free indices [i0, i0+count) x contracting [k0, kend) into dst:
// each index's pairs down its panel's column, an odd last index paired
// with zero, indices past end as zeros. An operand contiguous along the
// contraction packs its whole panels by transposing blocks in registers
// (packT); the rest index by index (packScalar).
func (p bf16Packer) pack(dst, i0, count, k0, kend value.Value) {
	var from value.Value = ci(0)
	switch {
	case p.op.contract.stride1():
		from = p.k.cur.NewSDiv(count, ci(p.w))
		p.packT(dst, i0, from, k0, kend)
	case p.op.free.stride1() && p.w%16 == 0:
		from = p.k.cur.NewSDiv(count, ci(p.w))
		p.packKN(dst, i0, from, k0, kend)
	}
	p.packScalar(dst, p.k.cur.NewMul(from, ci(p.w)), i0, count, k0, kend)
}

// packKN packs the whole panels [0, full) of an operand contiguous along
// its free indices (a prefill's attention values [keys, head dim],
// contracted along the keys): per pair of contracting indices, 16 free
// indices of each of the pair's two rows in one vector load each, the
// first row's elements the pairs' low halves, the second's shifted into
// the high ones, 16 pairs stored along the panel's row. Pair by pair
// (packScalar, two 16-bit loads each) the attention's weighted sums ran
// at two thirds of its scores' rate. An odd last index pairs with zero,
// as tail pairs it.
func (p bf16Packer) packKN(dst, i0, full, k0, kend value.Value) {
	k := p.k
	v16i16, v16i32 := types.NewVector(16, types.I16), types.NewVector(16, types.I32)
	sixteen := make([]constant.Constant, 16)
	for i := range sixteen {
		sixteen[i] = constant.NewInt(types.I32, 16)
	}
	shift := constant.NewVector(v16i32, sixteen...)
	pairs := k.ceilDiv(k.cur.NewSub(kend, k0), 2)
	whole := k.cur.NewSDiv(k.cur.NewSub(kend, k0), ci(2))
	row := func(i, kk value.Value) value.Value {
		ptr := k.cur.NewBitCast(k.at(types.I16, p.buf.p, p.elem(i, kk)), types.NewPointer(v16i16))
		l := k.cur.NewLoad(v16i16, ptr)
		l.Align = 2
		return k.cur.NewZExt(l, v16i32)
	}
	k.loop(ci(0), full, nil, func(pn value.Value, _ []value.Value) []value.Value {
		out := k.cur.NewMul(pn, k.cur.NewMul(pairs, ci(p.w)))
		first := k.mulAdd(pn, p.w, i0)
		k.loop(ci(0), whole, nil, func(kp value.Value, _ []value.Value) []value.Value {
			kk := k.mulAdd(kp, 2, k0)
			for g := int64(0); g < p.w; g += 16 {
				i := k.cur.NewAdd(first, ci(g))
				v := k.cur.NewOr(row(i, kk), k.cur.NewShl(row(i, k.cur.NewAdd(kk, ci(1))), shift))
				at := k.cur.NewAdd(out, k.mulAdd(kp, p.w, ci(g)))
				st := k.cur.NewStore(v, k.cur.NewBitCast(k.at(types.I32, dst, at), types.NewPointer(v16i32)))
				st.Align = 4
			}
			return nil
		})
		odd := k.cur.NewICmp(enum.IPredNE, k.cur.NewSRem(k.cur.NewSub(kend, k0), ci(2)), ci(0))
		k.ifElse(odd, func() {
			last := k.cur.NewAdd(out, k.cur.NewMul(whole, ci(p.w)))
			k.loopN(p.w, func(j value.Value) {
				k.store(p.half(k.cur.NewAdd(first, j), k.cur.NewSub(kend, ci(1))), dst, k.cur.NewAdd(last, j))
			})
		}, nil)
		return nil
	})
}

// packScalar packs the free indices from j0 of pack's range one pair at
// a time, down each index's column (the contraction read in order, for an
// operand contiguous along it). Element by element into the panels'
// columns, this took a quarter of the product's time at 512 rows.
func (p bf16Packer) packScalar(dst, j0, i0, count, k0, kend value.Value) {
	k := p.k
	pairs := k.ceilDiv(k.cur.NewSub(kend, k0), 2)
	zero := constant.NewInt(types.I32, 0)
	k.loop(j0, k.mulAdd(k.ceilDiv(count, p.w), p.w, ci(0)), nil, func(j value.Value, _ []value.Value) []value.Value {
		// j's column of panel j/w: element (kp, j%w) at (j/w)·pairs·w + kp·w + j%w.
		col := k.cur.NewAdd(k.cur.NewMul(k.cur.NewSDiv(j, ci(p.w)), k.cur.NewMul(pairs, ci(p.w))), k.cur.NewSRem(j, ci(p.w)))
		i := k.cur.NewAdd(i0, j)
		in := k.cur.NewICmp(enum.IPredSLT, i, p.end)
		k.ifElse(in, func() {
			p.tail(dst, i, col, ci(0), k0, kend)
		}, func() {
			k.loop(ci(0), pairs, nil, func(kp value.Value, _ []value.Value) []value.Value {
				k.store(zero, dst, k.mulAdd(kp, p.w, col))
				return nil
			})
		})
		return nil
	})
}

// tail packs free index i's pairs from kp0 on into column col of its
// panel: whole pairs, then an odd last index with a zero high half.
func (p bf16Packer) tail(dst, i, col, kp0, k0, kend value.Value) {
	k := p.k
	n := k.cur.NewSub(kend, k0)
	full := k.cur.NewSDiv(n, ci(2))
	k.loop(kp0, full, nil, func(kp value.Value, _ []value.Value) []value.Value {
		k.store(p.pair(i, k.mulAdd(kp, 2, k0)), dst, k.mulAdd(kp, p.w, col))
		return nil
	})
	odd := k.cur.NewICmp(enum.IPredNE, k.cur.NewSRem(n, ci(2)), ci(0))
	k.ifElse(odd, func() {
		k.store(p.half(i, k.cur.NewSub(kend, ci(1))), dst, k.mulAdd(full, p.w, col))
	}, nil)
}

// packT packs the whole panels [0, full) of an operand contiguous along
// the contraction: per group of 8 indices of a panel and 8 pairs, one
// vector load of 8 pairs from each index and the 8 x 8 block of 32-bit
// pairs transposed in registers (transpose8: the shuffles move the bits,
// they do no arithmetic), so that every load and store is a vector. A
// group of fewer than 8 (the lhs panel's last 4) reads its last index
// again and stores its lanes only (vstoreN). Pairs past the last multiple
// of 8, and an odd last index, go one by one (tail).
func (p bf16Packer) packT(dst, i0, full, k0, kend value.Value) {
	k := p.k
	pairs := k.ceilDiv(k.cur.NewSub(kend, k0), 2)
	k8 := k.cur.NewSDiv(k.cur.NewSDiv(k.cur.NewSub(kend, k0), ci(2)), ci(8))
	k.loop(ci(0), full, nil, func(pn value.Value, _ []value.Value) []value.Value {
		out := k.cur.NewMul(pn, k.cur.NewMul(pairs, ci(p.w)))
		first := k.mulAdd(pn, p.w, i0)
		for g := int64(0); g < p.w; g += 8 {
			n := min(8, p.w-g)
			rows := make([]value.Value, 8)
			for j := range rows {
				rows[j] = k.at(types.I16, p.buf.p, p.elem(k.cur.NewAdd(first, ci(g+min(int64(j), n-1))), k0))
			}
			k.loop(ci(0), k8, nil, func(kv value.Value, _ []value.Value) []value.Value {
				kp := k.cur.NewMul(kv, ci(8))
				blk := make([]value.Value, 8)
				for j := range blk {
					ptr := k.cur.NewBitCast(k.at(types.I16, rows[j], k.cur.NewMul(kp, ci(2))), types.NewPointer(v8))
					l := k.cur.NewLoad(v8, ptr)
					l.Align = 2
					blk[j] = l
				}
				for c, v := range k.transpose8(blk) {
					k.vstoreN(v, p.fdst(dst), k.cur.NewAdd(out, k.mulAdd(k.cur.NewAdd(kp, ci(int64(c))), p.w, ci(g))), n)
				}
				return nil
			})
			for j := range n {
				p.tail(dst, k.cur.NewAdd(first, ci(g+j)), k.cur.NewAdd(out, ci(g+j)), k.cur.NewMul(k8, ci(8)), k0, kend)
			}
		}
		return nil
	})
}

// fdst is dst (i32*) as float*, for the vector stores of packT.
func (p bf16Packer) fdst(dst value.Value) value.Value {
	return p.k.cur.NewBitCast(dst, types.NewPointer(types.Float))
}

// bf16Block is one packed lhs block times one packed rhs block.
type bf16Block struct {
	k            *kfn
	c            gemmC
	ap, bp, tile value.Value
	kp           value.Value // pairs in the slice
	first, last  value.Value
}

// run computes rows [m0, m0+mcur) x columns [n0, n0+ncur): each column
// panel down the lhs block's row panels. A tile's two halves of gemmMR
// rows are stored as the f32 kernel's tiles (gemmC.update), the second
// only where it has rows.
func (b bf16Block) run(m0, mcur, mEnd, n0, ncur, nEnd value.Value) {
	k := b.k
	k.loop(ci(0), k.ceilDiv(ncur, bf16GemmCols), nil, func(jp value.Value, _ []value.Value) []value.Value {
		nt := k.mulAdd(jp, bf16GemmCols, n0)
		nr := k.smin(ci(bf16GemmCols), k.cur.NewSub(nEnd, nt))
		bpan := k.at(types.I32, b.bp, k.cur.NewMul(jp, k.cur.NewMul(b.kp, ci(bf16GemmCols))))
		k.loop(ci(0), k.ceilDiv(mcur, bf16GemmRows), nil, func(ip value.Value, _ []value.Value) []value.Value {
			mt := k.mulAdd(ip, bf16GemmRows, m0)
			mr := k.smin(ci(bf16GemmRows), k.cur.NewSub(mEnd, mt))
			apan := k.at(types.I32, b.ap, k.cur.NewMul(ip, k.cur.NewMul(b.kp, ci(bf16GemmRows))))
			lo := k.smin(mr, ci(gemmMR))
			mt2, hi := k.cur.NewAdd(mt, ci(gemmMR)), k.cur.NewSub(mr, lo)
			has2 := k.cur.NewICmp(enum.IPredSGT, hi, ci(0))
			b.c.prefetch(k, tileWide, mt, nt, lo)
			k.ifElse(has2, func() { b.c.prefetch(k, tileWide, mt2, nt, hi) }, nil)
			acc := b.micro(apan, bpan)
			half := 2 * gemmMR
			b.c.update(k, tileWide, acc[:half], b.tile, mt, nt, lo, nr, b.first, b.last)
			k.ifElse(has2, func() { b.c.update(k, tileWide, acc[half:], b.tile, mt2, nt, hi, nr, b.first, b.last) }, nil)
			return nil
		})
		return nil
	})
}

// micro is the micro-kernel: per pair of contracting indices, the rhs
// panel's two vectors of 16 pairs, bf16GemmRows broadcast lhs pairs and
// a vdpbf16ps per accumulator (row i's acc[2i], acc[2i+1]): 24 chains,
// enough to keep both of Zen 5's vdpbf16ps pipes busy through its
// latency (twelve reached 0.87 of the peak a core, docs/PERFORMANCE.md).
func (b bf16Block) micro(apan, bpan value.Value) []value.Value {
	k := b.k
	v16i32 := types.NewVector(16, types.I32)
	dp := k.g.declare("llvm.x86.avx512bf16.dpbf16ps.512", v16, v16, v16i32, v16i32)
	acc := make([]value.Value, 2*bf16GemmRows)
	for i := range acc {
		acc[i] = constant.NewZeroInitializer(v16)
	}
	load := func(at value.Value) value.Value {
		ptr := k.cur.NewBitCast(k.at(types.I32, bpan, at), types.NewPointer(v16i32))
		l := k.cur.NewLoad(v16i32, ptr)
		l.Align = 4
		return l
	}
	return k.loop(ci(0), b.kp, acc, func(kp value.Value, acc []value.Value) []value.Value {
		at := k.cur.NewMul(kp, ci(bf16GemmCols))
		ws := []value.Value{load(at), load(k.cur.NewAdd(at, ci(16)))}
		aAt := k.cur.NewMul(kp, ci(bf16GemmRows))
		next := make([]value.Value, len(acc))
		for i := int64(0); i < bf16GemmRows; i++ {
			one := k.cur.NewInsertElement(constant.NewUndef(v16i32), k.load(types.I32, apan, k.cur.NewAdd(aAt, ci(i))), constant.NewInt(types.I32, 0))
			xv := k.cur.NewShuffleVector(one, constant.NewUndef(v16i32), constant.NewZeroInitializer(v16i32))
			for j := range ws {
				next[2*i+int64(j)] = k.cur.NewCall(dp, acc[2*i+int64(j)], xv, ws[j])
			}
		}
		return next
	})
}
