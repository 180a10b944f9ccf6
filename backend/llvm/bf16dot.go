package llvm

import (
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// Products of two bf16 operands (a dot_general written with bf16 operands
// and an f32 result, as JAX's preferred_element_type gives, or both
// operands converted from bf16) on a CPU with AVX512-BF16: vdpbf16ps
// multiplies 32 pairs of bf16 elements and adds each two neighbouring
// products into one of 16 f32 lanes, twice the multiply-adds of an f32
// FMA per instruction and half the bytes read. Elsewhere the products
// widen bf16 to f32 in registers (vloadDT) and use f32 FMAs.
//
// The kernel computes out[b, m, n] = Σ_k x[b, m, k] · w[b, n, k] with both
// operands contiguous along the contraction (a weight stored [N, K] as
// Hugging Face stores it): a tile of bf16DotRows x bf16DotCols results
// keeps one 16-lane accumulator each over the whole contraction, 32
// elements a step, and sums each across its lanes at the end; a contraction
// not a multiple of 32 ends with scalar products. The range index is
// (batch, block of bf16DotBlock rhs rows), so the threads read disjoint
// parts of the weights; in a block, each tile of lhs rows (8 KB at K =
// 1024, in L1) meets every group of rhs rows of the block (128 KB, in L2).
//
// Numerics: a bf16 × bf16 product is exact in f32 (8-bit significands), as
// on the widening path; vdpbf16ps adds the pair and the accumulator with
// round-to-nearest-even and treats denormal inputs and results as zero, so
// the result differs from the reference executor's (f64 sums, rounded
// once) by the f32 rounding of the partial sums (docs/ops.md states the
// tolerance the tests use).

// bf16Unit is how a host multiplies bf16 operands: the dispatch's choice,
// kept in the target (and, through the CPU flags, in the object cache's
// key). An AMX unit (amx_bf16 tiles) would be one more value with its own
// kernel; none is built: no host this backend was developed on has AMX.
type bf16Unit int

const (
	bf16Widen  bf16Unit = iota // widen to f32 in registers, f32 FMAs (every host)
	bf16AVX512                 // vdpbf16ps (avx512_bf16 with avx512f)
)

// hostBF16 is the unit the CPU flags offer.
func hostBF16(flags string) bf16Unit {
	if hasFlag(flags, "avx512f") && hasFlag(flags, "avx512_bf16") {
		return bf16AVX512
	}
	return bf16Widen
}

const (
	bf16DotRows  = 4  // lhs rows of a tile
	bf16DotCols  = 4  // rhs rows (result columns) of a tile: 16 accumulators
	bf16DotBlock = 64 // rhs rows per range index
	bf16DotStep  = 32 // contraction elements per vdpbf16ps
)

// bf16DotFits reports whether d runs on the vdpbf16ps kernel on tgt.
func bf16DotFits(d dotShape, tgt target) bool {
	return tgt.bf16 == bf16AVX512 && d.lhs.dt == ir.BF16 && d.rhs.dt == ir.BF16 && floatish(d.out) &&
		d.K >= bf16DotStep && d.M >= 1 && d.N >= 1 &&
		len(d.lhs.contract.sizes) == 1 && d.lhs.contract.stride1() &&
		len(d.rhs.contract.sizes) == 1 && d.rhs.contract.stride1()
}

// bf16Dot generates d (bf16DotFits) with the fused epilogue epi, if any.
func (pl *planner) bf16Dot(in *ir.Instr, env map[*ir.Value]int, epi *dotEpilogue) bool {
	d := pl.dotShape(in)
	k, st := pl.newKernelStep(in, env)
	st.what = "dot_general (avx512bf16)"
	nb := (d.N + bf16DotBlock - 1) / bf16DotBlock
	st.rows, st.work = d.B*nb, d.B*d.M*d.N*d.K
	var epiAt func(b, m, n value.Value)
	if epi != nil {
		st.what += "+" + epi.ops
		epiAt = pl.epilogue(k, &st, in, env, epi)
	}
	t := bf16Tiles{k: k, d: d, x: k.fbuf(1, ir.BF16), w: k.fbuf(2, ir.BF16), out: k.fbuf(0, d.out), epi: epiAt}
	k.loop(k.lo, k.hi, nil, func(bj value.Value, _ []value.Value) []value.Value {
		t.b = k.cur.NewSDiv(bj, ci(nb))
		n0 := k.cur.NewMul(k.cur.NewSRem(bj, ci(nb)), ci(bf16DotBlock))
		n1 := k.smin(k.cur.NewAdd(n0, ci(bf16DotBlock)), ci(d.N))
		t.xBase, t.wBase = k.offset(d.lhs.batch, t.b), k.offset(d.rhs.batch, t.b)
		full := d.M / bf16DotRows
		k.loop(ci(0), ci(full), nil, func(i value.Value, _ []value.Value) []value.Value {
			t.rowBlock(k.cur.NewMul(i, ci(bf16DotRows)), bf16DotRows, n0, n1)
			return nil
		})
		if rest := d.M % bf16DotRows; rest > 0 {
			t.rowBlock(ci(full*bf16DotRows), rest, n0, n1)
		}
		return nil
	})
	k.finish()
	pl.addDotStep(in, env, st, epi)
	return true
}

// bf16Tiles is one range index's part of a vdpbf16ps product.
type bf16Tiles struct {
	k            *kfn
	d            dotShape
	x, w, out    fbuf
	b            value.Value
	xBase, wBase value.Value
	epi          func(b, m, n value.Value)
}

// rowBlock computes rows [m0, m0+rows) for the rhs rows [n0, n1): groups
// of bf16DotCols, then the rest one at a time.
func (t bf16Tiles) rowBlock(m0 value.Value, rows int64, n0, n1 value.Value) {
	k := t.k
	full := k.cur.NewSDiv(k.cur.NewSub(n1, n0), ci(bf16DotCols))
	k.loop(ci(0), full, nil, func(j value.Value, _ []value.Value) []value.Value {
		t.tile(m0, rows, k.mulAdd(j, bf16DotCols, n0), bf16DotCols)
		return nil
	})
	k.loop(k.mulAdd(full, bf16DotCols, n0), n1, nil, func(n value.Value, _ []value.Value) []value.Value {
		t.tile(m0, rows, n, 1)
		return nil
	})
}

// tile computes out[b, m0+r, n0+c] for r < rows, c < cols.
func (t bf16Tiles) tile(m0 value.Value, rows int64, n0 value.Value, cols int64) {
	k, d := t.k, t.d
	xRow := make([]value.Value, rows)
	for r := range xRow {
		xRow[r] = k.cur.NewAdd(t.xBase, k.offset(d.lhs.free, k.cur.NewAdd(m0, ci(int64(r)))))
	}
	wRow := make([]value.Value, cols)
	for c := range wRow {
		wRow[c] = k.cur.NewAdd(t.wBase, k.offset(d.rhs.free, k.cur.NewAdd(n0, ci(int64(c)))))
	}
	v16i32 := types.NewVector(16, types.I32)
	dp := k.g.declare("llvm.x86.avx512bf16.dpbf16ps.512", v16, v16, v16i32, v16i32)
	acc := make([]value.Value, rows*cols)
	for i := range acc {
		acc[i] = constant.NewZeroInitializer(v16)
	}
	acc = k.loop(ci(0), ci(d.K/bf16DotStep), acc, func(kv value.Value, acc []value.Value) []value.Value {
		kk := k.cur.NewMul(kv, ci(bf16DotStep))
		ws := make([]value.Value, cols)
		for c := range ws {
			ws[c] = t.pairs(t.w, k.cur.NewAdd(wRow[c], kk))
		}
		next := make([]value.Value, len(acc))
		for r := range xRow {
			xv := t.pairs(t.x, k.cur.NewAdd(xRow[r], kk))
			for c := range ws {
				i := int64(r)*cols + int64(c)
				next[i] = k.cur.NewCall(dp, acc[i], xv, ws[c])
			}
		}
		return next
	})
	sums := k.laneSums(acc)
	for r := range xRow {
		for c := range wRow {
			i := int64(r)*cols + int64(c)
			s := k.cur.NewExtractElement(sums[i/16], constant.NewInt(types.I32, i%16))
			tail := k.loop(ci(d.K/bf16DotStep*bf16DotStep), ci(d.K), []value.Value{s}, func(kk value.Value, a []value.Value) []value.Value {
				p := k.cur.NewFMul(t.x.load(k.cur.NewAdd(xRow[r], kk)), t.w.load(k.cur.NewAdd(wRow[c], kk)))
				return []value.Value{k.cur.NewFAdd(a[0], p)}
			})
			m, n := k.cur.NewAdd(m0, ci(int64(r))), k.cur.NewAdd(n0, ci(int64(c)))
			t.out.store(tail[0], k.cur.NewAdd(k.cur.NewMul(t.b, ci(d.M*d.N)), k.cur.NewAdd(k.cur.NewMul(m, ci(d.N)), n)))
			if t.epi != nil {
				t.epi(t.b, m, n)
			}
		}
	}
}

// pairs loads the 32 bf16 elements at idx of a bf16 buffer as the 16
// pairs vdpbf16ps takes (2-byte aligned).
func (t bf16Tiles) pairs(b fbuf, idx value.Value) value.Value {
	k := t.k
	v16i32 := types.NewVector(16, types.I32)
	ptr := k.cur.NewBitCast(k.at(types.I16, b.p, idx), types.NewPointer(v16i32))
	l := k.cur.NewLoad(v16i32, ptr)
	l.Align = 2
	return l
}

// laneSums sums each of vs (16-lane vectors) across its lanes: lane j%16
// of vector j/16 of the result holds vs[j]'s sum. Sixteen vectors take 15
// pairwise steps of two shuffles and an add (a tree over the lanes), where
// summing each alone took 16 extracts and 15 adds apiece: at K = 1024 that
// was as much work as a third of the tile's products.
func (k *kfn) laneSums(vs []value.Value) []value.Value {
	var out []value.Value
	for at := 0; at < len(vs); at += 16 {
		group := vs[at:min(at+16, len(vs))]
		n := 1
		for n < len(group) {
			n *= 2
		}
		level := append([]value.Value{}, group...)
		for len(level) < n {
			level = append(level, constant.NewZeroInitializer(v16))
		}
		// Pair neighbours until one vector holds every sum over 16/n lanes,
		// then fold that vector onto itself until each sum is one lane.
		for len(level) > 1 {
			var next []value.Value
			for i := 0; i < len(level); i += 2 {
				next = append(next, k.pairSums(level[i], level[i+1]))
			}
			level = next
		}
		v := level[0]
		for w := 16 / n; w > 1; w /= 2 {
			v = k.pairSums(v, v)
		}
		out = append(out, v)
	}
	return out
}

// pairSums is a's neighbouring lanes added in lanes 0-7 and b's in lanes
// 8-15: lane i < 8 is a[2i]+a[2i+1], lane 8+i is b[2i]+b[2i+1].
func (k *kfn) pairSums(a, b value.Value) value.Value {
	even, odd := make([]constant.Constant, 16), make([]constant.Constant, 16)
	for i := range even {
		even[i] = constant.NewInt(types.I32, int64(2*i))
		odd[i] = constant.NewInt(types.I32, int64(2*i+1))
	}
	mask := func(c []constant.Constant) constant.Constant {
		return constant.NewVector(types.NewVector(16, types.I32), c...)
	}
	return k.cur.NewFAdd(k.cur.NewShuffleVector(a, b, mask(even)), k.cur.NewShuffleVector(a, b, mask(odd)))
}
