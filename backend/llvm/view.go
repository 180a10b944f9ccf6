package llvm

import (
	"unsafe"

	"github.com/tpucc/tpucc/ir"
)

// Slice views. A loop over stacked weights reads layer i as
// reshape(dynamic_slice(W, i, 0, 0)) and multiplies by it. Materialised,
// that slice is a copy of the layer's weights every iteration: a product
// that streams its weights from memory (a decode step) would then read
// them three times instead of once. A dynamic_slice that keeps every
// dimension after its leading ones whole is one contiguous block of its
// operand, so a kernel can read it where it is: the slice gets a view
// slot, whose address the executor computes from the operand's storage and
// the clamped start indices at each call, allocating nothing.

// sliceView is where a view slot's elements are: in slot src, at the
// leading indices held by the scalar slots starts, each clamped to [0,
// limit] and multiplied by its stride in bytes.
type sliceView struct {
	src     int
	starts  []int
	limits  []int64
	strides []int64
}

// contiguousSlice reports whether ds, a dynamic_slice, takes one index of
// each of its leading dimensions and the whole of the others, and how
// many leading dimensions that is.
func contiguousSlice(ds *ir.Instr) (lead int, ok bool) {
	x, r := ds.Args[0].Type, ds.Results[0].Type
	if ds.Op != ir.OpDynamicSlice || !x.IsStatic() || !r.IsStatic() || x.Rank() != r.Rank() {
		return 0, false
	}
	for lead < r.Rank() && r.Shape[lead].Size == 1 && x.Shape[lead].Size != 1 {
		lead++
	}
	for d := lead; d < r.Rank(); d++ {
		if r.Shape[d].Size != x.Shape[d].Size {
			return 0, false
		}
	}
	return lead, true
}

// viewSlot makes a view slot of type typ (ds's result, or a row-major
// reshape of it) of ds (contiguousSlice) over the slots of its operand and
// start indices in env; ok is false when one of those is not in memory.
func (pl *planner) viewSlot(ds *ir.Instr, lead int, typ ir.Type, env map[*ir.Value]int) (int, bool) {
	src, ok := env[ds.Args[0]]
	if !ok || pl.p.slots[src].view != nil {
		return 0, false
	}
	x := ds.Args[0].Type
	v := &sliceView{src: src}
	stride := int64(x.DType.Size())
	for d := x.Rank() - 1; d >= lead; d-- {
		stride *= x.Shape[d].Size
	}
	for d := lead - 1; d >= 0; d-- {
		s, ok := env[ds.Args[1+d]]
		if !ok || pl.p.slots[s].view != nil {
			return 0, false // the executor reads a start from its own storage
		}
		v.starts = append([]int{s}, v.starts...)
		v.limits = append([]int64{x.Shape[d].Size - 1}, v.limits...)
		v.strides = append([]int64{stride}, v.strides...)
		stride *= x.Shape[d].Size
	}
	return pl.newSlot(slot{typ: typ, kind: slotView, view: v}), true
}

// minViewBytes is the least size crossViews makes a view of: a smaller
// value costs next to nothing to copy (a layer's index read out of an
// array, a norm's scale), and in memory it can serve as another view's
// start index, which the executor reads from storage.
const minViewBytes = 4096

// crossViews picks, among need (the values a group computes that a later
// instruction reads), those that are a contiguous dynamic_slice of a value
// already in memory, or a row-major reshape of one, and returns each with
// its slice; their leading start indices are put in memory (mat). A loop
// over layers slices every stacked weight at the top of its body and
// multiplies by it after a norm (another group): planned in memory, each
// slice was a copy of the layer's weights every iteration, which made a
// looped decode step of Qwen3-0.6B four times slower than the unrolled one.
// A view is only good for a kernel to read; newPlan plans again, in
// memory, a value whose view another kind of step reads.
func (pl *planner) crossViews(need []*ir.Value, defs map[*ir.Value]*ir.Instr, env map[*ir.Value]int, mat map[*ir.Value]bool) map[*ir.Value]*ir.Instr {
	out := map[*ir.Value]*ir.Instr{}
	for _, v := range need {
		d := defs[v]
		if n, ok := v.Type.NumElements(); pl.noView[v] || d == nil || v.Type.Layout != nil || !ok || n*int64(v.Type.DType.Size()) < minViewBytes {
			continue
		}
		if d.Op == ir.OpReshape && d.Args[0].Type.Layout == nil {
			d = defs[d.Args[0]]
		}
		if d == nil || d.Op != ir.OpDynamicSlice || d.Args[0].Type.Layout != nil || d.Results[0].Type.Layout != nil {
			continue
		}
		// viewSlot checks, when it is reached, that the operand is in memory.
		lead, ok := contiguousSlice(d)
		if !ok || lead == 0 {
			continue
		}
		out[v] = d
		for _, st := range d.Args[1 : 1+lead] {
			mat[st] = true // the executor reads the starts
		}
	}
	return out
}

// keepViewsAlive adds to every step that reads a view slot the slots the
// view is made of, so memory planning keeps them until that step (the
// kernel ignores pointers past its own). It returns the view slots that a
// step other than a kernel reads (the plan is then not usable), a result
// among them.
func (p *plan) keepViewsAlive() (bad []int) {
	for _, r := range p.results {
		if p.slots[r].view != nil {
			bad = append(bad, r)
		}
	}
	for i := range p.steps {
		st := &p.steps[i]
		for _, b := range st.bufs {
			if v := p.slots[b].view; v != nil {
				if st.kind != stepKernel {
					bad = append(bad, b)
					continue
				}
				st.bufs = append(st.bufs, v.src)
				st.bufs = append(st.bufs, v.starts...)
			}
		}
	}
	return bad
}

// address is where the view's elements start in s.
func (v *sliceView) address(s *state) unsafe.Pointer {
	off := int64(0)
	for d, b := range v.starts {
		off += min(max(s.bufs[b].Int64At(0), 0), v.limits[d]) * v.strides[d]
	}
	return unsafe.Add(dataPtr(s.bufs[v.src]), off)
}
