package llvm

import (
	"slices"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"
)

// A decode-shaped ragged_dot (few rows per group, matrices stored [k,n])
// is split between the threads by expert, not by columns: the kernel's
// range is the groups, one range per group taken from the pool's shared
// counter as the threads come free, so each non-empty expert's matrix is
// read start to end by one thread, and batch 1's eight experts balance
// whichever they are. Split by columns, every thread read a strip of every
// matrix, 16 columns by 64 rows at a time: as many streams as rows, which
// only software prefetching kept fed (0.65-0.75 of a plain read per
// thread, docs/PERFORMANCE.md).
//
// Inside a group the matrix is read in its memory order, raggedBand rows
// at a time left to right (raggedBand sequential streams side by side):
// each 16-float line of the band is loaded once and multiplied into every
// row of the group, whose sums live in the result itself (a few rows of n
// floats: L1 or L2), loaded and stored once per band.

// raggedBand is how many matrix rows a sweep reads side by side.
const raggedBand = 4

// byExpert reports whether a ragged_dot of m rows over g groups of
// [k,n] matrices (k > 0) is split by expert: when its groups average fewer
// rows than make a blocked product worth packing (a decode step).
func (x *raggedCtx) byExpert() bool {
	if x.rhsT {
		return x.G > 1 && x.K > 0 && x.M < raggedExpertTRows*x.G
	}
	return x.G > 1 && x.K > 0 && x.M < raggedGemmRows*x.G
}

// emitByExpert generates the kernel over groups [lo, hi): the running end
// up to lo, each group's sweep, and, in the range that holds the last
// group, the zeroing of the rows no group covers.
func (x *raggedCtx) emitByExpert() {
	k := x.k
	x.vfma16 = k.g.declare("llvm.fmuladd.v16f32", v16, v16, v16, v16)
	start := k.loop(ci(0), k.lo, []value.Value{ci(0)}, func(g value.Value, acc []value.Value) []value.Value {
		return []value.Value{k.cur.NewAdd(acc[0], x.groupSize(g))}
	})[0]
	end := k.loop(k.lo, k.hi, []value.Value{start}, func(g value.Value, acc []value.Value) []value.Value {
		next := k.cur.NewAdd(acc[0], x.groupSize(g))
		x.rowLo, x.rowHi = k.smin(acc[0], ci(x.M)), k.smin(next, ci(x.M))
		x.wBase = k.mulAdd(g, x.K*x.N, ci(0))
		sweep := x.sweep
		if x.rhsT {
			sweep = x.sweepT
		}
		k.ifElse(k.cur.NewICmp(enum.IPredSLT, x.rowLo, x.rowHi), sweep, nil)
		return []value.Value{next}
	})[0]
	k.ifElse(k.cur.NewICmp(enum.IPredEQ, k.hi, ci(x.G)), func() {
		k.loop(k.mulAdd(k.smin(end, ci(x.M)), x.N, ci(0)), ci(x.M*x.N), nil, func(i value.Value, _ []value.Value) []value.Value {
			k.store(f32(0), x.c, i)
			return nil
		})
	}, nil)
}

// groupSize is group g's size, negative sizes taken as 0.
func (x *raggedCtx) groupSize(g value.Value) value.Value {
	k := x.k
	return k.smax(k.cur.NewSExt(k.load(types.I32, x.sizes, g), i64), ci(0))
}

// sweep computes the current group's rows: the matrix's full bands, then
// the rows past them as a narrower band, then the columns past the last
// full tile as dot products.
func (x *raggedCtx) sweep() {
	k := x.k
	full := x.K / raggedBand
	k.loop(ci(0), ci(full), nil, func(b value.Value, _ []value.Value) []value.Value {
		x.band(k.cur.NewMul(b, ci(raggedBand)), raggedBand, k.cur.NewICmp(enum.IPredEQ, b, ci(0)))
		return nil
	})
	if left := x.K % raggedBand; left > 0 {
		x.band(ci(full*raggedBand), left, constant.NewBool(full == 0))
	}
	if x.tiles*gemmNR < x.N {
		x.rest(ci(x.tiles * gemmNR))
	}
}

