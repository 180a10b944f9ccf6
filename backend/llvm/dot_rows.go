package llvm

import (
	"fmt"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// A product with a few lhs rows whose rhs is contiguous along its free
// dimension: a decode step's attention weights [M query heads of a group,
// K cache slots] times the cache's values [K, N = head_dim]. gemv takes
// the products whose rhs is contiguous along the contraction; this one
// went to the blocked gemm, which packed the whole rhs before reading it,
// ran its 6-row tile two rows full, and was the costliest kernel of
// Qwen3-0.6B's decode step for clang (0.17-0.23 s of its 0.65 s of CPU:
// the gemm's micro-kernel, tile stores and rhs packing, each in several
// variants). Here a range index is one batch and one block of result
// columns: the block's M x vecs vectors stay in registers while the
// contraction runs, each step loading vecs vectors of one rhs row, in
// place, and multiplying each by the M broadcast lhs elements of that
// step. The rhs is read once; the code is one loop.

// dotRowsNarrow16 loads a narrow rhs in 16-lane vectors on AVX-512 (a
// variable so that BenchmarkDotRowsNarrow can build the 8-lane kernel
// beside it).
var dotRowsNarrow16 = true

// dotRowsMax is the most lhs rows a streamed-rows product takes: one
// accumulator per row and rhs vector, which must fit in the registers.
const dotRowsMax = 8

// dotRowsFits reports whether d runs as a streamed-rows product (a
// variable: BenchmarkDotRows times the blocked product beside it).
var dotRowsFits = func(d dotShape) bool {
	return d.M >= 1 && d.M <= dotRowsMax && d.K >= 1 && d.N >= 8 &&
		wideable(d.lhs.dt) && wideable(d.rhs.dt) && d.out == ir.F32 &&
		len(d.rhs.free.sizes) == 1 && d.rhs.free.stride1()
}

// dotRowsShape is how a streamed-rows product is cut: vectors of lanes
// floats (16 with AVX-512, else 8), vecs of them per block (as many as the
// registers hold beside the M x vecs accumulators and a broadcast, at most
// 8 and no more than N needs). A narrow rhs (a bf16 KV cache's values) is
// loaded 16 elements at a time and widened in registers, as an f32 one is
// loaded: widened 8 at a time, a batch-64 decode step's weighted sum over
// the bf16 cache ran half its FMAs on 8 lanes (dotRowsNarrow16).
func dotRowsShape(d dotShape, wide bool) (lanes, vecs int64) {
	lanes, regs := int64(8), int64(16)
	if wide {
		regs = 32
		if d.rhs.dt == ir.F32 || dotRowsNarrow16 {
			lanes = 16
		}
	}
	vecs = min(max((regs-2)/(d.M+1), 1), 8, (d.N+lanes-1)/lanes)
	return lanes, vecs
}

// dotRows generates d (dotRowsFits) with the fused epilogue epi, if any.
func (pl *planner) dotRows(in *ir.Instr, env map[*ir.Value]int, epi *dotEpilogue) bool {
	d := pl.dotShape(in)
	k, st := pl.newKernelStep(in, env)
	st.what = "dot_general (rows)"
	lanes, vecs := dotRowsShape(d, k.g.wide)
	w := lanes * vecs
	nb := (d.N + w - 1) / w
	st.rows, st.work = d.B*nb, d.B*d.M*d.N*d.K
	r := dotRowsCall{k: k, d: d, lanes: lanes,
		x: k.fbuf(1, d.lhs.dt), w: k.fbuf(2, d.rhs.dt), out: k.fbuf(0, ir.F32)}
	if epi != nil {
		st.what += "+" + epi.ops
		r.epi = pl.epilogue(k, &st, in, env, epi)
	}
	// The last block's columns: whole vectors, then one by one. Every
	// block but the last is whole, so only a ragged N has two paths.
	rest := d.N - (nb-1)*w
	k.loop(k.lo, k.hi, nil, func(bj value.Value, _ []value.Value) []value.Value {
		b, c := k.cur.NewSDiv(bj, ci(nb)), k.cur.NewSRem(bj, ci(nb))
		n0 := k.cur.NewMul(c, ci(w))
		if rest == w {
			r.block(b, n0, vecs)
			return nil
		}
		k.ifElse(k.cur.NewICmp(enum.IPredEQ, c, ci(nb-1)), func() {
			r.block(b, n0, rest/lanes)
			r.columns(b, k.cur.NewAdd(n0, ci(rest/lanes*lanes)), k.cur.NewAdd(n0, ci(rest)))
		}, func() { r.block(b, n0, vecs) })
		return nil
	})
	k.finish()
	pl.addDotStep(in, env, st, epi)
	return true
}

// dotRowsCall is a streamed-rows product's kernel.
type dotRowsCall struct {
	k         *kfn
	d         dotShape
	lanes     int64
	x, w, out fbuf
	epi       func(b, m, n value.Value)
}

// vload loads lanes rhs elements at idx as floats (a narrow rhs widened).
func (r dotRowsCall) vload(idx value.Value) value.Value {
	if r.lanes == 8 {
		return r.w.vload8(idx)
	}
	return r.k.vloadDTOf(v16, r.w.p, idx, r.w.dt)
}

// block computes the result columns [n0, n0+vecs*lanes) of batch b.
func (r dotRowsCall) block(b, n0 value.Value, vecs int64) {
	if vecs == 0 {
		return
	}
	k, d := r.k, r.d
	vt := types.NewVector(uint64(r.lanes), types.Float)
	vfma := k.g.declare(fmt.Sprintf("llvm.fmuladd.v%df32", r.lanes), vt, vt, vt, vt)
	xBase, wBase := k.offset(d.lhs.batch, b), k.cur.NewAdd(k.offset(d.rhs.batch, b), n0)
	init := make([]value.Value, d.M*vecs)
	for i := range init {
		init[i] = constant.NewZeroInitializer(vt)
	}
	acc := k.loop(ci(0), ci(d.K), init, func(kk value.Value, acc []value.Value) []value.Value {
		row := k.cur.NewAdd(wBase, k.offset(d.rhs.contract, kk))
		ws := make([]value.Value, vecs)
		for v := range ws {
			ws[v] = r.vload(k.cur.NewAdd(row, ci(int64(v)*r.lanes)))
		}
		xk := k.cur.NewAdd(xBase, k.offset(d.lhs.contract, kk))
		next := make([]value.Value, len(acc))
		for m := range d.M {
			a := k.splatOf(vt, r.x.load(k.cur.NewAdd(xk, k.offset(d.lhs.free, ci(m)))))
			for v := range vecs {
				next[m*vecs+v] = k.cur.NewCall(vfma, a, ws[v], acc[m*vecs+v])
			}
		}
		return next
	})
	for m := range d.M {
		at := k.cur.NewAdd(k.cur.NewMul(b, ci(d.M*d.N)), k.mulAdd(ci(m), d.N, n0))
		for v := range vecs {
			k.vstoreOf(acc[m*vecs+v], r.out.p, k.cur.NewAdd(at, ci(v*r.lanes)))
		}
	}
	r.epilogue(b, n0, k.cur.NewAdd(n0, ci(vecs*r.lanes)))
}

// columns computes the result columns [n0, n1) of batch b one by one:
// the last few of an N that is not a multiple of the vectors.
func (r dotRowsCall) columns(b, n0, n1 value.Value) {
	k, d := r.k, r.d
	k.loop(n0, n1, nil, func(n value.Value, _ []value.Value) []value.Value {
		wBase := k.cur.NewAdd(k.offset(d.rhs.batch, b), n)
		xBase := k.offset(d.lhs.batch, b)
		for m := range d.M {
			xm := k.cur.NewAdd(xBase, k.offset(d.lhs.free, ci(m)))
			s := k.loop(ci(0), ci(d.K), []value.Value{f32(0)}, func(kk value.Value, s []value.Value) []value.Value {
				xv := r.x.load(k.cur.NewAdd(xm, k.offset(d.lhs.contract, kk)))
				wv := r.w.load(k.cur.NewAdd(wBase, k.offset(d.rhs.contract, kk)))
				return []value.Value{k.cur.NewFAdd(s[0], k.cur.NewFMul(xv, wv))}
			})
			r.out.store(s[0], k.cur.NewAdd(k.cur.NewMul(b, ci(d.M*d.N)), k.mulAdd(ci(m), d.N, n)))
		}
		return nil
	})
	r.epilogue(b, n0, n1)
}

// epilogue runs the fused epilogue over the result columns [n0, n1) of
// batch b, every row.
func (r dotRowsCall) epilogue(b, n0, n1 value.Value) {
	if r.epi == nil {
		return
	}
	k := r.k
	k.loop(ci(0), ci(r.d.M), nil, func(m value.Value, _ []value.Value) []value.Value {
		k.loop(n0, n1, nil, func(n value.Value, _ []value.Value) []value.Value {
			r.epi(b, m, n)
			return nil
		})
		return nil
	})
}
