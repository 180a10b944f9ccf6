package autodiff

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// refusedWhile is why a while whose trip count depends on the data has no VJP: the
// reverse loop must know how many saved carries to walk back over, as JAX's
// reverse-mode refuses while_loop and differentiates fori_loop and scan.
const refusedWhile = "reverse-mode through a while needs a static trip count, as JAX's: write it as a counted loop"

// control is what the backward pass needs of a while or case of the tape: the source
// instruction (its regions are re-cloned into the backward regions, so that calls in
// them are inlined and inner loops save their carries there too) and, for a while
// cloned to save its carries, which ones it saves.
type control struct {
	src     *ir.Func  // the function or region view holding in
	in      *ir.Instr // the source while or case
	carried int       // while: the source's carried values
	trip    int64     // while: its trip count, when static
	static  bool
	// carry[j] says how the reverse loop gets the value carried value j has at the
	// start of an iteration; nil for a while that does not save its carries.
	carry []carryKind
	res   []residual // the body's residuals the saving loop stacks (Options.Remat: none)
}

type carryKind int

const (
	// carryInvariant: the body returns it unchanged; the reverse loop carries the
	// while's operand.
	carryInvariant carryKind = iota
	// carrySaved: it changes and the body's VJP reads it: the saving loop stacks its
	// value at the start of each iteration into an [N, ...] buffer.
	carrySaved
	// carryUnread: it changes but the body's VJP does not read it (a scan's stacked
	// outputs, a counter only counted): not saved; the reverse body's recomputation
	// of the forward, dead there, reads zeros.
	carryUnread
)

// cloneControl copies a while or case into the tape. Where the tape's backward will
// run (saving) and a counted loop carries a float value, the copy also saves each
// iteration's carried values for the reverse loop.
func (t *tape) cloneControl(f *ir.Func, in *ir.Instr, args []*ir.Value, depth int) (*ir.Instr, error) {
	ctl := &control{src: f, in: in, carried: len(in.Args)}
	if in.Op == ir.OpWhile {
		ctl.trip, ctl.static = ir.TripCount(in)
		if t.saving && ctl.static && ctl.trip > 0 && carriesFloat(in) {
			c, err := t.cloneSaving(ctl, args, depth)
			if err == nil {
				t.ctl[c] = ctl
			}
			return c, err
		}
	}
	c := t.b.F.NewInstr(in.Op, in.Attr, args, plainTypes(in.Results), in.Pos)
	for _, r := range in.Regions {
		sub := t.region(c, r.Params, nil, false)
		res, err := sub.clone(f.RegionFunc(r), sub.bind(r.Params), depth)
		if err != nil {
			return nil, err
		}
		sub.ret(r, res)
	}
	t.ctl[c] = ctl
	return c, nil
}

func carriesFloat(in *ir.Instr) bool {
	for _, a := range in.Args {
		if a.Type.DType.IsFloat() {
			return true
		}
	}
	return false
}

func plainTypes(vs []*ir.Value) []ir.Type {
	ts := make([]ir.Type, len(vs))
	for i, v := range vs {
		ts[i] = plain(v.Type)
	}
	return ts
}

// region adds a region to c whose parameters are named and typed as params, then
// typed as extra, and returns a tape appending to it; saving when its backward will
// run (a forward copy of a region is re-cloned where it is differentiated).
func (t *tape) region(c *ir.Instr, params []*ir.Value, extra []ir.Type, saving bool) *tape {
	blk := t.b.F.NewRegion(c, append(plainTypes(params), extra...))
	for i, p := range params {
		blk.Params[i].Name = p.Name
	}
	b := ir.NewBuilder(t.b.F)
	b.SetAppend(blk)
	b.Pos = c.Pos
	return &tape{b: b, cts: map[*ir.Value]*ir.Value{}, ctl: map[*ir.Instr]*control{}, saving: saving, opts: t.opts}
}

