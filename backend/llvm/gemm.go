package llvm

import (
	"fmt"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// The blocked matrix product shared by dot_general and ragged_dot, in the
// BLIS arrangement: for an NC-wide block of columns and a KC-deep slice of
// the contraction, the rhs block is packed into 16-column panels (KC x 16
// floats each, 16 KiB: one stays in L1 while the micro-kernel sweeps the
// rows); for each MC-row block the lhs is packed into 6-row panels (the
// whole MC x KC block, 120 KiB, stays in L2); the micro-kernel keeps a
// 6 x 16 tile of the result in twelve <8 x float> registers over the KC
// slice and adds it into the result (with AVX-512, a 6 x 32 tile of two
// panels in twelve <16 x float>: gemmTile). Operands are read through accessors,
// so packing absorbs strides, transposes, non-collapsing dimensions and
// f16/bf16 (widened to f32 when packed); rows and columns past the edge
// are packed as zeros, so the micro-kernel is always full and only the
// store of an edge tile is partial.

// The block sizes below are the hand-tuned ones (staticGemm) and the eager
// kernels' (eager.go); a host's compiled programs use its gemmParams
// (gemm_tune.go), chosen from its caches and a calibration.
const (
	gemmMR = 6   // rows of the micro-kernel's tile
	gemmNR = 16  // columns: two AVX2 vectors
	gemmKC = 256 // depth of a packed slice: a 16-column panel is 16 KiB
	gemmMC = 120 // rows of a packed lhs block (a multiple of gemmMR): 120 KiB
	gemmNC = 512 // columns of a packed rhs block (a multiple of gemmNR): 512 KiB
	// gemmNCFew is gemmNC for a product that packs its rhs as it reads it
	// (gemmFuse): the block and the next one's lines, fetched meanwhile,
	// share L2. At 512 columns the prefetch made 64-row products slower.
	gemmNCFew = 256
)

var (
	v8  = types.NewVector(8, types.Float)
	v16 = types.NewVector(16, types.Float) // AVX-512 kernels (gen.wide)
)

// gemmOperand reads one operand of a product as f32. at(i, kk) is the
// element at free index i (a row of the lhs, a column of the rhs) and
// contracting index kk, both in range. ptr, when not nil, is &element for
// an f32 operand with stride 1 along i, which packs with vector loads.
type gemmOperand struct {
	at  func(i, kk value.Value) value.Value
	ptr func(i, kk value.Value) value.Value
	// row, when not nil, is &element(i, 0) for an operand contiguous
	// along the contraction (a weight stored [N, K] and contracted along
	// K): its panels pack by transposing 8 x 8 blocks in registers.
	row func(i value.Value) value.Value
	// rowDT is the dtype row points at: f32, or f16/bf16 (a bf16
	// checkpoint's weights, narrow.go), widened as they are packed.
	rowDT ir.DType
}

// prefetchL2 asks for the line at p into L2 (prefetcht1): lines wanted a
// whole panel's work later.
func (k *kfn) prefetchL2(p value.Value) { k.prefetch(p, 0, 2) }

// prefetch asks for the line at p, to read (rw 0) or write (1), with
// llvm.prefetch's locality (3: L1 ... 0: not kept).
func (k *kfn) prefetch(p value.Value, rw, locality int64) {
	pf := k.g.declare("llvm.prefetch.p0i8", types.Void, types.I8Ptr, types.I32, types.I32, types.I32)
	i32 := func(v int64) value.Value { return constant.NewInt(types.I32, v) }
	k.cur.NewCall(pf, k.cur.NewBitCast(p, types.I8Ptr), i32(rw), i32(locality), i32(1))
}

// gemmScratch is the scratch a gemm call needs for blocks of at most mc x
// kc (lhs) and kc x nc (rhs): the two packed blocks and one edge tile (of
// the widest micro-kernel, two panels).
func gemmScratch(mc, kc, nc int64) int64 {
	mc = (mc + gemmMR - 1) / gemmMR * gemmMR
	nc = (nc + gemmNR - 1) / gemmNR * gemmNR
	return 4 * (mc*kc + kc*nc + gemmMR*2*gemmNR)
}

// gemmBlocks are the block sizes for an m x k x n product: the constants,
// clamped to the problem. The columns are cut into blocks of equal width
// (a multiple of gemmNR): the cores share a product by column blocks, and
// 768 columns cut 512 + 256 gave one core twice the other's work.
func gemmBlocks(m, k, n int64) (mc, kc, nc int64) { return staticGemm(false).blocks(m, k, n, false) }

// blocks is gemmBlocks with p's blocks; fused: the column blocks of a
// product that packs its rhs as it reads it (NCFew).
func (p gemmParams) blocks(m, k, n int64, fused bool) (mc, kc, nc int64) {
	ncMax := p.NC
	if fused {
		ncMax = p.NCFew
	}
	return gemmBlocksOf(m, k, n, p.MC, p.KC, ncMax)
}

// gemmBlocksOf is gemmBlocks with blocks of at most mcMax x kcMax (lhs)
// and kcMax x ncMax (rhs).
func gemmBlocksOf(m, k, n, mcMax, kcMax, ncMax int64) (mc, kc, nc int64) {
	mc = min(mcMax, (m+gemmMR-1)/gemmMR*gemmMR)
	kc = min(kcMax, max(k, 1))
	nJC := max((n+ncMax-1)/ncMax, 1)
	nc = ((n+nJC-1)/nJC + gemmNR - 1) / gemmNR * gemmNR
	return max(mc, gemmMR), kc, max(nc, gemmNR)
}

// gemmScratchPtrs splits the kernel's scratch into the packed lhs block,
// the packed rhs block and the edge tile (all float*).
func (k *kfn) gemmScratchPtrs(mc, kc, nc int64) (ap, bp, tile value.Value) {
	fp := types.NewPointer(types.Float)
	base := k.cur.NewBitCast(k.scratch, fp)
	mc = (mc + gemmMR - 1) / gemmMR * gemmMR
	nc = (nc + gemmNR - 1) / gemmNR * gemmNR
	bp = k.at(types.Float, base, ci(mc*kc))
	tile = k.at(types.Float, base, ci(mc*kc+kc*nc))
	return base, bp, tile
}

// gemmPack packs free indices [i0, i0+count) x contracting [k0, k0+kc) of
// op into panels of w (gemmMR or gemmNR) laid out [panel][kc][w]; indices
// at or past end read as zero. An operand contiguous along i is read row
// by row of the block (each row split across the panels): reading it panel
// by panel would touch a new page for every 64 bytes.
func (k *kfn) gemmPack(dst value.Value, op gemmOperand, w int64, i0, end, count, k0, kc value.Value) {
	k.gemmPackFrom(dst, op, w, ci(0), i0, end, count, k0, kc)
}

// gemmPackFrom is gemmPack of the panels from skip on, for an operand
// read in place (op.ptr; skip 0 otherwise): the panels before it are
// packed by the micro-kernel as it reads them (gemmFuse).
func (k *kfn) gemmPackFrom(dst value.Value, op gemmOperand, w int64, skip, i0, end, count, k0, kc value.Value) {
	var from value.Value = ci(0)
	if op.ptr != nil && w == gemmNR {
		full := k.cur.NewSDiv(count, ci(w))
		k.loop(ci(0), kc, nil, func(kk value.Value, _ []value.Value) []value.Value {
			abs := k.cur.NewAdd(k0, kk)
			k.loop(skip, full, nil, func(p value.Value, _ []value.Value) []value.Value {
				src := op.ptr(k.mulAdd(p, w, i0), abs)
				at := k.cur.NewAdd(k.cur.NewMul(p, k.cur.NewMul(kc, ci(w))), k.cur.NewMul(kk, ci(w)))
				k.vstore(k.vload(src, ci(0)), dst, at)
				k.vstore(k.vload(src, ci(8)), dst, k.cur.NewAdd(at, ci(8)))
				return nil
			})
			return nil
		})
		from = full
	} else if op.ptr != nil {
		from = k.cur.NewSDiv(count, ci(w))
		k.gemmPackRows(dst, op, w, i0, from, k0, kc)
	} else if op.row != nil {
		from = k.cur.NewSDiv(count, ci(w))
		k.gemmPackT(dst, op, w, i0, from, k0, kc)
	}
	k.loop(from, k.ceilDiv(count, w), nil, func(p value.Value, _ []value.Value) []value.Value {
		out := k.cur.NewMul(p, k.cur.NewMul(kc, ci(w)))
		k.gemmPackScalar(dst, op, w, k.mulAdd(p, w, i0), end, out, k0, kc)
		return nil
	})
}

// gemmPackRows packs the full panels [0, full) of w rows (gemmMR: an lhs
// stored [K, M], a weight's gradient xᵀ·dy) of an operand read in place,
// contiguous along its free index, one contracting index at a time across
// all the panels. Panel by panel, element by element, each index of a
// 256-deep slice read a line of its own row, a page apart or more: the
// products of this layout ran at about half the rate of the others in a
// training step (bench/train -steps).
func (k *kfn) gemmPackRows(dst value.Value, op gemmOperand, w int64, i0, full, k0, kc value.Value) {
	k.loop(ci(0), kc, nil, func(kk value.Value, _ []value.Value) []value.Value {
		abs := k.cur.NewAdd(k0, kk)
		k.loop(ci(0), full, nil, func(p value.Value, _ []value.Value) []value.Value {
			src := op.ptr(k.mulAdd(p, w, i0), abs)
			at := k.cur.NewAdd(k.cur.NewMul(p, k.cur.NewMul(kc, ci(w))), k.cur.NewMul(kk, ci(w)))
			for j := range w {
				k.store(k.load(types.Float, src, ci(j)), dst, k.cur.NewAdd(at, ci(j)))
			}
			return nil
		})
		return nil
	})
}

// gemmPackT packs the full panels [0, full) (w rows each: gemmNR for the
// rhs, gemmMR for the lhs) of an operand that is contiguous along the
// contraction. Per group of up to 8 rows and 8 contracting indices it
// loads one vector from each row and transposes the 8 x 8 block in
// registers (transpose8), so every load and store is a vector; element
// by element this packing cost more than the product at 64 rows. A
// 6-row lhs panel reads its last row twice more and stores 6 lanes
// (masked). The contracting indices past the last multiple of 8 are
// copied one by one.
func (k *kfn) gemmPackT(dst value.Value, op gemmOperand, w int64, i0, full, k0, kc value.Value) {
	k8 := k.cur.NewSDiv(kc, ci(8))
	groups := [][2]int64{{0, 8}, {8, 8}} // first row, rows
	if w == gemmMR {
		groups = [][2]int64{{0, gemmMR}}
	}
	k.loop(ci(0), full, nil, func(p value.Value, _ []value.Value) []value.Value {
		out := k.cur.NewMul(p, k.cur.NewMul(kc, ci(w)))
		for _, g := range groups {
			rows := make([]value.Value, 8)
			for j := range rows {
				rows[j] = op.row(k.cur.NewAdd(k.mulAdd(p, w, i0), ci(g[0]+min(int64(j), g[1]-1))))
			}
			k.loop(ci(0), k8, nil, func(kv value.Value, _ []value.Value) []value.Value {
				kk := k.cur.NewMul(kv, ci(8))
				src := k.cur.NewAdd(k0, kk)
				blk := make([]value.Value, 8)
				for j := range blk {
					blk[j] = k.vloadDT(rows[j], src, op.rowDT)
				}
				for c, v := range k.transpose8(blk) {
					at := k.cur.NewAdd(out, k.mulAdd(k.cur.NewAdd(kk, ci(int64(c))), w, ci(g[0])))
					k.vstoreN(v, dst, at, g[1])
				}
				return nil
			})
			k.loop(k.cur.NewMul(k8, ci(8)), kc, nil, func(kk value.Value, _ []value.Value) []value.Value {
				at := k.cur.NewAdd(out, k.mulAdd(kk, w, ci(g[0])))
				for j := range g[1] {
					v := k.loadDT(rows[j], k.cur.NewAdd(k0, kk), op.rowDT)
					k.store(v, dst, k.cur.NewAdd(at, ci(j)))
				}
				return nil
			})
		}
		return nil
	})
}

// vstoreN stores the first n lanes of v at p[idx] (all 8: a plain store;
// fewer: a masked store, which writes nothing past them).
func (k *kfn) vstoreN(v, p, idx value.Value, n int64) {
	if n == 8 {
		k.vstore(v, p, idx)
		return
	}
	mt := types.NewVector(8, types.I1)
	ms := k.g.declare("llvm.masked.store.v8f32.p0v8f32", types.Void, v8, types.NewPointer(v8), types.I32, mt)
	lanes := make([]constant.Constant, 8)
	for i := range lanes {
		lanes[i] = constant.NewBool(int64(i) < n)
	}
	ptr := k.cur.NewBitCast(k.at(types.Float, p, idx), types.NewPointer(v8))
	k.cur.NewCall(ms, v, ptr, constant.NewInt(types.I32, 4), constant.NewVector(mt, lanes...))
}

// transpose8 transposes 8 vectors of 8 floats (rows) into 8 vectors of 8
// floats (columns) in three rounds of two-source shuffles: pairs of rows
// exchange single elements, then pairs, then halves.
func (k *kfn) transpose8(r []value.Value) []value.Value {
	shuf := func(a, b value.Value, m ...int64) value.Value {
		idx := make([]constant.Constant, len(m))
		for i, x := range m {
			idx[i] = constant.NewInt(types.I32, x)
		}
		return k.cur.NewShuffleVector(a, b, constant.NewVector(types.NewVector(8, types.I32), idx...))
	}
	a := make([]value.Value, 8)
	for i := 0; i < 8; i += 2 {
		a[i] = shuf(r[i], r[i+1], 0, 8, 2, 10, 4, 12, 6, 14)
		a[i+1] = shuf(r[i], r[i+1], 1, 9, 3, 11, 5, 13, 7, 15)
	}
	b := make([]value.Value, 8)
	for _, i := range []int{0, 1, 4, 5} {
		b[i] = shuf(a[i], a[i+2], 0, 1, 8, 9, 4, 5, 12, 13)
		b[i+2] = shuf(a[i], a[i+2], 2, 3, 10, 11, 6, 7, 14, 15)
	}
	// b[0]: columns 0|4, b[1]: 1|5, b[2]: 2|6, b[3]: 3|7 of rows 0-3; b[4..7] of rows 4-7.
	c := make([]value.Value, 8)
	for i := 0; i < 4; i++ {
		c[i] = shuf(b[i], b[i+4], 0, 1, 2, 3, 8, 9, 10, 11)
		c[i+4] = shuf(b[i], b[i+4], 4, 5, 6, 7, 12, 13, 14, 15)
	}
	return c
}

// gemmPackScalar packs one panel element by element; indices past end are
// clamped for the read and replaced by zero.
func (k *kfn) gemmPackScalar(dst value.Value, op gemmOperand, w int64, base, end, out, k0, kc value.Value) {
	idx := make([]value.Value, w)
	ok := make([]value.Value, w)
	last := k.cur.NewSub(end, ci(1))
	for j := range idx {
		i := k.cur.NewAdd(base, ci(int64(j)))
		ok[j] = k.cur.NewICmp(enum.IPredSLT, i, end)
		idx[j] = k.smin(i, last)
	}
	k.loop(ci(0), kc, nil, func(kk value.Value, _ []value.Value) []value.Value {
		at := k.mulAdd(kk, w, out)
		abs := k.cur.NewAdd(k0, kk)
		for j := range idx {
			v := k.cur.NewSelect(ok[j], op.at(idx[j], abs), f32(0))
			k.store(v, dst, k.cur.NewAdd(at, ci(int64(j))))
		}
		return nil
	})
}

// gemmTile is the micro-kernel's tile: gemmMR rows by panels column
// panels of gemmNR, held in vectors of vt (v8 for AVX2, v16 with AVX-512).
type gemmTile struct {
	vt     *types.VectorType
	panels int64
}

// The tiles: AVX2's 6 x 16 in twelve <8 x float>; with AVX-512, 6 x 32 in
// twelve <16 x float> (two panels side by side), and 6 x 16 in six for a
// last panel left alone. A core whose 512-bit FMAs are native (Zen 5, most
// AVX-512 Xeons) does twice the work per instruction with them.
var (
	tileAVX2   = gemmTile{v8, 1}
	tileWide   = gemmTile{v16, 2}
	tileWide16 = gemmTile{v16, 1}
)

func (t gemmTile) cols() int64   { return t.panels * gemmNR }
func (t gemmTile) lanes() int64  { return int64(t.vt.Len) }
func (t gemmTile) perRow() int64 { return t.cols() / t.lanes() }

// gemmMicro is the micro-kernel: the gemmMR x t.cols() tile of ap's panel
// ([kc][6]) times the column panels at bps ([kc][16] each), in vector
// accumulators (row i in acc[i*perRow : (i+1)*perRow]). Per k: the panels'
// vector loads, six broadcasts, and a fused multiply-add per accumulator
// (vbroadcastss + vfmadd231ps).
func (k *kfn) gemmMicro(t gemmTile, ap value.Value, bps []value.Value, src func(p, kk value.Value) value.Value, kc value.Value, step func(kk value.Value)) []value.Value {
	vfma := k.g.declare(fmt.Sprintf("llvm.fmuladd.v%df32", t.vt.Len), t.vt, t.vt, t.vt, t.vt)
	per := t.perRow()
	init := make([]value.Value, gemmMR*per)
	for i := range init {
		init[i] = constant.NewZeroInitializer(t.vt)
	}
	return k.loop(ci(0), kc, init, func(kk value.Value, acc []value.Value) []value.Value {
		bAt := k.cur.NewMul(kk, ci(gemmNR))
		var b []value.Value
		for p, bp := range bps {
			var row value.Value // the panel's row in the operand, when read in place
			if src != nil {
				row = src(ci(int64(p)), kk)
			}
			for h := int64(0); h < gemmNR; h += t.lanes() {
				at := k.cur.NewAdd(bAt, ci(h))
				if row == nil {
					b = append(b, k.vloadOf(t.vt, bp, at))
					continue
				}
				v := k.vloadOf(t.vt, row, ci(h))
				k.vstoreOf(v, bp, at)
				b = append(b, v)
			}
		}
		aAt := k.cur.NewMul(kk, ci(gemmMR))
		if step != nil {
			step(kk)
		}
		next := make([]value.Value, len(acc))
		for i := int64(0); i < gemmMR; i++ {
			av := k.splatOf(t.vt, k.load(types.Float, ap, k.cur.NewAdd(aAt, ci(i))))
			for j := range per {
				next[i*per+j] = k.cur.NewCall(vfma, av, b[j], acc[i*per+j])
			}
		}
		return next
	})
}

// gemmC is the result of a product: element (m, n) at base + m*ld + n of
// buf. epi, when set, is the fused epilogue: it recomputes element (m, n)
// in place after the last slice has been added.
type gemmC struct {
	buf  fbuf
	base value.Value
	ld   int64
	ldv  value.Value // ld when it is an argument (the eager kernels), else nil
	epi  func(m, n value.Value)
	// epiIn are the epilogue's operands read at the result's index
	// (epilogueInputs), whose lines prefetchEpi asks for.
	epiIn []fbuf
}

func (c gemmC) off(k *kfn, m, n value.Value) value.Value {
	if c.ldv != nil {
		return k.cur.NewAdd(k.cur.NewAdd(k.cur.NewMul(m, c.ldv), c.base), n)
	}
	return k.cur.NewAdd(k.mulAdd(m, c.ld, c.base), n)
}

// prefetch asks for the tile's rows of C (written after the k loop): a
// line (16 floats) per row and panel.
func (c gemmC) prefetch(k *kfn, t gemmTile, m0, n0, mr value.Value) {
	if c.buf.dt != ir.F32 {
		return
	}
	last := k.cur.NewSub(k.cur.NewAdd(m0, mr), ci(1))
	for i := int64(0); i < gemmMR; i++ {
		m := k.smin(k.cur.NewAdd(m0, ci(i)), last)
		for p := range t.panels {
			k.prefetch(k.at(types.Float, c.buf.p, c.off(k, m, k.cur.NewAdd(n0, ci(p*gemmNR)))), 1, 3)
		}
	}
}

// prefetchEpi asks, on the last slice (when the epilogue runs after the
// micro-kernel), for the tile's lines of the epilogue's operands into
// L2: a line per row and panel, the columns clamped below nEnd. A
// model's epilogue reads another product's result, from memory by then,
// and element by element after the tile those reads waited on memory.
func (c gemmC) prefetchEpi(k *kfn, t gemmTile, m0, n0, mr, nEnd, last value.Value) {
	if len(c.epiIn) == 0 {
		return
	}
	k.ifElse(last, func() {
		lastRow := k.cur.NewSub(k.cur.NewAdd(m0, mr), ci(1))
		for i := int64(0); i < gemmMR; i++ {
			m := k.smin(k.cur.NewAdd(m0, ci(i)), lastRow)
			for p := range t.panels {
				n := k.smin(k.cur.NewAdd(n0, ci(p*gemmNR)), k.cur.NewSub(nEnd, ci(1)))
				for _, in := range c.epiIn {
					_, mem, _ := elemType(in.dt)
					k.prefetchL2(k.at(mem, in.p, c.off(k, m, n)))
				}
			}
		}
	}, nil)
}

// update adds the tile acc into C at (m0, n0), mr x nr of it (stores it
// when first), then runs the epilogue over it when last.
func (c gemmC) update(k *kfn, t gemmTile, acc []value.Value, tile, m0, n0, mr, nr, first, last value.Value) {
	full := k.cur.NewAnd(k.cur.NewICmp(enum.IPredEQ, mr, ci(gemmMR)), k.cur.NewICmp(enum.IPredEQ, nr, ci(t.cols())))
	if c.buf.dt != ir.F32 { // f16/bf16 results are rounded element by element
		c.updateEdge(k, t, acc, tile, m0, n0, mr, nr, first)
	} else {
		k.ifElse(full, func() { c.updateFull(k, t, acc, m0, n0, first) },
			func() { c.updateEdge(k, t, acc, tile, m0, n0, mr, nr, first) })
	}
	if c.epi == nil {
		return
	}
	k.ifElse(last, func() {
		k.loop(ci(0), mr, nil, func(i value.Value, _ []value.Value) []value.Value {
			k.loop(ci(0), nr, nil, func(j value.Value, _ []value.Value) []value.Value {
				c.epi(k.cur.NewAdd(m0, i), k.cur.NewAdd(n0, j))
				return nil
			})
			return nil
		})
	}, nil)
}

// gemmBlock is the product of rows [m0, m0+mcur) x columns [n0, n0+ncur)
// over contracting slice [k0, k0+kc), with rhs already packed in bp
// (panels from column n0): pack the lhs block, then every tile. With
// AVX-512 (gen.wide) the tiles take two column panels at a time, and a
// last odd panel alone.
//
// pf, when not nil, prefetches line (line) of what the caller packs next
// for the column panel from nt: the micro-kernel calls it at each of its
// steps, for line ip*32 + kk/8 of the tile's row panel ip (for each of
// its panels), so the lines are asked for evenly while the panel is
// computed (asked for all at once, they held up the panel and mostly
// arrived too late).
func (k *kfn) gemmBlock(a gemmOperand, c gemmC, ap, bp, tile, m0, mEnd, mcur, n0, nEnd, ncur, k0, kc, first, last value.Value, pf func(nt, line value.Value), fuse *gemmFuse) {
	k.gemmPack(ap, a, gemmMR, m0, mEnd, mcur, k0, kc)
	panels := k.ceilDiv(ncur, gemmNR)
	// cols runs tiles of t over the column panels jp*step + off.
	cols := func(t gemmTile, count value.Value, off int64) {
		k.loop(ci(0), count, nil, func(jq value.Value, _ []value.Value) []value.Value {
			jp := k.mulAdd(jq, t.panels, ci(off))
			k.gemmColumn(t, a, c, ap, bp, tile, m0, mEnd, mcur, n0, nEnd, jp, kc, first, last, pf, fuse)
			return nil
		})
	}
	if !k.g.wideTile() {
		cols(tileAVX2, panels, 0)
		return
	}
	pairs := k.cur.NewSDiv(panels, ci(2))
	cols(tileWide, pairs, 0)
	odd := k.cur.NewSub(panels, k.cur.NewMul(pairs, ci(2)))
	k.ifElse(k.cur.NewICmp(enum.IPredEQ, odd, ci(1)), func() {
		k.gemmColumn(tileWide16, a, c, ap, bp, tile, m0, mEnd, mcur, n0, nEnd, k.cur.NewSub(panels, ci(1)), kc, first, last, pf, nil)
	}, nil)
}

// gemmFuse packs the rhs while the first row panel of a block is
// multiplied, for an f32 rhs read in place (op.ptr). With few rows (an
// MLP's 64: 11 row panels) each packed block feeds little work, and
// packing it first, with nothing to overlap its reads, took a third of the
// product's time on a core with 512-bit FMAs. For a product whose lhs is
// one block of rows, the caller packs only the panels from full on
// (gemmFusedPanels); the micro-kernel of row panel 0 reads every tile of
// the main kind whose panels are all below full from the operand, with
// src, and stores them packed for the panels below it.
type gemmFuse struct {
	k0, full value.Value
	src      func(n, kk value.Value) value.Value // &rhs(n, kk)
}

// wideTile reports whether the blocked product's main tile is AVX-512's
// 6 x 32 (gemmParams.Tile), else AVX2's 6 x 16.
func (g *gen) wideTile() bool { return g.wide && g.gemm.Tile == 2*gemmNR }

// gemmPackFused packs the panels of the rhs block that the micro-kernel
// will not pack as it reads them, and returns the gemmFuse that has it pack
// the others: the two halves of one split, which must agree.
func (k *kfn) gemmPackFused(bp value.Value, rhs gemmOperand, i0, end, ncur, k0, kc value.Value) *gemmFuse {
	fuse := &gemmFuse{k0: k0, full: k.gemmFusedPanels(ncur), src: rhs.ptr}
	k.gemmPackFrom(bp, rhs, gemmNR, fuse.full, i0, end, ncur, k0, kc)
	return fuse
}

// gemmFusedPanels is how many leading panels of ncur columns gemmFuse
// packs: the full panels, rounded down to whole tiles of the main kind.
func (k *kfn) gemmFusedPanels(ncur value.Value) value.Value {
	per := tileAVX2.panels
	if k.g.wideTile() {
		per = tileWide.panels
	}
	return k.cur.NewMul(k.cur.NewSDiv(ncur, ci(gemmNR*per)), ci(per))
}

// gemmColumn runs the micro-kernel of tile t down the rows of the packed
// lhs block, for the column panels from jp (gemmBlock).
func (k *kfn) gemmColumn(t gemmTile, a gemmOperand, c gemmC, ap, bp, tile, m0, mEnd, mcur, n0, nEnd, jp, kc, first, last value.Value, pf func(nt, line value.Value), fuse *gemmFuse) {
	nt := k.mulAdd(jp, gemmNR, n0)
	nr := k.smin(ci(t.cols()), k.cur.NewSub(nEnd, nt))
	var bps []value.Value
	for p := range t.panels {
		bps = append(bps, k.at(types.Float, bp, k.cur.NewMul(k.cur.NewAdd(jp, ci(p)), k.cur.NewMul(kc, ci(gemmNR)))))
	}
	k.loop(ci(0), k.ceilDiv(mcur, gemmMR), nil, func(ip value.Value, _ []value.Value) []value.Value {
		mt := k.mulAdd(ip, gemmMR, m0)
		mr := k.smin(ci(gemmMR), k.cur.NewSub(mEnd, mt))
		apan := k.at(types.Float, ap, k.cur.NewMul(ip, k.cur.NewMul(kc, ci(gemmMR))))
		c.prefetch(k, t, mt, nt, mr)
		c.prefetchEpi(k, t, mt, nt, mr, nEnd, last)
		var step func(kk value.Value)
		if pf != nil {
			step = func(kk value.Value) {
				line := k.cur.NewAdd(k.cur.NewMul(ip, ci(32)), k.cur.NewLShr(kk, ci(3)))
				for p := range t.panels {
					pf(k.cur.NewAdd(nt, ci(p*gemmNR)), line)
				}
			}
		}
		run := func(src func(p, kk value.Value) value.Value) {
			acc := k.gemmMicro(t, apan, bps, src, kc, step)
			c.update(k, t, acc, tile, mt, nt, mr, nr, first, last)
		}
		if fuse == nil {
			run(nil)
			return nil
		}
		inPlace := k.cur.NewAnd(k.cur.NewICmp(enum.IPredEQ, ip, ci(0)),
			k.cur.NewICmp(enum.IPredSLE, k.cur.NewAdd(jp, ci(t.panels)), fuse.full))
		k.ifElse(inPlace, func() {
			run(func(p, kk value.Value) value.Value {
				col := k.cur.NewAdd(nt, k.cur.NewMul(p, ci(gemmNR)))
				// The row gemmParams.Ahead steps below, or past the slice's
				// end the next tile's: each step reads a new row (a new
				// page when the rhs is wide), which the hardware does not
				// fetch ahead.
				ahead := k.cur.NewAdd(kk, ci(k.g.gemm.Ahead))
				wrap := k.cur.NewICmp(enum.IPredSGE, ahead, kc)
				pcol := k.cur.NewAdd(col, k.cur.NewSelect(wrap, ci(t.cols()), ci(0)))
				prow := k.cur.NewSub(ahead, k.cur.NewSelect(wrap, kc, ci(0)))
				k.prefetch(fuse.src(pcol, k.cur.NewAdd(fuse.k0, prow)), 0, 3)
				return fuse.src(col, k.cur.NewAdd(fuse.k0, kk))
			})
		}, func() { run(nil) })
		return nil
	})
}

// ceilDiv is ceil(x / w) for x >= 0.
func (k *kfn) ceilDiv(x value.Value, w int64) value.Value {
	return k.cur.NewSDiv(k.cur.NewAdd(x, ci(w-1)), ci(w))
}

func (k *kfn) smin(a, b value.Value) value.Value {
	return k.cur.NewSelect(k.cur.NewICmp(enum.IPredSLT, a, b), a, b)
}

func (k *kfn) smax(a, b value.Value) value.Value {
	return k.cur.NewSelect(k.cur.NewICmp(enum.IPredSGT, a, b), a, b)
}

// ifElse emits if cond { then } else { els } (els may be nil).
func (k *kfn) ifElse(cond value.Value, then, els func()) {
	tb, eb, join := k.f.NewBlock(""), k.f.NewBlock(""), k.f.NewBlock("")
	k.cur.NewCondBr(cond, tb, eb)
	k.cur = tb
	then()
	k.cur.NewBr(join)
	k.cur = eb
	if els != nil {
		els()
	}
	k.cur.NewBr(join)
	k.cur = join
}

// vload loads 8 floats at p[idx] (4-byte aligned).
func (k *kfn) vload(p, idx value.Value) value.Value { return k.vloadOf(v8, p, idx) }

// vload16 loads 16 floats at p[idx] (4-byte aligned).
func (k *kfn) vload16(p, idx value.Value) value.Value { return k.vloadOf(v16, p, idx) }

// vloadOf loads a vector of type vt at p[idx] (4-byte aligned).
func (k *kfn) vloadOf(vt *types.VectorType, p, idx value.Value) value.Value {
	ptr := k.cur.NewBitCast(k.at(types.Float, p, idx), types.NewPointer(vt))
	l := k.cur.NewLoad(vt, ptr)
	l.Align = 4
	return l
}

func (k *kfn) vstore(v, p, idx value.Value) { k.vstoreOf(v, p, idx) }

// vstoreOf stores the float vector v (of any width) at p[idx] (4-byte
// aligned).
func (k *kfn) vstoreOf(v, p, idx value.Value) {
	ptr := k.cur.NewBitCast(k.at(types.Float, p, idx), types.NewPointer(v.Type()))
	s := k.cur.NewStore(v, ptr)
	s.Align = 4
}

// half8 is lanes [8h, 8h+8) of a <16 x float>.
func (k *kfn) half8(v value.Value, h int64) value.Value {
	idx := make([]constant.Constant, 8)
	for i := range idx {
		idx[i] = constant.NewInt(types.I32, 8*h+int64(i))
	}
	return k.cur.NewShuffleVector(v, constant.NewUndef(v16), constant.NewVector(types.NewVector(8, types.I32), idx...))
}

// splat broadcasts a float to all 8 lanes.
func (k *kfn) splat(x value.Value) value.Value { return k.splatOf(v8, x) }

// splatOf broadcasts a float to every lane of a vector of type vt.
func (k *kfn) splatOf(vt *types.VectorType, x value.Value) value.Value {
	one := k.cur.NewInsertElement(constant.NewUndef(vt), x, constant.NewInt(types.I32, 0))
	mask := constant.NewZeroInitializer(types.NewVector(vt.Len, types.I32))
	return k.cur.NewShuffleVector(one, constant.NewUndef(vt), mask)
}

// updateFull adds (stores, when first) a whole f32 tile with vector
// loads and stores.
func (c gemmC) updateFull(k *kfn, t gemmTile, acc []value.Value, m0, n0, first value.Value) {
	per := t.perRow()
	for i := int64(0); i < gemmMR; i++ {
		row := c.off(k, k.cur.NewAdd(m0, ci(i)), n0)
		ats := make([]value.Value, per)
		for j := range per {
			ats[j] = k.cur.NewAdd(row, ci(j*t.lanes()))
		}
		k.ifElse(first, func() {
			for j := range per {
				k.vstoreOf(acc[i*per+j], c.buf.p, ats[j])
			}
		}, func() {
			for j := range per {
				k.vstoreOf(k.cur.NewFAdd(acc[i*per+j], k.vloadOf(t.vt, c.buf.p, ats[j])), c.buf.p, ats[j])
			}
		})
	}
}

// updateEdge goes through the tile scratch: mr x nr elements, each
// rounded to the result's dtype when stored.
func (c gemmC) updateEdge(k *kfn, t gemmTile, acc []value.Value, tile, m0, n0, mr, nr, first value.Value) {
	per := t.perRow()
	for i := int64(0); i < gemmMR; i++ {
		for j := range per {
			k.vstoreOf(acc[i*per+j], tile, ci(i*t.cols()+j*t.lanes()))
		}
	}
	k.loop(ci(0), mr, nil, func(i value.Value, _ []value.Value) []value.Value {
		k.loop(ci(0), nr, nil, func(j value.Value, _ []value.Value) []value.Value {
			v := k.load(types.Float, tile, k.mulAdd(i, t.cols(), j))
			at := c.off(k, k.cur.NewAdd(m0, i), k.cur.NewAdd(n0, j))
			k.ifElse(first, func() { c.buf.store(v, at) }, func() {
				c.buf.store(k.cur.NewFAdd(v, c.buf.load(at)), at)
			})
			return nil
		})
		return nil
	})
}
