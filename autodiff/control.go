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
	// stacked[j]: carried value j changes in the loop, so the saving loop stacks its
	// value at the start of each iteration into an [N, ...] buffer; the others are
	// loop-invariant and read from the while's operands.
	stacked []bool
}

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
	return &tape{b: b, cts: map[*ir.Value]*ir.Value{}, ctl: map[*ir.Instr]*control{}, saving: saving}
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

// cloneSaving copies a counted while so that it also carries one [N, ...] buffer per
// changing carried value, and a counter k from 0: iteration k first writes the
// carried values it starts from into row k, then runs the source's body.
func (t *tape) cloneSaving(ctl *control, args []*ir.Value, depth int) (*ir.Instr, error) {
	in, f := ctl.in, ctl.src
	cond, body := in.Regions[ir.WhileCond], in.Regions[ir.WhileBody]
	bret := body.Terminator()
	t.b.Pos = in.Pos
	ops := append([]*ir.Value{}, args...)
	ctl.stacked = make([]bool, len(args))
	for j, p := range body.Params {
		if bret.Args[j] != p {
			ctl.stacked[j] = true
			ops = append(ops, t.b.Const(stackType(args[j].Type, ctl.trip), 0))
		}
	}
	ops = append(ops, t.b.Const(ir.Scalar(ir.I32), 0))
	types := make([]ir.Type, len(ops))
	for i, o := range ops {
		types[i] = o.Type
	}
	c := t.b.F.NewInstr(ir.OpWhile, in.Attr, ops, types, in.Pos)
	extra := types[len(args):]
	var names []string
	for j, p := range body.Params {
		if ctl.stacked[j] {
			names = append(names, "saved_"+p.Name)
		}
	}
	names = append(names, "k")

	sc := t.region(c, cond.Params, extra, false)
	sc.name(len(args), names)
	res, err := sc.clone(f.RegionFunc(cond), sc.bind(cond.Params), depth)
	if err != nil {
		return nil, err
	}
	sc.ret(cond, res)

	sb := t.region(c, body.Params, extra, false)
	sb.name(len(args), names)
	ps := sb.b.Block.Params
	k := ps[len(ps)-1]
	var saved []*ir.Value
	s := len(args)
	for j, p := range ps[:len(args)] {
		if ctl.stacked[j] {
			saved = append(saved, sb.saveRow(ps[s], p, k))
			s++
		}
	}
	res, err = sb.clone(f.RegionFunc(body), sb.bind(body.Params), depth)
	if err != nil {
		return nil, err
	}
	next := sb.b.Op1(ir.OpAdd, nil, k, sb.b.Const(k.Type, 1))
	sb.ret(body, append(append(res, saved...), next))
	return c, nil
}

func stackType(t ir.Type, n int64) ir.Type {
	return ir.Tensor(t.DType, append([]int64{n}, t.Dims()...)...)
}

// saveRow writes v into row k of stack.
func (t *tape) saveRow(stack, v, k *ir.Value) *ir.Value {
	row := t.b.Typed(ir.OpReshape, nil, ptr(stackType(v.Type, 1)), v)
	return t.b.Op1(ir.OpDynamicUpdateSlice, nil, append([]*ir.Value{stack, row}, t.rowStarts(k, v.Type.Rank())...)...)
}

// loadRow reads row k of stack, of v's type.
func (t *tape) loadRow(stack, k *ir.Value, vt ir.Type) *ir.Value {
	args := append([]*ir.Value{stack}, t.rowStarts(k, vt.Rank())...)
	sizes := stack.Type.Dims()
	sizes[0] = 1
	row := t.b.Op1(ir.OpDynamicSlice, &ir.SizesAttr{Sizes: sizes}, args...)
	return t.b.Typed(ir.OpReshape, nil, &vt, row)
}

