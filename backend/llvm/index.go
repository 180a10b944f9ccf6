package llvm

import (
	"math"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// take (the embedding lookup of every decode step and the token gather of
// MoE routing) as a generated kernel: out[o, j, i] = x[o, clamp(idx[j]), i]
// with the index clamped into [0, n-1] as the reference kernel does
// (docs/ops.md). Elements are copied as integers of their size, so every
// dtype (floats, NaN payloads included) moves bit for bit. The kernel's
// range is the outer rows times the indices, each call copying whole
// inner rows.
func (pl *planner) take(in *ir.Instr, env map[*ir.Value]int) bool {
	x, idx, res := in.Args[0].Type, in.Args[1].Type, in.Results[0].Type
	if !x.IsStatic() || !idx.IsStatic() || !res.IsStatic() {
		return false
	}
	ext, ok := indexLoad(idx.DType)
	elem, ok2 := copyType(x.DType)
	if !ok || !ok2 || res.DType != x.DType {
		return false
	}
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	dims := x.Dims()
	outer, n, inner := int64(1), dims[axis], int64(1)
	for _, d := range dims[:axis] {
		outer *= d
	}
	for _, d := range dims[axis+1:] {
		inner *= d
	}
	nj := int64(1)
	for _, d := range idx.Dims() {
		nj *= d
	}
	if n == 0 || outer*nj*inner == 0 {
		return false // the reference kernel reports the empty axis
	}
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work = outer*nj, outer*nj*inner
	out, src, ip := k.buf(0, elem), k.buf(1, elem), k.buf(2, ext.mem)
	k.loop(k.lo, k.hi, nil, func(r value.Value, _ []value.Value) []value.Value {
		o := k.cur.NewSDiv(r, ci(nj))
		j := k.cur.NewSRem(r, ci(nj))
		row := k.smin(k.smax(ext.load(k, ip, j), ci(0)), ci(n-1))
		s := k.mulAdd(k.mulAdd(o, n, row), inner, ci(0))
		d := k.mulAdd(r, inner, ci(0))
		k.loopN(inner, func(i value.Value) {
			k.store(k.load(elem, src, k.cur.NewAdd(s, i)), out, k.cur.NewAdd(d, i))
		})
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// indexReader loads an index operand's element as i64.
type indexReader struct {
	mem    types.Type
	signed bool
}

func (r indexReader) load(k *kfn, p, i value.Value) value.Value {
	v := k.load(r.mem, p, i)
	if r.mem == types.I64 {
		return v
	}
	if r.signed {
		return k.cur.NewSExt(v, i64)
	}
	return k.cur.NewZExt(v, i64)
}

// indexLoad is how an index of dtype dt is read; the reference reads
// every integer dtype as its int64 value.
func indexLoad(dt ir.DType) (indexReader, bool) {
	switch dt {
	case ir.I32:
		return indexReader{types.I32, true}, true
	case ir.U32:
		return indexReader{types.I32, false}, true
	case ir.I64:
		return indexReader{types.I64, true}, true
	case ir.I16:
		return indexReader{types.I16, true}, true
	case ir.I8:
		return indexReader{types.I8, true}, true
	case ir.U8:
		return indexReader{types.I8, false}, true
	case ir.U16:
		return indexReader{types.I16, false}, true
	}
	return indexReader{}, false
}

// copyType is the integer type that moves one element of dt unchanged.
func copyType(dt ir.DType) (types.Type, bool) {
	switch dt.Size() {
	case 1:
		return types.I8, true
	case 2:
		return types.I16, true
	case 4:
		return types.I32, true
	case 8:
		return types.I64, true
	}
	return nil, false
}

// scatterAdd generates scatter_add along axis. Each outer row (the kernel's
// range, so parts write apart) copies its slab of x into the result bit for
// bit, then adds the update rows in the reference executor's order (index
// j ascending, duplicates accumulating), dropping those whose index is
// outside [0, n). Floats add in f32 and round to their dtype after every
// add: the reference adds in f64 and rounds through f32, which for one
// addition is the same (53 >= 2*24+2 bits). Integers wrap in their width.
//
// With one outer row (axis 0: an embedding's gradient, [V, D] from the
// tokens' rows) the range is the rows along axis instead, each part copying
// its rows and adding the updates whose index falls among them, so the copy
// of a 622 MB table is split over the threads; and x a splat of +0 that is
// in no memory (zeroScatter) is not read: the result's rows are zeroed.
// An x that nothing else reads (scatterInto) is not copied at all: the
// updates are added into its own storage, which becomes the result's.
func (pl *planner) scatterAdd(in *ir.Instr, env map[*ir.Value]int) bool {
	x, idx, upd := in.Args[0].Type, in.Args[1].Type, in.Args[2].Type
	dt := x.DType
	ext, ok := indexLoad(idx.DType)
	it, _, ok2 := elemType(dt)
	elem, _ := copyType(dt)
	if !ok || !ok2 || dt == ir.I1 || !x.IsStatic() || !idx.IsStatic() || !upd.IsStatic() {
		return false
	}
	outer, n, inner := lines(x.Dims(), int(in.Attr.(*ir.AxisAttr).Axis))
	nj, _ := idx.NumElements()
	if outer*n*inner == 0 {
		return false
	}
	_, inMemory := env[in.Args[0]]
	zero := !inMemory && zeroScatter(in, 0, pl.defs)
	into, inPlace := pl.scatterInto(in, env)
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work = outer, outer*(n+nj)*inner
	if inPlace = inPlace && st.bufs[0] == len(pl.p.slots)-1; inPlace {
		// The result is x's slot; the one newKernelStep made for it
		// would be a temporary no step writes.
		pl.p.slots = pl.p.slots[:st.bufs[0]]
		st.bufs[0], st.work = into, outer*nj*inner
	}
	if zero || inPlace {
		st.bufs[1] = st.bufs[2] // the kernel never reads buffer 1
	}
	out, ip := k.buf(0, elem), k.buf(2, ext.mem)
	fill := func(p value.Value) {
		switch {
		case zero:
			k.store(constant.NewInt(elem.(*types.IntType), 0), out, p)
		case !inPlace:
			k.store(k.load(elem, k.buf(1, elem), p), out, p)
		}
	}
	add := k.scatterAdder(dt, it)
	// addRows adds the updates of outer row o whose index is in [lo, hi).
	addRows := func(o, lo, hi value.Value) {
		k.loopN(nj, func(j value.Value) {
			r := ext.load(k, ip, j)
			kept := k.cur.NewAnd(k.cur.NewICmp(enum.IPredSGE, r, lo), k.cur.NewICmp(enum.IPredSLT, r, hi))
			k.ifElse(kept, func() {
				d := k.mulAdd(k.cur.NewAdd(k.mulAdd(o, n, ci(0)), r), inner, ci(0))
				s := k.mulAdd(k.mulAdd(o, nj, j), inner, ci(0))
				k.loopN(inner, func(q value.Value) { add(k.cur.NewAdd(d, q), k.cur.NewAdd(s, q)) })
			}, nil)
		})
	}
	if outer == 1 && n > 1 {
		st.rows = n
		if !inPlace {
			k.loop(k.mulAdd(k.lo, inner, ci(0)), k.mulAdd(k.hi, inner, ci(0)), nil, func(p value.Value, _ []value.Value) []value.Value {
				fill(p)
				return nil
			})
		}
		addRows(ci(0), k.lo, k.hi)
	} else {
		k.loop(k.lo, k.hi, nil, func(o value.Value, _ []value.Value) []value.Value {
			base := k.mulAdd(o, n*inner, ci(0))
			if !inPlace {
				k.loopN(n*inner, func(i value.Value) { fill(k.cur.NewAdd(base, i)) })
			}
			addRows(o, ci(0), ci(n))
			return nil
		})
	}
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// scatterInto returns the slot of x, the operand of scatter_add in, when
// the updates may be added into x's own storage instead of a copy of it
// (the training step's tied embedding: the lm-head product's gradient,
// then the tokens' rows added into it; train.Step writes it so): x is a
// temporary computed in in's block, in is its only reader there or in
// any region below, and no other value is bound to its slot. Copying
// would read and write the whole table (622 MB for Qwen3's) to change
// a thousand rows.
func (pl *planner) scatterInto(in *ir.Instr, env map[*ir.Value]int) (int, bool) {
	x := in.Args[0]
	s, ok := env[x]
	if !ok || x.Def == nil || x.Def.Block != in.Block || in.Block == nil || pl.p.slots[s].kind != slotTemp {
		return 0, false
	}
	for v, t := range env {
		if t == s && v != x {
			return 0, false
		}
	}
	if usesIn(in.Block, x) != 1 || in.Args[1] == x || in.Args[2] == x {
		return 0, false
	}
	return s, true
}

// usesIn counts the operands that are v among b's instructions and
// those of their regions.
func usesIn(b *ir.Block, v *ir.Value) int {
	n := 0
	for _, in := range b.Instrs {
		for _, a := range in.Args {
			if a == v {
				n++
			}
		}
		for _, r := range in.Regions {
			n += usesIn(r, v)
		}
	}
	return n
}

// zeroScatter reports whether operand i of in is the x of a scatter_add
// that is a splat of +0 computed as an expression of the group (defs): the
// kernel zeroes its result instead of reading it, so it is never stored.
// (-0.0 is left to the copy: an element no update reaches keeps its bits.)
func zeroScatter(in *ir.Instr, i int, defs map[*ir.Value]*ir.Instr) bool {
	if in.Op != ir.OpScatterAdd || i != 0 {
		return false
	}
	d := defs[in.Args[0]]
	if d == nil || d.Op != ir.OpConstant {
		return false
	}
	l := d.Attr.(*ir.ConstAttr).Value
	return l != nil && l.Len() == 1 && l.Complex == nil && l.Float(0) == 0 && !math.Signbit(l.Float(0)) && l.Int(0) == 0
}

// scatterAdder returns the step out[d] += upd[s] of scatterAdd (buffer 0
// the result, buffer 3 the updates).
func (k *kfn) scatterAdder(dt ir.DType, it types.Type) func(d, s value.Value) {
	if floatish(dt) {
		out, upd := k.fbuf(0, dt), k.fbuf(3, dt)
		return func(d, s value.Value) { out.store(k.cur.NewFAdd(out.load(d), upd.load(s)), d) }
	}
	out, upd := k.buf(0, it), k.buf(3, it)
	return func(d, s value.Value) { k.store(k.cur.NewAdd(k.load(it, out, d), k.load(it, upd, s)), out, d) }
}

// dynamicUpdateSlice generates dynamic_update_slice out of place (donate.go
// writes into a donated parameter instead): the result is x copied bit for
// bit with upd written over it at the starts, each clamped into
// [0, dim-size] as the reference executor clamps it. One range: the update
// lands anywhere in the copy, so the two cannot be split apart.
func (pl *planner) dynamicUpdateSlice(in *ir.Instr, env map[*ir.Value]int) bool {
	x, upd := in.Args[0].Type, in.Args[1].Type
	elem, ok := copyType(x.DType)
	if !ok || !x.IsStatic() || !upd.IsStatic() {
		return false
	}
	starts := in.Args[2:]
	exts := make([]indexReader, len(starts))
	for d, s := range starts {
		if exts[d], ok = indexLoad(s.Type.DType); !ok {
			return false
		}
	}
	nx, _ := x.NumElements()
	nu, _ := upd.NumElements()
	if nx == 0 {
		return false
	}
	dims, ud := x.Dims(), upd.Dims()
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work = 1, nx+nu
	out, src, up := k.buf(0, elem), k.buf(1, elem), k.buf(2, elem)
	k.loop(k.lo, k.hi, nil, func(value.Value, []value.Value) []value.Value {
		k.loopN(nx, func(i value.Value) { k.store(k.load(elem, src, i), out, i) })
		off := make([]value.Value, len(dims))
		for d := range dims {
			off[d] = ci(0)
			if d < len(starts) {
				s := exts[d].load(k, k.buf(3+d, exts[d].mem), ci(0))
				off[d] = k.smin(k.smax(s, ci(0)), ci(dims[d]-ud[d]))
			}
		}
		k.loopN(nu, func(i value.Value) {
			idx := k.delinear(i, ud)
			for d := range idx {
				idx[d] = k.cur.NewAdd(idx[d], off[d])
			}
			k.store(k.load(elem, up, i), out, k.linear(idx, dims))
		})
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}
