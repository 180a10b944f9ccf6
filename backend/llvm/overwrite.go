package llvm

import (
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// Loop outputs written over donated arguments. A training step returns
// each parameter's new value and its optimizer state's (AdamW: weight, m,
// v), computed by one loop kernel from the donated old ones. Written to
// fresh storage, each new table costs a read for ownership before its
// write (this host reads a line it is about to overwrite), three
// table-sized reads per parameter that nothing uses, and the step holds
// two generations of every table. When a loop kernel of the entry writes a
// result elementwise from a donated parameter of its type that nothing
// reads after it, the kernel writes the result into the parameter's
// storage instead, as donate.go's dynamic_update_slice does: the slot is
// marked written, and a call that does not donate the argument runs on a
// private copy of it (paramBuffer).
//
// The kernel reads the parameter through the output's own buffer (so the
// noalias scopes of noalias.go still claim nothing false: no other buffer
// of the step is that storage), each element at the index it then writes,
// and it computes all its outputs at an index before it stores any
// (loopKernels): an output stored over one parameter is never read back
// as another output's operand.

// entryUses records what overwrites needs of the entry f: the
// instructions of its body, and each value's users there.
func (pl *planner) entryUses(f *ir.Func) {
	pl.top = map[*ir.Instr]bool{}
	pl.topUsers = map[*ir.Value][]*ir.Instr{}
	pl.returned = map[*ir.Value]bool{}
	for _, in := range f.Body.Instrs {
		pl.top[in] = true
		for _, a := range in.Args {
			pl.topUsers[a] = append(pl.topUsers[a], in)
		}
		if in.Op == ir.OpReturn {
			for _, a := range in.Args {
				pl.returned[a] = true
			}
		}
	}
}

// overwrites returns, for the outputs vs of one loop kernel, the
// parameter each may be written over (nil for none): a donated parameter
// of its type that it reads, whose slot nothing has written or viewed,
// which every output reads only at the index it writes (samePlace), whose
// other users in the entry are all planned already (done) or computed in
// this kernel alone (confined), and not taken by an earlier output. The
// output is returned by the entry; vs are results of the entry's own
// instructions, every other result of which is in memory already.
func (pl *planner) overwrites(vs []*ir.Value, env map[*ir.Value]int, defs map[*ir.Value]*ir.Instr) []*ir.Value {
	out := make([]*ir.Value, len(vs))
	if pl.top == nil || len(vs[0].Type.Dims()) == 0 {
		return out
	}
	for _, w := range vs {
		if w.Def == nil || !pl.top[w.Def] {
			return out
		}
		for _, r := range w.Def.Results {
			if _, done := env[r]; !done && !slices.Contains(vs, r) {
				return out
			}
		}
	}
	taken := map[*ir.Value]bool{}
	for i, w := range vs {
		if !pl.returned[w] {
			continue
		}
		for _, p := range pl.params {
			if !taken[p] && pl.overwritable(p, w, vs, env, defs) {
				out[i], taken[p] = p, true
				break
			}
		}
	}
	return out
}

// overwritable: w may be written over the donated parameter p (overwrites).
func (pl *planner) overwritable(p, w *ir.Value, vs []*ir.Value, env map[*ir.Value]int, defs map[*ir.Value]*ir.Instr) bool {
	s, ok := env[p]
	if !ok || !pl.donated[p] || p.Type.DType != w.Type.DType || !p.Type.SameShape(w.Type) || !p.Type.IsStatic() {
		return false
	}
	if sl := pl.p.slots[s]; sl.kind != slotParam || sl.written || sl.view != nil {
		return false
	}
	if !reaches(w, p, env, defs, map[*ir.Value]bool{}) {
		return false // w is not an update of p: leave p's storage to one that is
	}
	for v, t := range env {
		if t == s && !pl.copyOf(v, p, defs) {
			return false // another value bound to its storage (a carried loop value)
		}
	}
	c := closure(vs, env, defs)
	conf := map[*ir.Value]bool{}
	for _, u := range pl.topUsers[p] {
		switch {
		case slices.ContainsFunc(vs, func(v *ir.Value) bool { return v.Def == u }):
			continue // computes the outputs (overwrites checked its other results)
		case c[u]:
			for _, r := range u.Results {
				if !pl.confined(r, vs, c, conf) {
					return false // also read by a later step
				}
			}
			continue
		}
		if len(u.Results) == 0 {
			return false // returned as well: copied out after every step
		}
		for _, r := range u.Results {
			if !pl.done(r, env, map[*ir.Value]bool{}) {
				return false // read later
			}
		}
	}
	memo := map[*ir.Value]bool{}
	for v, t := range env {
		if t == s {
			memo[v] = true // p, or an opened fusion's copy of it: read at the index
		}
	}
	for _, v := range vs {
		if !samePlace(v, p, env, defs, memo) {
			return false
		}
	}
	return true
}

// copyOf reports whether v is p, or a copy binding an opened fusion's
// parameter to it (inlineFusion), at any depth.
func (pl *planner) copyOf(v, p *ir.Value, defs map[*ir.Value]*ir.Instr) bool {
	for v != p {
		d := defs[v]
		if d == nil || d.Op != ir.OpCopy || !pl.synthetic[d] {
			return false
		}
		v = d.Args[0]
	}
	return true
}

// samePlace reports whether the expression v reads p, if at all, only at
// the index of v's own element: every instruction on a path from v down to
// p is elementwise, its operands of its own shape. memo holds the values
// known to.
func samePlace(v, p *ir.Value, env map[*ir.Value]int, defs map[*ir.Value]*ir.Instr, memo map[*ir.Value]bool) bool {
	if v == p {
		return true
	}
	if ok, seen := memo[v]; seen {
		return ok
	}
	d := defs[v]
	if _, inMem := env[v]; inMem || d == nil {
		return true // read from memory, not computed from p here
	}
	memo[v] = false // a cycle cannot happen in SSA; this is only the default
	preserving := d.Op.Info().Elementwise && !remapOps[d.Op]
	for _, a := range d.Args {
		same := preserving && slices.Equal(a.Type.Dims(), v.Type.Dims())
		if !same && reaches(a, p, env, defs, map[*ir.Value]bool{}) {
			return false
		}
		if same && !samePlace(a, p, env, defs, memo) {
			return false
		}
	}
	memo[v] = true
	return true
}

// reaches reports whether the expression v reads p.
func reaches(v, p *ir.Value, env map[*ir.Value]int, defs map[*ir.Value]*ir.Instr, seen map[*ir.Value]bool) bool {
	if v == p || env[v] == env[p] && hasSlot(env, v) {
		return true
	}
	if seen[v] {
		return false
	}
	seen[v] = true
	d := defs[v]
	if _, inMem := env[v]; inMem || d == nil {
		return false
	}
	for _, a := range d.Args {
		if reaches(a, p, env, defs, seen) {
			return true
		}
	}
	return false
}

func hasSlot(env map[*ir.Value]int, v *ir.Value) bool {
	_, ok := env[v]
	return ok
}

// closure is the instructions a loop kernel computing vs evaluates: the
// definitions reached from vs through values not in memory.
func closure(vs []*ir.Value, env map[*ir.Value]int, defs map[*ir.Value]*ir.Instr) map[*ir.Instr]bool {
	c := map[*ir.Instr]bool{}
	var walk func(v *ir.Value)
	walk = func(v *ir.Value) {
		d := defs[v]
		if _, inMem := env[v]; inMem || d == nil || c[d] {
			return
		}
		c[d] = true
		for _, a := range d.Args {
			walk(a)
		}
	}
	for _, v := range vs {
		walk(v)
	}
	return c
}

// confined reports whether every use of r in the entry is an instruction
// of the kernel (c) whose results are confined too, or r is one of the
// kernel's outputs vs (stored: later readers read it from memory).
func (pl *planner) confined(r *ir.Value, vs []*ir.Value, c map[*ir.Instr]bool, memo map[*ir.Value]bool) bool {
	if slices.Contains(vs, r) {
		return true
	}
	if ok, seen := memo[r]; seen {
		return ok
	}
	memo[r] = false
	for _, u := range pl.topUsers[r] {
		if !c[u] {
			return false
		}
		for _, x := range u.Results {
			if !pl.confined(x, vs, c, memo) {
				return false
			}
		}
	}
	memo[r] = true
	return true
}

// done reports whether every reader of r has been planned: r is in memory
// of its own (not a view, which a later step would read through), or it
// is an expression whose users (a reduction that computed it as it read
// it) are all done.
func (pl *planner) done(r *ir.Value, env map[*ir.Value]int, seen map[*ir.Value]bool) bool {
	if t, ok := env[r]; ok {
		return pl.p.slots[t].kind != slotView
	}
	if seen[r] {
		return true
	}
	seen[r] = true
	for _, u := range pl.topUsers[r] {
		if len(u.Results) == 0 {
			return false // returned, and not in memory yet
		}
		for _, x := range u.Results {
			if !pl.done(x, env, seen) {
				return false
			}
		}
	}
	return true
}
