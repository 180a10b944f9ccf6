package passes

import "github.com/tpucc/tpucc/ir"

// licm hoists loop-invariant work out of while loops. A value is invariant
// in a loop's regions when it is a carried value the body returns
// unchanged (a stacked weight, a bound, a mask carried in) or an
// instruction's result whose operands are all invariant. An invariant
// instruction that costs something is computed once before the loop, and
// its value is carried in as a new loop value (the body returns it
// unchanged); its original, now unused, is left for dce.
//
// What is not hoisted, and why:
//   - constants, iota, broadcast, reshape and scalar arithmetic cost nothing
//     in a loop (an expression or a view on every backend), and carrying one
//     would hide a constant from folding and trip counts, or hold a large
//     broadcast in memory over the whole loop: they are copied out when
//     hoisted work needs them, never carried;
//   - a result larger than its operands together (an outer product, a pad):
//     carried, it would hold more memory over the loop than the values it is
//     made of;
//   - ops with side effects, with regions (nested loops, fusions) and copy
//     (a layout decision);
//   - anything in a case branch: a branch is not always run, and what it
//     computes for free gains nothing outside.
//
// Loops are handled innermost first, so work invariant in two nested loops
// leaves both.
func licm(f *ir.Func, c *Context) (bool, error) {
	changed := false
	var loops []*ir.Instr
	for _, in := range f.Body.Instrs {
		if !ir.IsControl(in.Op) {
			continue
		}
		for _, r := range in.Regions {
			ch, _ := licm(f.RegionFunc(r), c)
			changed = changed || ch
		}
		if in.Op == ir.OpWhile && len(in.Regions) == 2 {
			loops = append(loops, in)
		}
	}
	for _, w := range loops {
		if hoistInvariant(f, w, c) {
			changed = true
		}
	}
	return changed, nil
}

// hoisting is the state of hoisting out of one while w of f.
type hoisting struct {
	f     *ir.Func
	w     *ir.Instr
	inv   map[*ir.Value]bool      // invariant values of the regions
	outer map[*ir.Value]*ir.Value // a region value's equal before the loop
}

// hoistInvariant hoists what is invariant in w's cond and body and reports
// whether it hoisted anything.
func hoistInvariant(f *ir.Func, w *ir.Instr, c *Context) bool {
	h := &hoisting{f: f, w: w, inv: map[*ir.Value]bool{}, outer: map[*ir.Value]*ir.Value{}}
	body := w.Regions[ir.WhileBody]
	ret := body.Terminator()
	if ret == nil || len(ret.Args) != len(w.Args) {
		return false
	}
	for i, p := range body.Params {
		if ret.Args[i] == p {
			for _, r := range w.Regions {
				h.inv[r.Params[i]] = true
				h.outer[r.Params[i]] = w.Args[i]
			}
		}
	}
	hoisted := false
	for ri, r := range w.Regions {
		for _, x := range h.invariantWork(r) {
			h.carry(ri, x)
			c.Count("hoisted")
			hoisted = true
		}
	}
	return hoisted
}

// invariantWork marks r's invariant values and returns the instructions
// worth hoisting, in order.
func (h *hoisting) invariantWork(r *ir.Block) []*ir.Instr {
	var out []*ir.Instr
	for _, x := range r.Instrs {
		if !movable(x) {
			continue
		}
		all := true
		for _, a := range x.Args {
			all = all && h.inv[a]
		}
		if !all {
			continue
		}
		free := freeInLoop(x)
		if !free && !fitsOperands(x) {
			continue // not hoisted, so not invariant for its users either
		}
		for _, v := range x.Results {
			h.inv[v] = true
		}
		if !free {
			out = append(out, x)
		}
	}
	return out
}

// carry computes x (invariant, in region ri of w) before the loop and
// makes each of its results a new carried value in place of the original.
func (h *hoisting) carry(ri int, x *ir.Instr) {
	h.outside(x)
	w := h.w
	ret := w.Regions[ir.WhileBody].Terminator()
	for _, v := range x.Results {
		var here *ir.Value
		for rj, r := range w.Regions {
			p := h.f.NewValue(v.Type)
			p.Index, p.Pos = len(r.Params), x.Pos
			r.Params = append(r.Params, p)
			if rj == ri {
				here = p
			}
			if rj == ir.WhileBody {
				ret.Args = append(ret.Args, p)
			}
		}
		h.f.RegionFunc(w.Regions[ri]).ReplaceUses(v, here)
		h.inv[here], h.outer[here] = true, h.outer[v] // later hoisted work may read it
		res := h.f.NewValue(v.Type)
		res.Def, res.Index, res.Pos = w, len(w.Results), x.Pos
		w.Results = append(w.Results, res)
		w.Args = append(w.Args, h.outer[v])
	}
}

// outside returns x's copy before the loop, making it (and copies of the
// free instructions it reads) the first time it is asked for.
func (h *hoisting) outside(x *ir.Instr) *ir.Instr {
	if len(x.Results) > 0 {
		if o := h.outer[x.Results[0]]; o != nil {
			return o.Def
		}
	}
	args := make([]*ir.Value, len(x.Args))
	for i, a := range x.Args {
		if o := h.outer[a]; o != nil {
			args[i] = o
			continue
		}
		args[i] = h.outside(a.Def).Results[a.Index]
	}
	types := make([]ir.Type, len(x.Results))
	for i, v := range x.Results {
		types[i] = v.Type
	}
	o := h.f.NewInstr(x.Op, x.Attr, args, types, x.Pos)
	at := 0
	for i, in := range h.f.Body.Instrs {
		if in == h.w {
			at = i
		}
	}
	h.f.Body.InsertBefore(at, o)
	for i, v := range x.Results {
		h.outer[v] = o.Results[i]
	}
	return o
}

// movable reports whether x may be computed elsewhere than where it is.
func movable(x *ir.Instr) bool {
	switch {
	case x.Op == ir.OpReturn, x.Op == ir.OpCopy, x.Op == ir.OpShardingConstraint:
		return false
	case len(x.Regions) > 0, hasSideEffects(x):
		return false
	}
	return true
}

// freeInLoop reports whether x costs nothing to leave in a loop: a
// constant, an iota, a broadcast or reshape (views), or arithmetic on
// scalars.
func freeInLoop(x *ir.Instr) bool {
	switch x.Op {
	case ir.OpConstant, ir.OpIota, ir.OpBroadcast, ir.OpReshape:
		return true
	}
	for _, v := range append(append([]*ir.Value{}, x.Args...), x.Results...) {
		if v.Type.Rank() != 0 {
			return false
		}
	}
	return true
}

// fitsOperands reports whether x's results, of static shape, hold no more
// elements than its operands together.
func fitsOperands(x *ir.Instr) bool {
	var in, out int64
	for _, a := range x.Args {
		n, ok := a.Type.NumElements()
		if !ok || !a.Type.IsStatic() {
			return false
		}
		in += n
	}
	for _, v := range x.Results {
		n, ok := v.Type.NumElements()
		if !ok || !v.Type.IsStatic() {
			return false
		}
		out += n
	}
	return out <= in
}
