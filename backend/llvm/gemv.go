package llvm

import (
	"cmp"
	"fmt"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// A product with a few lhs rows whose operands are both contiguous along
// the contraction: a decode step's x [1, K] times a weight stored as
// Hugging Face stores it, [N, K], and attention's q · kᵀ over the cache.
// Its cost is reading the rhs once. The blocked gemm would pack the rhs
// first (reading and writing it once more) and run its 6-row tile with
// the rows mostly empty, so these products stream the rhs instead: for
// gemvCols rows of the rhs at a time, eight contracting elements per step,
// every lhs row's vector multiplied into its own accumulator, then each
// accumulator summed across lanes. The kernel's range is (batch, block of
// gemvBlock rhs rows); the threads take runs of blocks from the pool's
// counter (a fine step), so the cores read disjoint parts of the weights.

const (
	gemvRows  = 8  // the most lhs rows (M) the streaming kernel takes
	gemvCols  = 4  // rhs rows in flight at M <= 4: M x gemvCols accumulators
	gemvBlock = 64 // rhs rows per range index
)

// gemvUnroll is the contraction loop's unroll count (gemvUnrollFor), the
// one clang's -O3 chose: left rolled (clangFlags' -fno-unroll-loops), the
// lm head's gemv of a 4-layer Qwen3-0.6B decode step took 65 ms against 53
// (medians of six loaded bench/models runs each). A variable so that
// BenchmarkGemvUnroll can build the 8-row products unrolled by 4 as they
// were (gemvUnroll 8).
var gemvUnroll int64 = 4

// gemvUnrollFor is the contraction loop's unroll count for cols rows in
// flight and accs accumulators each: gemvUnroll steps of one accumulator,
// and with more than gemvCols rows in flight as many fewer steps as they
// are more rows: 8 narrow rows (a bf16 down projection at batch 1) take 2
// steps, where they took 4. That kernel was twice the clang time of any
// other gemv of its size (41 against 23 ms for the kernel alone) and ran
// as fast with 2 (BenchmarkGemvUnroll, from cache, where the loop's
// overhead shows most; docs/PERFORMANCE.md).
func gemvUnrollFor(cols, accs int64) int64 {
	unroll := max(gemvUnroll/accs, 1)
	if cols > gemvCols {
		unroll = max(unroll*gemvCols/cols, 1)
	}
	return unroll
}

// gemvFits reports whether d runs as a streamed product.
func gemvFits(d dotShape) bool {
	return d.M >= 1 && d.M <= gemvRows && d.K >= 8 && d.N >= 1 &&
		wideable(d.lhs.dt) && wideable(d.rhs.dt) && d.out == ir.F32 &&
		len(d.lhs.contract.sizes) == 1 && d.lhs.contract.stride1() &&
		len(d.rhs.contract.sizes) == 1 && d.rhs.contract.stride1()
}

// gemvColsFor is the rhs rows in flight for m lhs rows: up to 4 rows
// 4 x m accumulators; 5 to 8 rows (a decode batch of up to 8) 2 x m, so
// the accumulators, the rhs vectors and an lhs vector stay in the 32
// vector registers of AVX-512 instead of spilling. A narrow (f16/bf16)
// rhs at one or two rows takes 8: a group then reads as many bytes as 4
// f32 rows, and from memory one row's product read bf16 weights at a
// median 23.4 GB/s against 19.8 with 4 (BenchmarkGemm/rhsT-cold-bf16, five
// alternated runs; at four rows 8 x 4 accumulators gained nothing). One
// row is read as streams now (gemvFor), so this applies at two.
func gemvColsFor(m int64, narrow bool) int64 {
	switch {
	case narrow && m <= 2:
		return 8
	case m <= 4:
		return gemvCols
	}
	return 2
}

// gemvParams is how a streamed product reads its rhs: cols rows in
// flight, accs accumulators per result along the contraction (a step
// reads 8*accs elements of each row), and the rhs prefetched ahead
// elements past the one a step reads (0: none); block rhs rows per range
// index (0: gemvBlock). spread: a whole block's cols rows in flight are
// block/cols rows apart, so each is one stream running through its part
// of the block, instead of cols neighbouring rows.
type gemvParams struct {
	cols, accs, ahead, block int64
	spread                   bool
	lanes                    int64 // elements a vector: 8 (0) or 16
}

// width is the elements of one of p's vectors: 8 unless lanes says 16.
func (p gemvParams) width() int64 { return max(p.lanes, 8) }

// gemvFor is the way a product with m lhs rows and a contraction of k
// reads its rhs (narrow: f16/bf16). One lhs row (a batch-1 decode step)
// reads each range's 256 rhs rows as 4 streams of 64 rows, 2 accumulators
// per stream: neighbouring rows are streams that each end after one row
// (4 KB of f32 or 2 KB of bf16 at K = 1024), and the hardware prefetcher
// had to find new ones every few hundred nanoseconds. From memory, on 2
// threads of the loaded 2-core host, alternated call by call
// (BenchmarkGemv, medians of 300 calls, two runs): f32 1024x3072 28.7 ->
// 32.6 and 15.7 -> 21.3 GB/s, 3072x1024 17.9 -> 22.3 and 16.9 -> 21.5, the
// lm head 1024x151936 17.2 -> 24.2; bf16 1024x3072 26.6 -> 33.1 and 15.0
// -> 22.5, 2048x1024 16.0 -> 21.5 and 16.4 -> 19.2, the lm head 14.2 ->
// 20.0. A narrow rhs is read in 16-lane vectors, one accumulator per
// stream: the same 64 bytes of bf16 a step as 2 accumulators of 8 lanes,
// half the instructions, and 1-8% faster (15 of 15 pairs). Rows of 6 KB (bf16 at K =
// 3072, a down projection) kept 8 neighbouring rows until the 4 streams
// were measured alternated call by call in one process: 1.14-1.33x the
// neighbours' rate (BenchmarkGemvDecode/bf16/down, eleven runs;
// docs/PERFORMANCE.md), level with the other projections. A prefetch
// ahead of the streams gained nothing (1 KB to 4 KB, or two rows ahead),
// nor did one row at a time (llama.cpp's way, in 8- or 16-lane vectors:
// 0.92-0.96 of the streams at K = 3072, slower below).
var gemvFor = func(m, k int64, narrow bool) gemvParams {
	if m == 1 && narrow {
		return gemvParams{cols: 4, accs: 1, lanes: 16, block: 256, spread: true}
	}
	if m == 1 {
		return gemvParams{cols: 4, accs: 2, block: 256, spread: true}
	}
	cols := gemvColsFor(m, narrow)
	p := gemvParams{cols: cols, accs: 1}
	if narrow {
		p.ahead = gemvPrefetchGroups * cols * k
	}
	return p
}

// gemv generates d (gemvFits) with the fused epilogue epi, if any.
func (pl *planner) gemv(in *ir.Instr, env map[*ir.Value]int, epi *dotEpilogue) bool {
	d := pl.dotShape(in)
	k, st := pl.newKernelStep(in, env)
	st.what = "gemv"
	p := gemvFor(d.M, d.K, d.rhs.dt != ir.F32)
	blk := cmp.Or(p.block, gemvBlock)
	if blk > gemvBlock && d.N%(2*blk) != 0 && d.N < 16*blk {
		// The threads take contiguous halves of the ranges: a few large
		// blocks that do not pair up (N = 896: 3.5 blocks of 256) would
		// give one thread up to a block more than the other.
		blk = gemvBlock
	}
	nb := (d.N + blk - 1) / blk
	st.rows, st.work = d.B*nb, d.B*d.M*d.N*d.K
	// Its ranges start nothing (no packing, no scratch): a call is cut
	// into up to fineRanges a thread, taken from the pool's counter, so
	// a thread another process holds up leaves its part of a long
	// product (the lm head's 622 MB) to the other instead of making
	// it wait (BenchmarkGemv's figures, docs/CPU_BACKEND.md).
	st.fine = true
	var epiAt func(b, m, n, dot value.Value)
	if epi != nil {
		st.what += "+" + epi.ops
		// The step's output is the epilogue's value, maybe rounded to
		// bf16 for the next product (rounds): the slot takes its type.
		pl.p.slots[st.bufs[0]].typ = epi.root.Type
		epiAt = pl.epilogueOf(k, &st, in, env, epi)
	}
	x, w, out := k.fbuf(1, d.lhs.dt), k.fbuf(2, d.rhs.dt), k.fbuf(0, ir.F32)
	last := d.N - (nb-1)*blk // rows of the last block
	k.loop(k.lo, k.hi, nil, func(bj value.Value, _ []value.Value) []value.Value {
		// Without a batch (a decode step's projections) N is left out of
		// the kernel's text but where the last block is shorter: the
		// projections of one K are then one kernel (dedupeKernels), N
		// given by the range the steps call it with.
		var b, jb value.Value = ci(0), bj
		if d.B > 1 {
			b, jb = k.cur.NewSDiv(bj, ci(nb)), k.cur.NewSRem(bj, ci(nb))
		}
		g := gemvCall{k: k, d: d, p: p, x: x, w: w, out: out, b: b,
			xBase: k.offset(d.lhs.batch, b), wBase: k.offset(d.rhs.batch, b), epi: epiAt}
		var isLast value.Value
		if last != blk {
			isLast = k.cur.NewICmp(enum.IPredEQ, jb, ci(nb-1))
		}
		g.block(k.cur.NewMul(jb, ci(blk)), isLast, blk, last)
		return nil
	})
	k.finish()
	pl.addDotStep(in, env, st, epi)
	return true
}

// streamed reports whether dot_general in runs as a streamed product
// (pl.dot's choice for its shape).
func (pl *planner) streamed(in *ir.Instr) bool {
	d := pl.dotShape(in)
	return d.B*d.M*d.N > 0 && !bf16GemmFits(d, pl.tgt) && gemvFits(d)
}

// block computes the rhs rows of one block, from n0: blk of them, or
// last in the last block (isLast, nil when last is blk). Both are known here, so only the paths
// some block takes are generated: each holds the whole product loop again
// for clang to optimise.
func (g gemvCall) block(n0, isLast value.Value, blk, last int64) {
	k, cols := g.k, g.p.cols
	size := func(div int64) value.Value { // this block's rows / div
		if last == blk {
			return ci(blk / div)
		}
		return k.cur.NewSelect(isLast, ci(last/div), ci(blk/div))
	}
	if !g.p.spread || cols == 1 || blk%cols != 0 {
		g.groups(n0, size(cols), size(1), blk%cols != 0 || last%cols != 0)
		return
	}
	// The block in cols streams of per rows each.
	streams := func(per value.Value) {
		k.loop(ci(0), per, nil, func(j value.Value, _ []value.Value) []value.Value {
			g.rows(k.cur.NewAdd(n0, j), cols, per)
			return nil
		})
	}
	if last%cols == 0 {
		streams(size(cols))
		return
	}
	k.ifElse(isLast, func() { g.groups(n0, ci(last/cols), ci(last), true) }, func() { streams(ci(blk / cols)) })
}

// groups computes the n rhs rows from n0: full groups of cols neighbouring
// rows, then, when rest, the others one at a time.
func (g gemvCall) groups(n0, full, n value.Value, rest bool) {
	k, cols := g.k, g.p.cols
	k.loop(ci(0), full, nil, func(j value.Value, _ []value.Value) []value.Value {
		g.rows(k.mulAdd(j, cols, n0), cols, ci(1))
		return nil
	})
	if !rest {
		return
	}
	k.loop(k.mulAdd(full, cols, n0), k.cur.NewAdd(n0, n), nil, func(r value.Value, _ []value.Value) []value.Value {
		g.rows(r, 1, ci(1))
		return nil
	})
}

// gemvCall is one range index's part of a streamed product.
type gemvCall struct {
	k            *kfn
	d            dotShape
	p            gemvParams
	x, w, out    fbuf
	b            value.Value
	xBase, wBase value.Value
	epi          func(b, m, n, dot value.Value)
}

// rows computes out[b, m, n0+c*stride] for every lhs row m and c < cols.
func (g gemvCall) rows(n0 value.Value, cols int64, stride value.Value) {
	k, d := g.k, g.d
	xRow := make([]value.Value, d.M)
	for m := range xRow {
		xRow[m] = k.cur.NewAdd(g.xBase, k.offset(d.lhs.free, ci(int64(m))))
	}
	wRow := make([]value.Value, cols)
	for c := range wRow {
		wRow[c] = k.cur.NewAdd(g.wBase, k.offset(d.rhs.free, k.cur.NewAdd(n0, k.times(int64(c), stride))))
	}
	acc := g.products(xRow, wRow)
	lanes := g.p.width()
	for m := range xRow {
		for c := range wRow {
			tail := []value.Value{k.hsum(acc[int64(m)*cols+int64(c)])}
			if d.K%lanes != 0 {
				tail = k.loop(ci(d.K/lanes*lanes), ci(d.K), tail, func(kk value.Value, t []value.Value) []value.Value {
					xv := g.x.load(k.cur.NewAdd(xRow[m], kk))
					wv := g.w.load(k.cur.NewAdd(wRow[c], kk))
					return []value.Value{k.cur.NewFAdd(t[0], k.cur.NewFMul(xv, wv))}
				})
			}
			nn := k.cur.NewAdd(n0, k.times(int64(c), stride))
			mm := ci(int64(m))
			if g.epi != nil {
				g.epi(g.b, mm, nn, tail[0]) // stores the epilogue's value
				continue
			}
			g.out.store(tail[0], k.mulAdd(g.b, d.M*d.N, k.mulAdd(mm, d.N, nn)))
		}
	}
}

// products returns one 8-lane vector per lhs row m and rhs row c (at
// m*cols+c) whose lanes sum to the rows' product over the contraction's
// multiples of the vector width L (g.p.width: 8 or 16). Each result keeps
// accs accumulators, steps of L*accs elements, then single vectors up to
// the last multiple of L; 16-lane sums are folded to 8 lanes at the end.
func (g gemvCall) products(xRow, wRow []value.Value) []value.Value {
	k, d, accs, lanes := g.k, g.d, g.p.accs, g.p.width()
	cols := int64(len(wRow))
	n := d.M * cols * accs
	vt := types.NewVector(uint64(lanes), types.Float)
	init := make([]value.Value, n)
	for i := range init {
		init[i] = constant.NewZeroInitializer(vt)
	}
	vfma := k.g.declare(fmt.Sprintf("llvm.fmuladd.v%df32", vt.Len), vt, vt, vt, vt)
	// step adds the products of the L elements at kk+L*a into accumulator a.
	step := func(kk value.Value, a int64, acc []value.Value) {
		ws := make([]value.Value, cols)
		for c := range ws {
			ws[c] = k.vloadDTOf(vt, g.w.p, k.cur.NewAdd(wRow[c], k.cur.NewAdd(kk, ci(lanes*a))), g.w.dt)
		}
		for m := range xRow {
			xv := k.vloadDTOf(vt, g.x.p, k.cur.NewAdd(xRow[m], k.cur.NewAdd(kk, ci(lanes*a))), g.x.dt)
			for c := range ws {
				i := (int64(m)*cols+int64(c))*accs + a
				acc[i] = k.cur.NewCall(vfma, xv, ws[c], acc[i])
			}
		}
	}
	wide := lanes * accs
	unroll := gemvUnrollFor(cols, accs)
	acc := k.loopUnrolled(unroll, ci(0), ci(d.K/wide), init, func(kv value.Value, acc []value.Value) []value.Value {
		kk := k.cur.NewMul(kv, ci(wide))
		next := append([]value.Value{}, acc...)
		for a := range accs {
			step(kk, a, next)
		}
		g.prefetchStep(wRow, kk)
		return next
	})
	out := make([]value.Value, d.M*cols)
	for i := range out {
		out[i] = acc[int64(i)*accs]
	}
	if accs > 1 && d.K/wide*accs < d.K/lanes {
		out = k.loop(ci(d.K/wide*accs), ci(d.K/lanes), out, func(kv value.Value, acc []value.Value) []value.Value {
			next := make([]value.Value, len(acc))
			spread := make([]value.Value, n)
			for i := range acc {
				spread[int64(i)*accs] = acc[i]
			}
			step(k.cur.NewMul(kv, ci(lanes)), 0, spread)
			for i := range next {
				next[i] = spread[int64(i)*accs]
			}
			return next
		})
	}
	for i := range out {
		for a := int64(1); a < accs; a++ {
			out[i] = k.cur.NewFAdd(out[i], acc[int64(i)*accs+a])
		}
		if lanes == 16 {
			out[i] = k.cur.NewFAdd(k.half8(out[i], 0), k.half8(out[i], 1))
		}
	}
	return out
}

// times is c * v, a constant when v is one.
func (k *kfn) times(c int64, v value.Value) value.Value {
	if x, ok := v.(*constant.Int); ok {
		return ci(c * x.X.Int64())
	}
	return k.cur.NewMul(ci(c), v)
}

// hsum adds the 8 lanes of v.
func (k *kfn) hsum(v value.Value) value.Value {
	i32 := func(x int64) value.Value { return constant.NewInt(types.I32, x) }
	var s value.Value = k.cur.NewExtractElement(v, i32(0))
	for i := int64(1); i < 8; i++ {
		s = k.cur.NewFAdd(s, k.cur.NewExtractElement(v, i32(i)))
	}
	return s
}

// gemvPrefetchGroups is how many groups of rhs rows ahead a narrow rhs is
// prefetched. A bf16 row is half an f32 one's bytes for the same
// instructions, so fewer of its lines are in flight at once: from memory
// the kernel read 18 GB/s of bf16 at one lhs row and 13-15 at four
// (BenchmarkGemv/cold, f32 25-30); asking for the lines two groups ahead
// made it 21 and 20. f32 weights gained nothing from it.
const gemvPrefetchGroups = 2

// prefetchStep asks for the rhs lines g.p.ahead elements past those a
// step at kk reads, one prefetch per 64-byte line. The address may lie
// past the weights: a prefetch never faults, and the pointer is computed
// without inbounds.
func (g gemvCall) prefetchStep(wRow []value.Value, kk value.Value) {
	if g.p.ahead == 0 {
		return
	}
	k := g.k
	_, mem, _ := elemType(g.d.rhs.dt)
	size := int64(4)
	if g.d.rhs.dt != ir.F32 {
		size = 2
	}
	for _, row := range wRow {
		for at := int64(0); at < g.p.width()*g.p.accs*size; at += 64 {
			idx := k.cur.NewAdd(k.cur.NewAdd(row, kk), ci(g.p.ahead+at/size))
			k.prefetch(k.cur.NewGetElementPtr(mem, g.w.p, idx), 0, 3)
		}
	}
}