// raggedBandAhead is how many bands ahead of the one it reads a sweep
// prefetches (into L2): at n = 768 four rows are 12 KB, about what one
// memory latency at the core's bandwidth asks to have in flight.
const raggedBandAhead = 2

// band adds matrix rows [k0, k0+rows) times the group's lhs columns
// [k0, k0+rows) into the group's result rows (stores them when first),
// 16 columns at a time left to right.
func (x *raggedCtx) band(k0 value.Value, rows int64, first value.Value) {
	k := x.k
	zero := constant.NewZeroInitializer(v16)
	k.loop(ci(0), ci(x.tiles), nil, func(t value.Value, _ []value.Value) []value.Value {
		n0 := k.cur.NewMul(t, ci(gemmNR))
		w := make([]value.Value, rows)
		for j := range w {
			at := k.cur.NewAdd(k.mulAdd(k.cur.NewAdd(k0, ci(int64(j))), x.N, x.wBase), n0)
			w[j] = k.vload16(x.B, at)
			x.prefetch(k.cur.NewAdd(at, ci(raggedBandAhead*raggedBand*x.N)))
		}
		k.loop(x.rowLo, x.rowHi, nil, func(r value.Value, _ []value.Value) []value.Value {
			at := k.mulAdd(r, x.N, n0)
			var acc value.Value = k.cur.NewSelect(first, zero, k.vload16(x.c, at))
			aRow := k.mulAdd(r, x.K, k0)
			for j := range w {
				av := k.splatOf(v16, k.load(types.Float, x.A, k.cur.NewAdd(aRow, ci(int64(j)))))
				acc = k.cur.NewCall(x.vfma16, av, w[j], acc)
			}
			k.vstore(acc, x.c, at)
			return nil
		})
		return nil
	})
}

// Matrices stored [n,k] (Hugging Face's layout, the models' case) are read
// by expert too when the groups average fewer than raggedExpertTRows rows
// (a batch-1 decode step: one token's 8 experts of 128). Split by columns
// (streamT), each thread read 16 rows of every matrix at a time, in 8-float
// vectors with 4 sums in flight: bf16 weights were widened and multiplied
// no faster than f32 ones were read (BenchmarkRaggedDot/decode1-t: 15-16
// GB/s of bf16 against 25-27 of f32, docs/PERFORMANCE.md).
const raggedExpertTRows = 2

// raggedTUnroll is how many 16-float sums of one lhs row a dot product in
// sweepT keeps apart: four multiply-adds in flight per row, so that a
// single row's chain does not wait on the FMA's latency.
const raggedTUnroll = 4

// sweepT computes the current group's rows from its matrix stored [n,k],
// read in memory order: each matrix row once, as one sequential stream,
// its dot product with every row of the group in blocks of raggedTRows.
func (x *raggedCtx) sweepT() {
	k := x.k
	rows := k.cur.NewSub(x.rowHi, x.rowLo)
	blocks := k.cur.NewSDiv(rows, ci(raggedTRows))
	r0 := k.mulAdd(blocks, raggedTRows, x.rowLo)
	left := k.cur.NewSub(x.rowHi, r0)
	k.loop(ci(0), ci(x.N), nil, func(j value.Value, _ []value.Value) []value.Value {
		w := k.mulAdd(j, x.K, x.wBase)
		k.loop(ci(0), blocks, nil, func(b value.Value, _ []value.Value) []value.Value {
			x.dotsT(k.mulAdd(b, raggedTRows, x.rowLo), raggedTRows, j, w)
			return nil
		})
		for n := int64(1); n < raggedTRows; n++ {
			k.ifElse(k.cur.NewICmp(enum.IPredEQ, left, ci(n)), func() { x.dotsT(r0, n, j, w) }, nil)
		}
		return nil
	})
}