// name names the region's parameters from the n-th on.
func (t *tape) name(n int, names []string) {
	for i, nm := range names {
		t.b.Block.Params[n+i].Name = nm
	}
}

// bind maps src, a source region's parameters, to the first parameters of the tape's
// region.
func (t *tape) bind(src []*ir.Value) map[*ir.Value]*ir.Value {
	vals := map[*ir.Value]*ir.Value{}
	for i, p := range src {
		vals[p] = t.b.Block.Params[i]
	}
	return vals
}

// ret ends the tape's region with vals, at the position of src's return.
func (t *tape) ret(src *ir.Block, vals []*ir.Value) {
	if r := src.Terminator(); r != nil {
		t.b.Pos = r.Pos
	}
	t.b.Return(vals...)
}

// controlVJP returns the cotangents of a while's or case's operands.
func (t *tape) controlVJP(in *ir.Instr, ctl *control, g []*ir.Value) ([]*ir.Value, error) {
	if in.Op == ir.OpCase {
		return t.caseVJP(in, ctl, g)
	}
	switch {
	case ctl.carry != nil:
		return t.whileVJP(in, ctl, g)
	case ctl.static && ctl.trip == 0:
		return g, nil // the results are the operands
	}
	return nil, ir.Errorf(in.Pos, "cannot differentiate while: %s", refusedWhile)
}

// orZero is each float value's cotangent in g, zeros where it has none.
func (t *tape) orZero(vs []*ir.Value, g []*ir.Value) (idx []int, cts []*ir.Value) {
	for i, v := range vs {
		if !v.Type.DType.IsFloat() {
			continue
		}
		ct := g[i]
		if ct == nil {
			ct = t.b.Const(plain(v.Type), 0)
		}
		idx = append(idx, i)
		cts = append(cts, ct)
	}
	return idx, cts
}

// caseVJP is a case over the same index whose branch j is branch j's VJP: it takes the
// operands and the results' cotangents and returns the float operands' cotangents
// (zeros from a branch that does not use one).
func (t *tape) caseVJP(in *ir.Instr, ctl *control, g []*ir.Value) ([]*ir.Value, error) {
	ops := in.Args[1:]
	resIdx, cts := t.orZero(in.Results, g)
	var opIdx []int
	var types []ir.Type
	for i, o := range ops {
		if o.Type.DType.IsFloat() {
			opIdx = append(opIdx, i)
			types = append(types, o.Type)
		}
	}
	if len(opIdx) == 0 {
		return nil, nil
	}
	t.b.Pos = in.Pos
	c := t.b.F.NewInstr(ir.OpCase, in.Attr, append(append([]*ir.Value{in.Args[0]}, ops...), cts...), types, in.Pos)
	for _, r := range ctl.in.Regions {
		sub := t.region(c, r.Params, valueTypes(cts), true)
		for q, i := range resIdx {
			sub.name(len(ops)+q, []string{fmt.Sprintf("ct%d", i)})
		}
		ps := sub.b.Block.Params
		res, err := sub.clone(ctl.src.RegionFunc(r), sub.bind(r.Params), 0)
		if err != nil {
			return nil, err
		}
		for q, i := range resIdx {
			sub.accumulate(res[i], ps[len(ops)+q])
		}
		if err := sub.backward(); err != nil {
			return nil, err
		}
		var rets []*ir.Value
		for _, i := range opIdx {
			rets = append(rets, sub.ctOrZero(ps[i]))
		}
		sub.ret(r, rets)
	}
	t.b.Block.Append(c)
	out := make([]*ir.Value, len(in.Args))
	for q, i := range opIdx {
		out[1+i] = c.Results[q]
	}
	return out, nil
}

func valueTypes(vs []*ir.Value) []ir.Type {
	ts := make([]ir.Type, len(vs))
	for i, v := range vs {
		ts[i] = v.Type
	}
	return ts
}
