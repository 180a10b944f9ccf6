package llvm

import (
	"math"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// The eager library: shape-generic f32 kernels for eager tensor ops, one
// LLVM module built once per machine (the object cache keeps it like any
// program's object). Sizes and strides are arguments, read from an i64
// descriptor that is the kernel's last buffer, so one object serves every
// shape. Kernels keep the common signature (bufs, lo, hi, scratch), and
// [lo, hi) splits them across the thread pool as compiled kernels are split.
//
// The scalar computations are the compiled backend's (expr.float), so an
// eager op and the same op in a compiled program compute alike.

// eagerUnary and eagerBinary are the f32 elementwise ops with a kernel: from
// ir's table, the unary and binary ops that take f32 and the elementwise
// composites (relu, silu, gelu); eagerReduce are its reductions over axes.
var (
	eagerUnary = tableOps(func(o ir.Op, in *ir.OpInfo) bool {
		return in.Group == ir.GroupUnary && takesF32(o, 1) || in.Group == ir.GroupComposite && in.Elementwise
	})
	eagerBinary = tableOps(func(o ir.Op, in *ir.OpInfo) bool { return in.Group == ir.GroupBinary && takesF32(o, 2) })
	eagerReduce = tableOps(func(_ ir.Op, in *ir.OpInfo) bool { return in.Reduce != ir.ReduceNone })
)

// tableOps lists the ops of ir's table that keep says to.
func tableOps(keep func(ir.Op, *ir.OpInfo) bool) []ir.Op {
	var ops []ir.Op
	for _, o := range ir.Ops() {
		if keep(o, o.Info()) {
			ops = append(ops, o)
		}
	}
	return ops
}

// takesF32 reports whether op's type rule accepts n f32 operands and gives
// an f32 (complex's gives a c64, which no f32 kernel computes), and the op
// is computed here (not in refOps).
func takesF32(op ir.Op, n int) bool {
	args := make([]ir.Type, n)
	for i := range args {
		args[i] = ir.Scalar(ir.F32)
	}
	res, err := ir.Infer(op, args, nil, nil)
	return err == nil && len(res) == 1 && res[0].DType == ir.F32 && refOps[op] == ""
}

// eagerRank bounds the rank of a strided copy after merging dimensions.
const eagerRank = 8

// eagerName is the symbol of an eager kernel: the op and a variant.
func eagerName(op ir.Op, variant string) string {
	name := "eager_" + op.String()
	if variant != "" {
		name += "_" + variant
	}
	return name
}

// eagerKernel starts the kernel name.
func (g *gen) eagerKernel(name string) *kfn {
	k := g.newKernel()
	k.f.SetName(name)
	k.name = name
	return k
}

// eagerModule generates the library; wide: its products use AVX-512 tiles
// (gen.wide), as the host's programs do.
func eagerModule(wide bool) *gen {
	g := newGen(wide)
	for _, op := range eagerUnary {
		variants := []string{""}
		if op == ir.OpGelu {
			variants = []string{"exact", "tanh"}
		}
		for _, v := range variants {
			in := &ir.Instr{Op: op, Attr: &ir.GeluAttr{Approximate: v == "tanh"}}
			g.eagerElementwise(eagerName(op, v), in, 1)
		}
	}
	for _, op := range eagerBinary {
		g.eagerElementwise(eagerName(op, ""), &ir.Instr{Op: op}, 2)
	}
	for _, op := range eagerReduce {
		g.eagerReduceRows(op)
		g.eagerReduceCols(op)
	}
	g.eagerCopy()
	g.eagerGemm(true)
	g.eagerGemm(false)
	return g
}

// eagerElementwise: out[i] = op(a[i], b[i]) over [lo, hi).
func (g *gen) eagerElementwise(name string, in *ir.Instr, arity int) {
	k := g.eagerKernel(name)
	e := &expr{k: k}
	out := k.buf(0, types.Float)
	ins := make([]value.Value, arity)
	for j := range ins {
		ins[j] = k.buf(1+j, types.Float)
	}
	k.loop(k.lo, k.hi, nil, func(i value.Value, _ []value.Value) []value.Value {
		a := make([]value.Value, arity)
		for j, p := range ins {
			a[j] = k.load(types.Float, p, i)
		}
		k.store(e.float(in, a), out, i)
		return nil
	})
	k.finish()
}

// eagerStep returns the reduction's initial value and its step.
func (k *kfn) eagerStep(op ir.Op) (float64, func(acc, v value.Value) value.Value) {
	switch op {
	case ir.OpReduceSum:
		return 0, func(acc, v value.Value) value.Value { return fast(k.cur.NewFAdd(acc, v)) }
	case ir.OpReduceProd:
		return 1, func(acc, v value.Value) value.Value { return fast(k.cur.NewFMul(acc, v)) }
	case ir.OpReduceMax:
		return math.Inf(-1), func(acc, v value.Value) value.Value { return k.fmax(acc, v, true) }
	}
	return math.Inf(1), func(acc, v value.Value) value.Value { return k.fmax(acc, v, false) }
}

// eagerReduceRows reduces the input seen as [A, R] along R: out[a] for a
// in [lo, hi). Descriptor: R.
func (g *gen) eagerReduceRows(op ir.Op) {
	k := g.eagerKernel(eagerName(op, "rows"))
	out, in, desc := k.buf(0, types.Float), k.buf(1, types.Float), k.buf(2, i64)
	r := k.load(i64, desc, ci(0))
	init, step := k.eagerStep(op)
	k.loop(k.lo, k.hi, nil, func(a value.Value, _ []value.Value) []value.Value {
		base := k.cur.NewMul(a, r)
		term := func(j, acc value.Value) value.Value { return step(acc, k.load(types.Float, in, k.cur.NewAdd(base, j))) }
		if op == ir.OpReduceSum { // blocked, as the graph's sums (reduce.go)
			sum := k.runSums(r, sumBlock, constant.NewFloat(types.Double, 0), term)
			k.store(k.cur.NewFPTrunc(sum, types.Float), out, a)
			return nil
		}
		acc := k.loop(ci(0), r, []value.Value{f32(init)}, func(j value.Value, acc []value.Value) []value.Value {
			return []value.Value{term(j, acc[0])}
		})
		k.store(acc[0], out, a)
		return nil
	})
	k.finish()
}

// eagerReduceCols reduces the input seen as [A, R, B] along R: out[a, :]
// for a in [lo, hi), accumulated in place across rows so the inner loop
// runs along contiguous B. Descriptor: R, B.
func (g *gen) eagerReduceCols(op ir.Op) {
	k := g.eagerKernel(eagerName(op, "cols"))
	out, in, desc := k.buf(0, types.Float), k.buf(1, types.Float), k.buf(2, i64)
	r, b := k.load(i64, desc, ci(0)), k.load(i64, desc, ci(1))
	init, step := k.eagerStep(op)
	k.loop(k.lo, k.hi, nil, func(a value.Value, _ []value.Value) []value.Value {
		ob := k.cur.NewMul(a, b)
		k.loop(ci(0), b, nil, func(j value.Value, _ []value.Value) []value.Value {
			k.store(f32(init), out, k.cur.NewAdd(ob, j))
			return nil
		})
		k.loop(ci(0), r, nil, func(i value.Value, _ []value.Value) []value.Value {
			ib := k.cur.NewMul(k.cur.NewAdd(k.cur.NewMul(a, r), i), b)
			k.loop(ci(0), b, nil, func(j value.Value, _ []value.Value) []value.Value {
				o := k.cur.NewAdd(ob, j)
				k.store(step(k.load(types.Float, out, o), k.load(types.Float, in, k.cur.NewAdd(ib, j))), out, o)
				return nil
			})
			return nil
		})
		return nil
	})
	k.finish()
}

// eagerCopy is a strided copy (broadcast, transpose): the output is
// row-major of dims, element idx read at sum(idx[d]*strides[d]) of the
// input. Descriptor: rank, dims[rank], strides[rank]; [lo, hi) ranges
// over the rows (every index but the last).
func (g *gen) eagerCopy() {
	k := g.eagerKernel("eager_copy")
	out, in, desc := k.buf(0, types.Float), k.buf(1, types.Float), k.buf(2, i64)
	rank := k.load(i64, desc, ci(0))
	last := k.cur.NewSub(rank, ci(1))
	n := k.load(i64, desc, k.cur.NewAdd(last, ci(1)))
	s := k.load(i64, desc, k.cur.NewAdd(k.cur.NewAdd(last, rank), ci(1)))
	k.loop(k.lo, k.hi, nil, func(row value.Value, _ []value.Value) []value.Value {
		// Split row into the outer indices, innermost first.
		res := k.loop(ci(0), last, []value.Value{row, ci(0)}, func(i value.Value, acc []value.Value) []value.Value {
			d := k.cur.NewSub(k.cur.NewSub(last, ci(1)), i)
			size := k.load(i64, desc, k.cur.NewAdd(d, ci(1)))
			stride := k.load(i64, desc, k.cur.NewAdd(k.cur.NewAdd(d, rank), ci(1)))
			idx := k.cur.NewSRem(acc[0], size)
			return []value.Value{k.cur.NewSDiv(acc[0], size), k.cur.NewAdd(acc[1], k.cur.NewMul(idx, stride))}
		})
		off, ob := res[1], k.cur.NewMul(row, n)
		inner := func(at func(j value.Value) value.Value) {
			k.loop(ci(0), n, nil, func(j value.Value, _ []value.Value) []value.Value {
				k.store(k.load(types.Float, in, at(j)), out, k.cur.NewAdd(ob, j))
				return nil
			})
		}
		k.ifElse(k.cur.NewICmp(enum.IPredEQ, s, ci(1)), func() {
			inner(func(j value.Value) value.Value { return k.cur.NewAdd(off, j) })
		}, func() {
			k.ifElse(k.cur.NewICmp(enum.IPredEQ, s, ci(0)), func() {
				inner(func(value.Value) value.Value { return off })
			}, func() {
				inner(func(j value.Value) value.Value { return k.cur.NewAdd(off, k.cur.NewMul(j, s)) })
			})
		})
		return nil
	})
	k.finish()
}

// Descriptor of eager_gemm: a batch of products lhs (b, m, k) · rhs (b, k,
// n) into the row-major result [B, M, N], the operands read through
// strides, and the blocking of the compiled gemm (gemmBlocks) with the
// counts of row and column blocks.
const (
	gdB = iota
	gdM
	gdN
	gdK
	gdASB
	gdASM
	gdASK
	gdBSB
	gdBSK
	gdBSN
	gdMC
	gdKC
	gdNC
	gdNIC
	gdNJC
	gdLen
)

// eagerGemm is dot_general on the compiled backend's blocked gemm (packing,
// 6x16 micro-kernel) with every size and stride an argument. [lo, hi)
// ranges over (batch, column block, row block), row blocks innermost, as
// the compiled kernel does. unitN selects the variant for an rhs with
// stride 1 along n (packed with vector loads).
func (g *gen) eagerGemm(unitN bool) {
	name := "eager_dot_general"
	if !unitN {
		name += "_strided"
	}
	k := g.eagerKernel(name)
	desc := k.buf(3, i64)
	d := make([]value.Value, gdLen)
	for i := range d {
		d[i] = k.load(i64, desc, ci(int64(i)))
	}
	ap, bp, tile := k.gemmScratchPtrs(gemmMC, gemmKC, gemmNC)
	out, a, b := k.buf(0, types.Float), k.buf(1, types.Float), k.buf(2, types.Float)
	c := gemmC{buf: fbuf{k: k, p: out, dt: ir.F32}, ldv: d[gdN]}
	nIC, nJC := d[gdNIC], d[gdNJC]
	mn := k.cur.NewMul(d[gdM], d[gdN])
	nPC := k.smax(k.cur.NewSDiv(k.cur.NewAdd(d[gdK], k.cur.NewSub(d[gdKC], ci(1))), d[gdKC]), ci(1))
	from := k.cur.NewSDiv(k.lo, nIC)
	to := k.cur.NewSDiv(k.cur.NewAdd(k.hi, k.cur.NewSub(nIC, ci(1))), nIC)
	k.loop(from, to, nil, func(bj value.Value, _ []value.Value) []value.Value {
		bi, jc := k.cur.NewSDiv(bj, nJC), k.cur.NewSRem(bj, nJC)
		first := k.cur.NewMul(bj, nIC)
		ic0 := k.smax(k.cur.NewSub(k.lo, first), ci(0))
		ic1 := k.smin(k.cur.NewSub(k.hi, first), nIC)
		lhs := eagerOperand(k, a, k.cur.NewMul(bi, d[gdASB]), d[gdASM], d[gdASK], false)
		rhs := eagerOperand(k, b, k.cur.NewMul(bi, d[gdBSB]), d[gdBSN], d[gdBSK], unitN)
		c.base = k.cur.NewMul(bi, mn)
		n0 := k.cur.NewMul(jc, d[gdNC])
		ncur := k.smin(d[gdNC], k.cur.NewSub(d[gdN], n0))
		k.loop(ci(0), nPC, nil, func(pc value.Value, _ []value.Value) []value.Value {
			k0 := k.cur.NewMul(pc, d[gdKC])
			kcur := k.smin(d[gdKC], k.cur.NewSub(d[gdK], k0))
			k.gemmPack(bp, rhs, gemmNR, n0, d[gdN], ncur, k0, kcur)
			isFirst := k.cur.NewICmp(enum.IPredEQ, pc, ci(0))
			isLast := k.cur.NewICmp(enum.IPredEQ, pc, k.cur.NewSub(nPC, ci(1)))
			k.loop(ic0, ic1, nil, func(ic value.Value, _ []value.Value) []value.Value {
				m0 := k.cur.NewMul(ic, d[gdMC])
				mcur := k.smin(d[gdMC], k.cur.NewSub(d[gdM], m0))
				k.gemmBlock(lhs, c, ap, bp, tile, m0, d[gdM], mcur, n0, d[gdN], ncur, k0, kcur, isFirst, isLast, nil, nil)
				return nil
			})
			return nil
		})
		return nil
	})
	k.finish()
}

// eagerOperand reads p at base + i*si + kk*sk; with unit, si is 1 and the
// operand packs with vector loads.
func eagerOperand(k *kfn, p, base, si, sk value.Value, unit bool) gemmOperand {
	off := func(i, kk value.Value) value.Value {
		if unit {
			return k.cur.NewAdd(base, k.cur.NewAdd(i, k.cur.NewMul(kk, sk)))
		}
		return k.cur.NewAdd(base, k.cur.NewAdd(k.cur.NewMul(i, si), k.cur.NewMul(kk, sk)))
	}
	op := gemmOperand{at: func(i, kk value.Value) value.Value { return k.load(types.Float, p, off(i, kk)) }}
	if unit {
		op.ptr = func(i, kk value.Value) value.Value { return k.at(types.Float, p, off(i, kk)) }
	}
	return op
}