// raggedSweepAhead is how many bytes of the matrix ahead of what it reads
// sweepT asks for (into L2). One thread reads each expert's matrix as one
// stream, and the hardware's prefetcher alone kept too few of its lines
// in flight: BenchmarkRaggedDot/decode1-t-* (one token's 8 experts, from
// memory), without and with, six alternations of 400 runs each, weights
// read: bf16 up 17.6-19.4 -> 23.2-27.8 GB/s, down 17.8-21.1 -> 22.3-26.1;
// f32 19.9-29.7 -> 22.3-25.4 and 19.8-25.5 -> 22.5-29.5 (level). 2, 8 and
// 16 KiB ahead did as well as 4 KiB within the noise, 32 KiB no better.
// (On the host of the sweep's first figures, prefetching 1-4 rows ahead
// showed nothing: docs/PERFORMANCE.md.)
const raggedSweepAhead = 4 << 10

// prefetchAhead asks for the lines raggedSweepAhead bytes past the
// matrix elements [at, at+n) (prefetchWeight: past the last matrix's end,
// its last line).
func (x *raggedCtx) prefetchAhead(at value.Value, n int64) {
	size := int64(x.wdt.Size())
	for l := int64(0); l < n; l += 64 / size {
		x.prefetchWeight(x.k.cur.NewAdd(at, ci(l+raggedSweepAhead/size)))
	}
}

// dotsT stores column j of result rows [r0, r0+n): each the dot product of
// its lhs row with the matrix row at w, raggedTUnroll 16-float sums apart
// over the contraction, then 16 floats at a time, then one at a time.
func (x *raggedCtx) dotsT(r0 value.Value, n int64, j, w value.Value) {
	k := x.k
	const u, lanes = raggedTUnroll, 16
	aRow := make([]value.Value, n)
	for i := range aRow {
		aRow[i] = k.mulAdd(k.cur.NewAdd(r0, ci(int64(i))), x.K, ci(0))
	}
	init := make([]value.Value, n*u)
	for i := range init {
		init[i] = constant.NewZeroInitializer(v16)
	}
	// mac multiplies the lhs rows by the 16 weights at kk into acc[i*u+q].
	mac := func(kk value.Value, q int64, acc, next []value.Value) {
		wv := k.vloadDTOf(v16, x.B, k.cur.NewAdd(w, kk), x.wdt)
		for i := range aRow {
			av := k.vload16(x.A, k.cur.NewAdd(aRow[i], kk))
			next[int64(i)*u+q] = k.cur.NewCall(x.vfma16, av, wv, acc[int64(i)*u+q])
		}
	}
	acc := k.loop(ci(0), ci(x.K/(u*lanes)), init, func(s value.Value, acc []value.Value) []value.Value {
		next := slices.Clone(acc)
		x.prefetchAhead(k.cur.NewAdd(w, k.cur.NewMul(s, ci(u*lanes))), u*lanes)
		for q := int64(0); q < u; q++ {
			mac(k.mulAdd(s, u*lanes, ci(q*lanes)), q, acc, next)
		}
		return next
	})
	acc = k.loop(ci(x.K/(u*lanes)*u), ci(x.K/lanes), acc, func(v value.Value, acc []value.Value) []value.Value {
		next := slices.Clone(acc)
		mac(k.cur.NewMul(v, ci(lanes)), 0, acc, next)
		return next
	})
	for i := range aRow {
		sum := acc[int64(i)*u]
		for q := int64(1); q < u; q++ {
			sum = k.cur.NewFAdd(sum, acc[int64(i)*u+q])
		}
		s := k.hsum(k.cur.NewFAdd(k.half8(sum, 0), k.half8(sum, 1)))
		tail := k.loop(ci(x.K/lanes*lanes), ci(x.K), []value.Value{s}, func(kk value.Value, t []value.Value) []value.Value {
			av := k.load(types.Float, x.A, k.cur.NewAdd(aRow[i], kk))
			wv := k.loadDT(x.B, k.cur.NewAdd(w, kk), x.wdt)
			return []value.Value{k.cur.NewCall(x.fma, av, wv, t[0])}
		})
		k.store(tail[0], x.c, k.mulAdd(k.cur.NewAdd(r0, ci(int64(i))), x.N, j))
	}
}
