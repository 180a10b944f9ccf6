package llvm

import (
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
	return !x.rhsT && x.G > 1 && x.K > 0 && x.M < raggedGemmRows*x.G
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
		k.ifElse(k.cur.NewICmp(enum.IPredSLT, x.rowLo, x.rowHi), x.sweep, nil)
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
