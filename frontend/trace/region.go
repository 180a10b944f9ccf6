package trace

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// capture keys an outer value brought into a control op's regions: the
// op's instruction ID and the outer value's ID.
type capture struct{ instr, value int }

// Body traces one region of a control op: it is given the region's
// parameters and returns the values the region returns.
type Body func(params []*ir.Value) ([]*ir.Value, error)

// Control records a while or case at pos whose regions are traced by
// bodies, in order (a while's cond, then its do; a case's branches). A
// region is closed, so a value of an enclosing block that a body uses (a Go
// closure capturing an outer traced tensor) is brought in as an extra
// operand: a loop-invariant carried value of a while (its do returns it
// unchanged), an extra operand of a case. The results are the op's results
// for the operands given (a while's extra carried values are not among
// them). A case's result types are its first branch's return types.
//
// While a body runs, every value the tracer records goes into its region:
// a tracer shared between goroutines must not record outside the body
// (from another goroutine) until Control returns.
func (t *Tracer) Control(pos ir.Pos, op ir.Op, args []*ir.Value, bodies ...Body) ([]*ir.Value, error) {
	if !ir.IsControl(op) {
		panic(fmt.Sprintf("trace: Control of %s", op))
	}
	t.mu.Lock()
	args, err := t.checkArgs(pos, op.String(), args)
	if err == nil && op == ir.OpWhile && len(bodies) != 2 {
		err = ir.Errorf(pos, "while needs a cond and a do body, got %d bodies", len(bodies))
	}
	if err == nil && op == ir.OpCase && len(bodies) == 0 {
		err = ir.Errorf(pos, "case needs at least 1 branch")
	}
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	outer := t.b.Block
	in := t.f.NewInstr(op, nil, append([]*ir.Value{}, args...), nil, pos)
	in.Block = outer // not appended yet: bring threads captures through it
	t.mu.Unlock()

	done := false
	defer func() {
		// A body that failed (or panicked) leaves the trace in outer.
		if !done {
			t.mu.Lock()
			t.b.SetAppend(outer)
			t.mu.Unlock()
		}
	}()
	var rets []ir.Type
	for i, body := range bodies {
		r, err := t.region(pos, in, len(args), body)
		if err != nil {
			return nil, err
		}
		if op == ir.OpCase && i == 0 {
			rets = r
		}
	}
	done = true
	return t.finishControl(in, outer, len(args), rets), nil
}

// finishControl gives in its results and appends it to outer, where the
// trace continues; it returns the first n results of a while (the carried
// values the caller gave), all of a case's.
func (t *Tracer) finishControl(in *ir.Instr, outer *ir.Block, n int, rets []ir.Type) []*ir.Value {
	t.mu.Lock()
	defer t.mu.Unlock()
	if in.Op == ir.OpWhile {
		for _, a := range in.Args {
			rets = append(rets, a.Type)
		}
	}
	for i, ty := range rets {
		v := t.f.NewValue(ty)
		v.Def, v.Index, v.Pos = in, i, in.Pos
		in.Results = append(in.Results, v)
		t.own(v, outer)
	}
	t.b.SetAppend(outer)
	outer.Append(in)
	if in.Op == ir.OpWhile {
		return in.Results[:n]
	}
	return in.Results
}

// region traces one region of in with body and returns the types it
// returns. A while's do region returns, after body's values (n of them, the
// carried values the caller gave), the carried values that captures added,
// unchanged.
func (t *Tracer) region(pos ir.Pos, in *ir.Instr, n int, body Body) ([]ir.Type, error) {
	t.mu.Lock()
	first := 0
	if in.Op == ir.OpCase {
		first = 1
	}
	var types []ir.Type
	for _, a := range in.Args[first:] {
		types = append(types, a.Type)
	}
	blk := t.f.NewRegion(in, types)
	for _, p := range blk.Params {
		t.own(p, blk)
	}
	t.b.SetAppend(blk)
	params := append([]*ir.Value{}, blk.Params...)
	t.mu.Unlock()

	res, err := body(params)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	res, err = t.checkArgs(pos, "return", res)
	if err != nil {
		return nil, err
	}
	if in.Op == ir.OpWhile && len(in.Regions) == 2 && len(res) == n {
		res = append(res, blk.Params[n:]...)
	}
	t.b.Pos = pos
	t.b.Return(res...)
	out := make([]ir.Type, len(res))
	for i, r := range res {
		out[i] = r.Type
	}
	return out, nil
}

// bring returns v as a value usable in blk: v itself if blk defines it,
// else the parameter of blk that carries it in, adding it as an operand of
// every control op between v's block and blk (and a parameter of each of
// their regions). nil means v is not visible from blk: it was defined in a
// region that has ended. Callers hold t.mu.
func (t *Tracer) bring(v *ir.Value, blk *ir.Block) *ir.Value {
	if t.home[v.ID] == blk {
		return v
	}
	in := blk.Parent
	if in == nil || in.Block == nil || len(in.Results) > 0 {
		return nil
	}
	outer := t.bring(v, in.Block)
	if outer == nil {
		return nil
	}
	first := 0
	if in.Op == ir.OpCase {
		first = 1
	}
	if t.captured == nil {
		t.captured = map[capture]int{}
	}
	key := capture{in.ID, outer.ID}
	i, ok := t.captured[key]
	if !ok {
		i = len(in.Args)
		in.Args = append(in.Args, outer)
		t.captured[key] = i
		for _, r := range in.Regions {
			p := t.f.NewValue(outer.Type)
			p.Index, p.Pos = len(r.Params), in.Pos
			r.Params = append(r.Params, p)
			t.own(p, r)
		}
	}
	return blk.Params[i-first]
}

// Probe traces body on parameters of the given types into a region that is
// then dropped, and returns the types body returns: how a caller learns
// what a Go function of tensors returns before recording it for real (Scan
// sizes its stacked outputs this way). Outer values body uses are brought
// in as for Control; a control op around the probe may keep such an
// operand, unused.
func (t *Tracer) Probe(pos ir.Pos, types []ir.Type, body Body) ([]ir.Type, error) {
	t.mu.Lock()
	if t.finished {
		t.mu.Unlock()
		return nil, ir.Errorf(pos, "a region traced after the trace of @%s finished: a traced tensor escaped the traced function", t.f.Name)
	}
	outer := t.b.Block
	// A case never appended: its index slot stays empty, its operands are the
	// region's parameters, so bring finds captured values' parameters.
	in := t.f.NewInstr(ir.OpCase, nil, nil, nil, pos)
	in.Block = outer
	blk := t.f.NewRegion(in, types)
	in.Args = append([]*ir.Value{nil}, blk.Params...)
	for _, p := range blk.Params {
		t.own(p, blk)
	}
	t.b.SetAppend(blk)
	params := append([]*ir.Value{}, blk.Params...)
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.b.SetAppend(outer)
		t.mu.Unlock()
	}()
	res, err := body(params)
	if err != nil {
		return nil, err
	}
	out := make([]ir.Type, len(res))
	for i, r := range res {
		out[i] = r.Type
	}
	return out, nil
}
