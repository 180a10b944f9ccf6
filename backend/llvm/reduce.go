package llvm

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Reductions and the composites built on them (softmax, log_softmax,
// rms_norm, layer_norm) in f32. Sums and products accumulate in f32 with
// reassociation allowed, which lets the vectoriser keep vector accumulators
// when the reduced axis is contiguous. A float sum of more than sumBlock
// elements is blocked: each block of at most sumBlock elements is summed in
// f32 (vectorised) and the blocks' sums are added in f64, so the error does
// not grow with the length (one f32 accumulator over 10^8 elements was off
// by 1.6e-3; blocked, by about 1e-7, as XLA:CPU's and the reference
// executor's f64 sums). The reference executor accumulates sums in f64, so
// results agree within the oracle's f32 tolerance, not bit for bit.

// sumBlock is the most elements one f32 partial sum takes. Each of the
// vectoriser's 32 or so accumulators then adds about 128 elements, and the
// per-block cost (folding the lanes, one f64 add) is a few percent of the
// block's loads.
const sumBlock = 4096

// reduce generates reduce_sum/max/min/prod over any axes: loops over the
// kept dimensions (the first one is the kernel's range), and inside them
// loops over the reduced ones carrying the accumulator. Integer dtypes
// accumulate in their own width, which wraps as the reference executor's
// int64 sum or product wraps when stored.
func (pl *planner) reduce(in *ir.Instr, env map[*ir.Value]int) bool {
	dims, kept, gone, keptDims := reducedAxes(in)
	k, st, e := pl.reduceStep(in, env)
	n, _ := in.Args[0].Type.NumElements()
	st.work, st.fine = n, true
	r := k.reduction(in.Op, in.Args[0].Type.DType, in.Results[0].Type.DType)
	idx := make([]value.Value, len(dims))
	st.rows, _ = nestRows(keptDims)
	body := func(acc value.Value) value.Value { return r.step(acc, r.load(k.linear(idx, dims))) }
	if e != nil {
		body = func(acc value.Value) value.Value {
			// A value computed in one loop does not dominate another
			// (a blocked sum's runs): nothing is shared between calls.
			clear(e.memo)
			return r.step(acc, e.at(in.Args[0], idx))
		}
	}
	if x, label, ok := onehotPick(in, pl.defs); ok && e != nil {
		st.work = n / dims[len(dims)-1]
		k.pick(e, x, label, dims, kept, r)
		pl.addStep(in, env, *st)
		return true
	}
	if e == nil && maxOverLine(in, gone, len(dims)) {
		n, rows := dims[len(dims)-1], int64(1)
		for _, d := range keptDims {
			rows *= d
		}
		st.rows, st.what = rows, st.what+" over lines"
		out, x := k.fbuf(0, ir.F32), k.fbuf(1, ir.F32)
		k.loop(k.lo, k.hi, nil, func(o value.Value, _ []value.Value) []value.Value {
			out.store(k.lineMax(x.p, k.mulAdd(o, n, ci(0)), n, in.Op == ir.OpReduceMax), o)
			return nil
		})
		k.finish()
		pl.addStep(in, env, *st)
		return true
	}
	split := -1
	if in.Op == ir.OpReduceSum && floatish(in.Args[0].Type.DType) {
		split = sumSplit(gone, dims)
	}
	if e == nil && split < 0 && len(kept) > 0 && leadingOnly(gone) && in.Args[0].Type.DType == ir.F32 && in.Results[0].Type.DType == ir.F32 {
		cols := int64(1)
		for _, d := range keptDims {
			cols *= d
		}
		st.rows, st.what = cols, st.what+" over rows"
		k.reduceColumns(r, n/max(cols, 1), cols)
		k.finish()
		pl.addStep(in, env, *st)
		return true
	}
	if split < 0 && middleOnly(in) {
		outer := n / (dims[gone[0]] * keptDims[len(keptDims)-1])
		st.rows, st.what = outer, st.what+" over middle axes"
		k.reduceMiddle(r, body, idx, dims, gone)
		k.finish()
		pl.addStep(in, env, *st)
		return true
	}
	emitNest(k, keptDims, func(kidx []value.Value) {
		for i, d := range kept {
			idx[d] = kidx[i]
		}
		var acc value.Value
		if split < 0 {
			acc = k.reduceLoops(gone, dims, idx, r.init, body)
		} else {
			acc = k.blockedSum(gone, split, dims, idx, body)
		}
		r.store(acc, k.linear(kidx, keptDims))
	})
	k.finish()
	pl.addStep(in, env, *st)
	return true
}

// onehotPick reports whether in, an f32 reduce_sum over its operand's
// last axis alone, sums select(compare eq (iota along that axis, label),
// x, +0) with label the same all along the axis: a causal-LM loss picking
// each token's log-probability of its next token. At most one term of
// each sum is not +0, so the sum is +0 + x at the label's index (+0 where
// the label is outside the axis, an ignored token's -100): pick reads
// that one element instead of the 151936 of a vocabulary row.
func onehotPick(in *ir.Instr, defs map[*ir.Value]*ir.Instr) (x, label *ir.Value, ok bool) {
	t := in.Args[0].Type
	rank := t.Rank()
	if in.Op != ir.OpReduceSum || rank == 0 || t.DType != ir.F32 || in.Results[0].Type.DType != ir.F32 ||
		!slices.Equal(in.Attr.(*ir.AxesAttr).Axes, []int64{int64(rank - 1)}) {
		return nil, nil, false
	}
	sel := defs[in.Args[0]]
	if sel == nil || sel.Op != ir.OpSelect || !zeroSplat(through(sel.Args[2], defs), defs) {
		return nil, nil, false
	}
	c := defs[through(sel.Args[0], defs)]
	if c == nil || c.Op != ir.OpCompare || c.Attr.(*ir.CompareAttr).Dir != ir.CmpEQ || !c.Args[0].Type.SameShape(t) {
		return nil, nil, false
	}
	for i := range 2 {
		a, b := through(c.Args[i], defs), through(c.Args[1-i], defs)
		if iotaAlong(defs[a], rank-1) && sameAlong(defs[b], rank-1) {
			return sel.Args[1], b, true
		}
	}
	return nil, nil, false
}

// through looks through the copies that bind an opened fusion's values.
func through(v *ir.Value, defs map[*ir.Value]*ir.Instr) *ir.Value {
	for d := defs[v]; d != nil && d.Op == ir.OpCopy && len(d.Args) == 1; d = defs[v] {
		v = d.Args[0]
	}
	return v
}

// zeroSplat: v is a constant splat of +0 in the group.
func zeroSplat(v *ir.Value, defs map[*ir.Value]*ir.Instr) bool {
	d := defs[v]
	if d == nil || d.Op != ir.OpConstant {
		return false
	}
	l := d.Attr.(*ir.ConstAttr).Value
	return l != nil && l.Len() == 1 && l.Complex == nil && l.Float(0) == 0 && !math.Signbit(l.Float(0))
}

// iotaAlong: d is a signed 32- or 64-bit iota along axis, whose every
// element is its index there (a narrower one could wrap and match twice).
func iotaAlong(d *ir.Instr, axis int) bool {
	if d == nil || d.Op != ir.OpIota || d.Attr.(*ir.AxisAttr).Axis != int64(axis) {
		return false
	}
	dt := d.Results[0].Type.DType
	return dt == ir.I32 && d.Results[0].Type.Dims()[axis] <= math.MaxInt32 || dt == ir.I64
}

// sameAlong: d is a broadcast whose operand does not vary along axis of
// its result.
func sameAlong(d *ir.Instr, axis int) bool {
	if d == nil || d.Op != ir.OpBroadcast {
		return false
	}
	for i, to := range d.Attr.(*ir.DimsAttr).Dims {
		if to == int64(axis) && d.Args[0].Type.Dims()[i] != 1 {
			return false
		}
	}
	return d.Args[0].Type.IsStatic()
}

// pick emits onehotPick's reduction: for each kept index, the label read
// at index 0 of the last axis, then +0 + x at the label's index when it is
// inside the axis, else +0.
func (k *kfn) pick(e *expr, x, label *ir.Value, dims []int64, kept []int, r reduction) {
	last := len(dims) - 1
	keptDims := make([]int64, len(kept))
	for i, d := range kept {
		keptDims[i] = dims[d]
	}
	emitNest(k, keptDims, func(kidx []value.Value) {
		idx := make([]value.Value, len(dims))
		for i, d := range kept {
			idx[d] = kidx[i]
		}
		idx[last] = ci(0)
		clear(e.memo)
		l := e.at(label, idx)
		if !l.Type().Equal(types.I64) {
			l = k.cur.NewSExt(l, types.I64)
		}
		at := k.linear(kidx, keptDims)
		inside := k.cur.NewAnd(k.cur.NewICmp(enum.IPredSGE, l, ci(0)), k.cur.NewICmp(enum.IPredSLT, l, ci(dims[last])))
		k.ifElse(inside, func() {
			clear(e.memo) // computed in this branch only
			idx[last] = l
			r.store(k.cur.NewFAdd(f32(0), e.at(x, idx)), at)
		}, func() { r.store(f32(0), at) })
	})
	k.finish()
}

// fusedReduce reports whether operand i of in is an expression of the
// group (defs) that in, a reduction of f32 to f32, computes as it reads it
// instead of reading it from memory: a loss's select against an iota
// summed over a 151936-word vocabulary, or a gradient's product summed
// over the batch, is then never stored (one pass over its operands, not a
// write and a read of a tensor as large).
func fusedReduce(in *ir.Instr, i int, defs map[*ir.Value]*ir.Instr) bool {
	if in.Op.Info().Reduce == ir.ReduceNone || i != 0 || len(in.Args) != 1 || len(in.Results) != 1 {
		return false
	}
	d := defs[in.Args[0]]
	return d != nil && d.Op != ir.OpConcat && in.Args[0].Type.DType == ir.F32 &&
		in.Results[0].Type.DType == ir.F32 && in.Args[0].Type.IsStatic() && (reducesLast(in) || middleOnly(in))
}

// middleOnly: in, an f32 reduction, reduces one axis that is neither its
// operand's first nor its last (an MoE's combine: [tokens, top-k, hidden]
// summed over top-k), with at most sumBlock terms a result. reduceMiddle
// then walks the last axis innermost, contiguously, for expressions too.
func middleOnly(in *ir.Instr) bool {
	axes, r := in.Attr.(*ir.AxesAttr).Axes, in.Args[0].Type.Rank()
	return len(axes) == 1 && axes[0] > 0 && int(axes[0]) < r-1 && in.Args[0].Type.IsStatic() &&
		in.Args[0].Type.DType == ir.F32 && in.Results[0].Type.DType == ir.F32 &&
		in.Args[0].Type.Dims()[axes[0]] <= sumBlock
}

// reduceMiddle reduces the one axis gone[0] of dims (middleOnly), the
// kernel's range the results' rows (every index but the last): the row of
// results, in memory, is the accumulator, and each term's row is read
// along the last axis. Each result takes its terms in order, one f32
// accumulator, as reduceLoops does. Result by result the terms were a
// row's stride apart, scalar: an MoE's combine ([512, 8, 2048] summed over
// the 8 experts) ran at 2.4 GB/s (bench/models -steps).
func (k *kfn) reduceMiddle(r reduction, body func(acc value.Value) value.Value, idx []value.Value, dims []int64, gone []int) {
	out := k.fbuf(0, ir.F32)
	last := len(dims) - 1
	cols := dims[last]
	var rows []int // the kept dimensions before the last
	for d := range last {
		if d != gone[0] {
			rows = append(rows, d)
		}
	}
	k.loop(k.lo, k.hi, nil, func(o value.Value, _ []value.Value) []value.Value {
		rest := o
		for i := len(rows) - 1; i >= 0; i-- { // o's index along each kept dimension
			idx[rows[i]] = k.cur.NewSRem(rest, ci(dims[rows[i]]))
			rest = k.cur.NewSDiv(rest, ci(dims[rows[i]]))
		}
		base := k.cur.NewMul(o, ci(cols))
		k.loop(ci(0), ci(cols), nil, func(c value.Value, _ []value.Value) []value.Value {
			r.store(r.init, k.cur.NewAdd(base, c))
			return nil
		})
		k.loop(ci(0), ci(dims[gone[0]]), nil, func(g value.Value, _ []value.Value) []value.Value {
			idx[gone[0]] = g
			k.loop(ci(0), ci(cols), nil, func(c value.Value, _ []value.Value) []value.Value {
				idx[last] = c
				at := k.cur.NewAdd(base, c)
				r.store(body(out.load(at)), at)
				return nil
			})
			return nil
		})
		return nil
	})
}

// reducesLast: in reduces its operand's last axis, which the innermost loop
// then walks contiguously. Over leading axes only (a norm's scale gradient
// summed over the tokens) each element of the expression would be read
// with a row's stride from each of its operands, which measured slower than
// storing it contiguously and summing that.
func reducesLast(in *ir.Instr) bool {
	last := int64(in.Args[0].Type.Rank() - 1)
	return slices.Contains(in.Attr.(*ir.AxesAttr).Axes, last)
}

// reduceStep starts in's kernel step: newKernelStep's, or, when its
// operand is an expression planned in no memory (fusedReduce), a step
// whose inputs are the expression's leaves and the expression that
// computes the operand at an index.
func (pl *planner) reduceStep(in *ir.Instr, env map[*ir.Value]int) (*kfn, *step, *expr) {
	a := in.Args[0]
	if _, inMemory := env[a]; inMemory || !fusedReduce(in, 0, pl.defs) {
		k, st := pl.newKernelStep(in, env)
		return k, &st, nil
	}
	k := pl.p.gen.newKernel()
	st := &step{kind: stepKernel, name: k.name, outs: 1, what: in.Op.String() + " of " + pl.exprOp(a, pl.defs).String()}
	st.bufs = append(st.bufs, pl.newSlot(slot{typ: in.Results[0].Type}))
	e := &expr{k: k, defs: pl.defs, memo: map[string]value.Value{}, bufs: map[*ir.Value]int{}}
	e.leaf = func(x *ir.Value) (int, bool) {
		s, ok := env[x]
		if !ok {
			return 0, false
		}
		st.bufs = append(st.bufs, s)
		return len(st.bufs) - 1, true
	}
	return k, st, e
}

// reduction is how a reduce kernel reads its operand (buffer 1), starts
// and steps its accumulator, and stores the result (buffer 0).
type reduction struct {
	init  value.Value
	step  func(acc, v value.Value) value.Value
	load  func(i value.Value) value.Value
	store func(v, i value.Value)
}

func (k *kfn) reduction(op ir.Op, dt, rdt ir.DType) reduction {
	if floatish(dt) {
		out := k.fbuf(0, rdt)
		// The operand's buffer is declared where it is loaded: a fused
		// reduction (reduceStep) has none.
		r := reduction{load: func(i value.Value) value.Value { return k.fbuf(1, dt).load(i) }, store: out.store}
		switch op {
		case ir.OpReduceSum:
			r.init, r.step = f32(0), func(acc, v value.Value) value.Value { return fast(k.cur.NewFAdd(acc, v)) }
		case ir.OpReduceProd:
			r.init, r.step = f32(1), func(acc, v value.Value) value.Value { return fast(k.cur.NewFMul(acc, v)) }
		case ir.OpReduceMax:
			r.init, r.step = f32(math.Inf(-1)), func(acc, v value.Value) value.Value { return k.fmax(acc, v, true) }
		default:
			r.init, r.step = f32(math.Inf(1)), func(acc, v value.Value) value.Value { return k.fmax(acc, v, false) }
		}
		return r
	}
	it, _, _ := elemType(dt)
	x, out := k.buf(1, it), k.buf(0, it)
	r := reduction{
		load:  func(i value.Value) value.Value { return k.load(it, x, i) },
		store: func(v, i value.Value) { k.store(v, out, i) },
	}
	lo, hi := dt.IntRange()
	n := func(v int64) value.Value { return constant.NewInt(it.(*types.IntType), v) }
	pick := func(p enum.IPred) func(acc, v value.Value) value.Value {
		if !dt.IsSigned() {
			p = upred[p]
		}
		return func(acc, v value.Value) value.Value { return k.cur.NewSelect(k.cur.NewICmp(p, v, acc), v, acc) }
	}
	switch op {
	case ir.OpReduceSum:
		r.init, r.step = n(0), func(acc, v value.Value) value.Value { return k.cur.NewAdd(acc, v) }
	case ir.OpReduceProd:
		r.init, r.step = n(1), func(acc, v value.Value) value.Value { return k.cur.NewMul(acc, v) }
	case ir.OpReduceMax:
		r.init, r.step = n(lo), pick(enum.IPredSGT)
	default:
		r.init, r.step = n(hi), pick(enum.IPredSLT)
	}
	return r
}

// maxOverLine reports whether in, with its operand in memory, is an f32
// reduce_max or reduce_min over the last axis alone: each result is the
// max of a contiguous line, which lineMax takes sixteen lanes at a time.
// The scalar loop (reduceLoops) is a chain of fmax's compares and selects,
// about seven cycles an element: a reduce_max over [256, 151936] took
// 116-137 ms against 18-28 for the log_softmax of the same logits.
func maxOverLine(in *ir.Instr, gone []int, rank int) bool {
	return (in.Op == ir.OpReduceMax || in.Op == ir.OpReduceMin) && len(gone) == 1 && gone[0] == rank-1 &&
		in.Args[0].Type.DType == ir.F32 && in.Results[0].Type.DType == ir.F32
}

// leadingOnly reports whether the axes gone (sorted) are the leading ones.
func leadingOnly(gone []int) bool {
	for i, d := range gone {
		if d != i {
			return false
		}
	}
	return len(gone) > 0
}

// reducedAxes splits the operand's dimensions of the reduction in into
// the kept and the reduced (gone) ones, in order, with the kept sizes.
func reducedAxes(in *ir.Instr) (dims []int64, kept, gone []int, keptDims []int64) {
	dims = in.Args[0].Type.Dims()
	red := make([]bool, len(dims))
	for _, ax := range in.Attr.(*ir.AxesAttr).Axes {
		red[ax] = true
	}
	for d := range dims {
		if red[d] {
			gone = append(gone, d)
		} else {
			kept = append(kept, d)
			keptDims = append(keptDims, dims[d])
		}
	}
	return dims, kept, gone, keptDims
}

// reduceColumns reduces an f32 operand [rows, cols] (the leading axes as
// one) over its rows into cols results, the kernel's range a band [lo, hi)
// of them: the results, in memory, are the accumulators, and the operand
// is read a row's band at a time, contiguously. Each result still takes
// its terms in row order, one f32 accumulator (a sum of at most sumBlock
// terms), as reduceLoops does. Result by result instead, each term was a
// row's stride from the last: a norm's scale gradient, summed over 1024
// tokens, ran at 0.2-1 GB/s in a training step (bench/train -steps).
func (k *kfn) reduceColumns(r reduction, rows, cols int64) {
	out := k.fbuf(0, ir.F32)
	k.loop(k.lo, k.hi, nil, func(j value.Value, _ []value.Value) []value.Value {
		r.store(r.init, j)
		return nil
	})
	k.loop(ci(0), ci(rows), nil, func(i value.Value, _ []value.Value) []value.Value {
		base := k.cur.NewMul(i, ci(cols))
		k.loop(k.lo, k.hi, nil, func(j value.Value, _ []value.Value) []value.Value {
			r.store(r.step(out.load(j), r.load(k.cur.NewAdd(base, j))), j)
			return nil
		})
		return nil
	})
}

// reduceLoops nests loops over the dimensions gone (setting idx) and
// carries one accumulator through them.
func (k *kfn) reduceLoops(gone []int, dims []int64, idx []value.Value, init value.Value, body func(acc value.Value) value.Value) value.Value {
	if len(gone) == 0 {
		return body(init)
	}
	d := gone[0]
	r := k.loop(ci(0), ci(dims[d]), []value.Value{init}, func(i value.Value, acc []value.Value) []value.Value {
		idx[d] = i
		return []value.Value{k.reduceLoops(gone[1:], dims, idx, acc[0], body)}
	})
	return r[0]
}

// sumSplit returns the position in gone of the reduced dimension that a
// blocked sum splits into blocks: the innermost dimension whose size times
// the sizes of those inside it exceeds sumBlock; -1 when all of gone
// together has at most sumBlock elements (one f32 sum, not blocked).
func sumSplit(gone []int, dims []int64) int {
	p := int64(1)
	for j := len(gone) - 1; j >= 0; j-- {
		if p*dims[gone[j]] > sumBlock {
			return j
		}
		p *= dims[gone[j]]
	}
	return -1
}

// blockedSum sums body's terms over the dimensions gone, as reduceLoops,
// in f32 blocks combined in f64: the dimensions inside gone[split] are
// summed whole in each block and gone[split] is cut into runs of as many
// indices as keep a block within sumBlock elements; the dimensions outside
// it carry the f64 sum. It returns the sum rounded to f32.
func (k *kfn) blockedSum(gone []int, split int, dims []int64, idx []value.Value, body func(acc value.Value) value.Value) value.Value {
	inner := int64(1)
	for _, d := range gone[split+1:] {
		inner *= dims[d]
	}
	d := gone[split]
	run := max(1, sumBlock/inner)
	var outer func(j int, acc value.Value) value.Value
	outer = func(j int, acc value.Value) value.Value {
		if j < split {
			return k.loop(ci(0), ci(dims[gone[j]]), []value.Value{acc}, func(i value.Value, a []value.Value) []value.Value {
				idx[gone[j]] = i
				return []value.Value{outer(j+1, a[0])}
			})[0]
		}
		return k.runSums(ci(dims[d]), run, acc, func(i value.Value, s value.Value) value.Value {
			idx[d] = i
			return k.reduceLoops(gone[split+1:], dims, idx, s, body)
		})
	}
	return k.cur.NewFPTrunc(outer(0, constant.NewFloat(types.Double, 0)), types.Float)
}

// runSums adds to the f64 acc the f32 sums of step's terms over runs of
// run indices of [0, n) (n an i64): step(i, s) adds the terms of index i
// to s.
func (k *kfn) runSums(n value.Value, run int64, acc value.Value, step func(i, s value.Value) value.Value) value.Value {
	nruns := k.cur.NewSDiv(k.cur.NewAdd(n, ci(run-1)), ci(run))
	return k.loop(ci(0), nruns, []value.Value{acc}, func(b value.Value, a []value.Value) []value.Value {
		from := k.cur.NewMul(b, ci(run))
		end := k.cur.NewAdd(from, ci(run))
		to := k.cur.NewSelect(k.cur.NewICmp(enum.IPredSLT, end, n), end, n)
		s := k.loop(from, to, []value.Value{f32(0)}, func(i value.Value, s []value.Value) []value.Value {
			return []value.Value{step(i, s[0])}
		})[0]
		return []value.Value{k.cur.NewFAdd(a[0], k.cur.NewFPExt(s, types.Double))}
	})[0]
}

// lineLength is the length n of a norm's lines as the kernel k sees it.
// Up to sumBlock (one summing loop, whatever n) it is read at run time
// from a constant buffer added to the step st, so that the norms of one
// model over lines of different lengths (Qwen3's over the hidden size and
// over a head's q and k) are one kernel: the text of a norm held nothing
// else of its size. Past sumBlock the sum is blocked by n's value, and n
// stays in the text.
func (pl *planner) lineLength(k *kfn, st *step, n int64) value.Value {
	if n > sumBlock {
		return ci(n)
	}
	data := backend.AlignedBytes(8)
	binary.LittleEndian.PutUint64(data, uint64(n))
	i := len(st.bufs)
	st.bufs = append(st.bufs, pl.newSlot(slot{typ: ir.Tensor(ir.I64), kind: slotConst, data: data}))
	return k.load(types.I64, k.buf(i, types.I64), ci(0))
}

// mulBy is a*b in i64 index arithmetic (nsw), b a constant or a value.
func (k *kfn) mulBy(a, b value.Value) value.Value {
	if c, ok := b.(*constant.Int); ok {
		return k.mulAdd(a, c.X.Int64(), ci(0))
	}
	m := k.cur.NewMul(a, b)
	m.OverflowFlags = []enum.OverflowFlag{enum.OverflowFlagNSW}
	return m
}

// lineSumTo is lineSum of a line of n elements whose length the kernel
// holds as line (lineLength): one f32 loop to line when n is at most
// sumBlock.
func (k *kfn) lineSumTo(n int64, line value.Value, term func(i value.Value) value.Value) value.Value {
	if n > sumBlock {
		return k.lineSum(n, term)
	}
	return k.loop(ci(0), line, []value.Value{f32(0)}, func(i value.Value, s []value.Value) []value.Value {
		return []value.Value{fast(k.cur.NewFAdd(s[0], term(i)))}
	})[0]
}

// lineSum is the f32 sum of term(i) for i in [0, n): one f32 loop when n is
// at most sumBlock, else blocked as blockedSum.
func (k *kfn) lineSum(n int64, term func(i value.Value) value.Value) value.Value {
	step := func(i, s value.Value) value.Value { return fast(k.cur.NewFAdd(s, term(i))) }
	if n <= sumBlock {
		return k.loop(ci(0), ci(n), []value.Value{f32(0)}, func(i value.Value, s []value.Value) []value.Value {
			return []value.Value{step(i, s[0])}
		})[0]
	}
	return k.cur.NewFPTrunc(k.runSums(ci(n), sumBlock, constant.NewFloat(types.Double, 0), step), types.Float)
}

// lines describes the lines along axis of a shape: outer lines of n
// elements each inner apart.
func lines(dims []int64, axis int) (outer, n, inner int64) {
	outer, inner = 1, 1
	for d, s := range dims {
		switch {
		case d < axis:
			outer *= s
		case d > axis:
			inner *= s
		}
	}
	return outer, dims[axis], inner
}

// softmax generates softmax and log_softmax along any axis: per line, the
// max (NaN-propagating), the sum of exp(x-max), then the outputs, as the
// reference executor computes them.
func (pl *planner) softmax(in *ir.Instr, env map[*ir.Value]int) bool {
	dims := in.Args[0].Type.Dims()
	outer, n, inner := lines(dims, int(in.Attr.(*ir.AxisAttr).Axis))
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work, st.fine = outer, outer*n*inner*8, true
	out, x := k.fbuf(0, in.Results[0].Type.DType), k.fbuf(1, in.Args[0].Type.DType)
	exp := k.g.expf()
	logf := k.g.declare("llvm.log.f32", types.Float, types.Float)
	k.loop(k.lo, k.hi, nil, func(o value.Value, _ []value.Value) []value.Value {
		k.loopN(inner, func(j value.Value) {
			base := k.mulAdd(o, n*inner, j)
			at := func(i value.Value) value.Value { return k.mulAdd(i, inner, base) }
			var m value.Value
			if inner == 1 && x.dt == ir.F32 {
				m = k.lineMax(x.p, base, n, true)
			} else {
				m = k.loop(ci(0), ci(n), []value.Value{f32(math.Inf(-1))}, func(i value.Value, acc []value.Value) []value.Value {
					return []value.Value{k.fmax(acc[0], x.load(at(i)), true)}
				})[0]
			}
			// An f32 softmax keeps each exp in the output for the division
			// (one exp per element); f16/bf16 would round it there first.
			keep := in.Op == ir.OpSoftmax && in.Results[0].Type.DType == ir.F32
			s := k.lineSum(n, func(i value.Value) value.Value {
				e := k.cur.NewCall(exp, k.cur.NewFSub(x.load(at(i)), m))
				if keep {
					out.store(e, at(i))
				}
				return e
			})
			if in.Op == ir.OpSoftmax {
				k.loopN(n, func(i value.Value) {
					var e value.Value
					if keep {
						e = out.load(at(i))
					} else {
						e = k.cur.NewCall(exp, k.cur.NewFSub(x.load(at(i)), m))
					}
					out.store(k.cur.NewFDiv(e, s), at(i))
				})
				return
			}
			ls := k.cur.NewCall(logf, s)
			k.loopN(n, func(i value.Value) {
				v := k.cur.NewFSub(k.cur.NewFSub(x.load(at(i)), m), ls)
				out.store(v, at(i))
			})
		})
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// norm generates layer_norm ((x-mean)/sqrt(var+eps)*scale+bias, biased
// variance) and rms_norm (x/sqrt(mean(x^2)+eps)*scale) over the last axis.
func (pl *planner) norm(in *ir.Instr, env map[*ir.Value]int) bool {
	dims := in.Args[0].Type.Dims()
	if len(dims) == 0 {
		return false
	}
	n := dims[len(dims)-1]
	total, _ := in.Args[0].Type.NumElements()
	rows := int64(0)
	if n > 0 {
		rows = total / n
	}
	eps := in.Attr.(*ir.EpsAttr).Eps
	layer := in.Op == ir.OpLayerNorm
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work, st.fine = rows, total*4, true
	out, x, scale := k.fbuf(0, in.Results[0].Type.DType), k.fbuf(1, in.Args[0].Type.DType), k.fbuf(2, in.Args[1].Type.DType)
	sqrt := k.g.declare("llvm.sqrt.f32", types.Float, types.Float)
	line := pl.lineLength(k, &st, n)
	k.loop(k.lo, k.hi, nil, func(r value.Value, _ []value.Value) []value.Value {
		base := k.mulBy(r, line)
		at := func(i value.Value) value.Value { return k.cur.NewAdd(base, i) }
		var nf value.Value = k.cur.NewSIToFP(line, types.Float)
		if c, ok := line.(*constant.Int); ok {
			nf = f32(float64(c.X.Int64()))
		}
		var mean value.Value = f32(0)
		if layer {
			s := k.lineSumTo(n, line, func(i value.Value) value.Value { return x.load(at(i)) })
			mean = k.cur.NewFDiv(s, nf)
		}
		sq := k.lineSumTo(n, line, func(i value.Value) value.Value {
			d := k.cur.NewFSub(x.load(at(i)), mean)
			return k.cur.NewFMul(d, d)
		})
		inv := k.cur.NewFDiv(f32(1), k.cur.NewCall(sqrt, k.cur.NewFAdd(k.cur.NewFDiv(sq, nf), f32(float64(float32(eps))))))
		k.loop(ci(0), line, nil, func(i value.Value, _ []value.Value) []value.Value {
			d := k.cur.NewFSub(x.load(at(i)), mean)
			var y value.Value = k.cur.NewFMul(k.cur.NewFMul(d, inv), scale.load(i))
			if layer {
				y = k.cur.NewFAdd(y, k.fbuf(3, in.Args[2].Type.DType).load(i))
			}
			out.store(y, at(i))
			return nil
		})
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// lineMax is the max (min when !isMax, NaN-propagating as fmax) of the n
// contiguous f32 elements at p[base:]: sixteen lanes at a time, the lanes
// folded by halves, then the elements past the last multiple of 16 one by
// one. The vectoriser does not take fmax's selects for a reduction, and
// the scalar loop is a chain of about seven cycles per element: in the
// transformer block's softmax that took longer than the exps.
func (k *kfn) lineMax(p, base value.Value, n int64, isMax bool) value.Value {
	init := math.Inf(-1)
	if !isMax {
		init = math.Inf(1)
	}
	var m value.Value = f32(init)
	if nv := n / 16; nv > 0 {
		v16 := types.NewVector(16, types.Float)
		lanes := make([]constant.Constant, 16)
		for i := range lanes {
			lanes[i] = constant.NewFloat(types.Float, init)
		}
		acc := k.loop(ci(0), ci(nv), []value.Value{constant.NewVector(v16, lanes...)}, func(i value.Value, acc []value.Value) []value.Value {
			ptr := k.cur.NewBitCast(k.at(types.Float, p, k.mulAdd(i, 16, base)), types.NewPointer(v16))
			l := k.cur.NewLoad(v16, ptr)
			l.Align = 4
			return []value.Value{k.fmax(acc[0], l, isMax)}
		})[0]
		for w := int64(8); w >= 1; w /= 2 {
			idx := make([]constant.Constant, 16)
			for j := range idx { // lanes [w, 2w) onto [0, w)
				idx[j] = constant.NewInt(types.I32, int64(j))
				if int64(j) < w {
					idx[j] = constant.NewInt(types.I32, int64(j)+w)
				}
			}
			hi := k.cur.NewShuffleVector(acc, constant.NewUndef(v16), constant.NewVector(types.NewVector(16, types.I32), idx...))
			acc = k.fmax(acc, hi, isMax)
		}
		m = k.cur.NewExtractElement(acc, constant.NewInt(types.I32, 0))
	}
	return k.loop(ci(n/16*16), ci(n), []value.Value{m}, func(i value.Value, acc []value.Value) []value.Value {
		return []value.Value{k.fmax(acc[0], k.load(types.Float, p, k.cur.NewAdd(base, i)), isMax)}
	})[0]
}

// argReduce generates argmax and argmin along one axis: loops over the
// other dimensions, and along the axis carries the best value and its
// index from element 0 on, as the reference executor does: only a strictly
// better element replaces the best, so the first best wins; a NaN is better
// than any number and nothing is better than a NaN. f16 and bf16 compare
// widened to f32, which keeps their order.
func (pl *planner) argReduce(in *ir.Instr, env map[*ir.Value]int) bool {
	x := in.Args[0].Type
	dt := x.DType
	it, _, ok := elemType(dt)
	if !ok || dt == ir.I1 || !x.IsStatic() || in.Results[0].Type.DType != ir.I32 {
		return false
	}
	if n, _ := x.NumElements(); n == 0 {
		return false
	}
	k, st, axis, dims, keptDims := pl.lineKernel(in, env)
	xp := k.buf(1, it)
	load := func(i value.Value) value.Value { return k.load(it, xp, i) }
	if floatish(dt) {
		load = k.fbuf(1, dt).load
	}
	better := k.argBetter(in.Op == ir.OpArgmax, dt)
	out := k.buf(0, types.I32)
	emitNest(k, keptDims, func(kidx []value.Value) {
		idx := make([]value.Value, 0, len(dims))
		idx = append(append(append(idx, kidx[:axis]...), ci(0)), kidx[axis:]...)
		first := load(k.linear(idx, dims))
		r := k.loop(ci(1), ci(dims[axis]), []value.Value{first, ci(0)}, func(i value.Value, acc []value.Value) []value.Value {
			idx[axis] = i
			v := load(k.linear(idx, dims))
			b := better(v, acc[0])
			return []value.Value{k.cur.NewSelect(b, v, acc[0]), k.cur.NewSelect(b, i, acc[1])}
		})
		k.store(k.cur.NewTrunc(r[1], types.I32), out, k.linear(kidx, keptDims))
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// argBetter is argReduce's test: is v strictly better than the best b?
func (k *kfn) argBetter(isMax bool, dt ir.DType) func(v, b value.Value) value.Value {
	if floatish(dt) {
		fp := enum.FPredOLT
		if isMax {
			fp = enum.FPredOGT
		}
		return func(v, b value.Value) value.Value {
			c := k.cur
			vNaN, bNaN := c.NewFCmp(enum.FPredUNO, v, v), c.NewFCmp(enum.FPredUNO, b, b)
			return c.NewAnd(c.NewXor(bNaN, constant.True), c.NewOr(vNaN, c.NewFCmp(fp, v, b)))
		}
	}
	p := enum.IPredSLT
	if isMax {
		p = enum.IPredSGT
	}
	if !dt.IsSigned() {
		p = upred[p]
	}
	return func(v, b value.Value) value.Value { return k.cur.NewICmp(p, v, b) }
}

// lineKernel starts the kernel of an op that walks its operand along the
// axis attribute (argmax, argmin, cumsum): one row of work per position of
// the other axes, keptDims, which the kernel loops over.
func (pl *planner) lineKernel(in *ir.Instr, env map[*ir.Value]int) (k *kfn, st step, axis int, dims, keptDims []int64) {
	x := in.Args[0].Type
	axis = int(in.Attr.(*ir.AxisAttr).Axis)
	dims = x.Dims()
	for d, s := range dims {
		if d != axis {
			keptDims = append(keptDims, s)
		}
	}
	k, st = pl.newKernelStep(in, env)
	st.work, _ = x.NumElements()
	st.fine = true
	st.rows, _ = nestRows(keptDims)
	return k, st, axis, dims, keptDims
}

// cumsum generates the inclusive prefix sum along one axis: loops over the
// other dimensions, and along the axis a running sum stored at every
// element. As in the reference executor, floats accumulate in f64 and each
// output is rounded through f32 to its dtype, so results agree bit for bit;
// integers accumulate in their own width, which wraps as the reference's
// int64 sum wraps when stored.
func (pl *planner) cumsum(in *ir.Instr, env map[*ir.Value]int) bool {
	x := in.Args[0].Type
	dt := x.DType
	it, _, ok := elemType(dt)
	if !ok || dt == ir.I1 || !x.IsStatic() {
		return false
	}
	if n, _ := x.NumElements(); n == 0 {
		return false
	}
	k, st, axis, dims, keptDims := pl.lineKernel(in, env)
	var init value.Value
	var step func(acc, i value.Value) value.Value
	if floatish(dt) {
		xb, out := k.fbuf(1, dt), k.fbuf(0, dt)
		init = constant.NewFloat(types.Double, 0)
		step = func(acc, i value.Value) value.Value {
			s := k.cur.NewFAdd(acc, k.cur.NewFPExt(xb.load(i), types.Double))
			out.store(k.cur.NewFPTrunc(s, types.Float), i)
			return s
		}
	} else {
		xp, out := k.buf(1, it), k.buf(0, it)
		init = constant.NewInt(it.(*types.IntType), 0)
		step = func(acc, i value.Value) value.Value {
			s := k.cur.NewAdd(acc, k.load(it, xp, i))
			k.store(s, out, i)
			return s
		}
	}
	emitNest(k, keptDims, func(kidx []value.Value) {
		idx := make([]value.Value, 0, len(dims))
		idx = append(append(append(idx, kidx[:axis]...), ci(0)), kidx[axis:]...)
		k.loop(ci(0), ci(dims[axis]), []value.Value{init}, func(i value.Value, acc []value.Value) []value.Value {
			idx[axis] = i
			return []value.Value{step(acc[0], k.linear(idx, dims))}
		})
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}