// rowStarts are the starts of row k of a stack of rank-r values: k, then r zeros.
func (t *tape) rowStarts(k *ir.Value, r int) []*ir.Value {
	starts := []*ir.Value{k}
	if r > 0 {
		zero := t.b.Const(k.Type, 0)
		for range r {
			starts = append(starts, zero)
		}
	}
	return starts
}

func ptr(t ir.Type) *ir.Type { return &t }

// controlVJP returns the cotangents of a while's or case's operands.
func (t *tape) controlVJP(in *ir.Instr, ctl *control, g []*ir.Value) ([]*ir.Value, error) {
	if in.Op == ir.OpCase {
		return t.caseVJP(in, ctl, g)
	}
	switch {
	case ctl.stacked != nil:
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

// whileVJP is the reverse loop over a saving while's N iterations: iteration k
// rebuilds the carried values iteration N-1-k started from (its saved rows, and the
// loop-invariant operands), runs the source body's VJP on them and carries the
// cotangents of the carried values back, so that a loop-invariant value sums its
// cotangent over all iterations.
func (t *tape) whileVJP(in *ir.Instr, ctl *control, g []*ir.Value) ([]*ir.Value, error) {
	n := ctl.carried
	fIdx, cts := t.orZero(in.Results[:n], g[:n])
	t.b.Pos = in.Pos
	ops := append([]*ir.Value{t.b.Const(ir.Scalar(ir.I32), 0)}, cts...)
	s := n
	for j := range n {
		if ctl.stacked[j] {
			ops = append(ops, in.Results[s])
			s++
		}
	}
	for j := range n {
		if !ctl.stacked[j] {
			ops = append(ops, in.Args[j])
		}
	}
	types := valueTypes(ops)
	rw := t.b.F.NewInstr(ir.OpWhile, nil, ops, types, in.Pos)
	body := ctl.in.Regions[ir.WhileBody]
	names := []string{"k"}
	for _, j := range fIdx {
		names = append(names, "ct_"+body.Params[j].Name)
	}
	for _, stacked := range []bool{true, false} {
		for j, p := range body.Params {
			if ctl.stacked[j] == stacked {
				names = append(names, map[bool]string{true: "saved_"}[stacked]+p.Name)
			}
		}
	}
	trip := float64(ctl.trip)

	sc := t.region(rw, nil, types, false)
	sc.name(0, names)
	k := sc.b.Block.Params[0]
	sc.b.Return(sc.b.Op1(ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLT}, k, sc.b.Const(k.Type, trip)))

	sb := t.region(rw, nil, types, true)
	sb.name(0, names)
	ps := sb.b.Block.Params
	k = ps[0]
	idx := sb.b.Op1(ir.OpSub, nil, sb.b.Const(k.Type, trip-1), k)
	kept := ps[1+len(cts):] // the stacks, then the invariant values
	vals := map[*ir.Value]*ir.Value{}
	x := make([]*ir.Value, n)
	si, ii := 0, s-n
	for j, p := range body.Params {
		if ctl.stacked[j] {
			x[j] = sb.loadRow(kept[si], idx, plain(p.Type))
			x[j].Name = p.Name
			si++
		} else {
			x[j] = kept[ii]
			ii++
		}
		vals[p] = x[j]
	}
	res, err := sb.clone(ctl.src.RegionFunc(body), vals, 0)
	if err != nil {
		return nil, err
	}
	for q, j := range fIdx {
		sb.accumulate(res[j], ps[1+q])
	}
	if err := sb.backward(); err != nil {
		return nil, err
	}
	rets := []*ir.Value{sb.b.Op1(ir.OpAdd, nil, k, sb.b.Const(k.Type, 1))}
	for _, j := range fIdx {
		rets = append(rets, sb.ctOrZero(x[j]))
	}
	sb.ret(body, append(rets, kept...))
	t.b.Block.Append(rw)
	out := make([]*ir.Value, len(in.Args))
	for q, j := range fIdx {
		out[j] = rw.Results[1+q]
	}
	return out, nil
}
