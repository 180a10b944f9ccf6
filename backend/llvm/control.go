package llvm

import (
	"encoding/binary"

	"github.com/tpucc/tpucc/ir"
)

// Compiled while and case. A region is planned by the same planner into
// the same step list as the code around it, so its kernels are in the same
// object and its values get slots that memory planning places once, when a
// state is made: an iteration allocates nothing. A while is laid out as
//
//	w:      stepWhile   copies the operands into the carried slots C
//	        cond steps  (cond's parameters are C)
//	t:      stepTest    reads cond's i1[]
//	        body steps  (the body's parameters are C too)
//	b:      stepCarry   copies what the body returns into C
//
// and a case as stepCase (reads the index), each branch's steps followed by
// a stepYield that copies what it returns into the case's result slots,
// then a stepJoin. The marker steps name the slots they read and write, so
// planMemory's walk in step order sees that C lives over the whole loop,
// that a body's results live until the carry, and that a case's operands
// and results live over every branch; a value inside a region lives within
// one iteration (regions are closed), so storage it shares with another
// region value is rewritten before it is read again. The carried slots are
// the while's results: no copy out.

// control is where a while's or case's regions are in the step list.
type control struct {
	// ranges are [first, end) step indices: a while's cond and body, a
	// case's branches in order. The step at a range's end is its marker
	// (stepTest, stepCarry, stepYield).
	ranges [][2]int
	next   int // the step after the construct
}

// control plans a while or a case in (its operands are planned in env).
func (pl *planner) control(in *ir.Instr, env map[*ir.Value]int, depth int) error {
	for _, v := range append(append([]*ir.Value{}, in.Args...), in.Results...) {
		if !v.Type.IsStatic() {
			return pl.heavy(in, env) // the reference executor runs it whole
		}
	}
	pl.p.generated[in.Op]++
	ins := make([]int, len(in.Args))
	for i, a := range in.Args {
		s, ok := env[a]
		if !ok {
			return ir.Errorf(in.Pos, "internal error: operand of %s was not planned", in.Op)
		}
		ins[i] = s
	}
	if in.Op == ir.OpWhile {
		return pl.while(in, env, ins, depth)
	}
	return pl.cases(in, env, ins, depth)
}

func (pl *planner) while(in *ir.Instr, env map[*ir.Value]int, ins []int, depth int) error {
	carried := make([]int, len(in.Results))
	for i, r := range in.Results {
		if pl.invariantParam(in, i, ins[i]) {
			carried[i] = ins[i] // read where it lies: nothing writes it
			continue
		}
		if pl.adoptable(in, i, ins[i]) {
			carried[i] = ins[i] // the loop runs in the operand's own storage
			if pl.p.slots[ins[i]].kind == slotParam {
				pl.p.slots[ins[i]].written = true // donate.go, paramBuffer
			}
			continue
		}
		carried[i] = pl.newSlot(slot{typ: r.Type})
	}
	ctl := &control{}
	w := len(pl.p.steps)
	pl.p.steps = append(pl.p.steps, step{kind: stepWhile, bufs: append(append([]int{}, carried...), ins...), outs: len(carried), what: "while", ctl: ctl})
	cond, err := pl.region(in, ir.WhileCond, carried, depth)
	if err != nil {
		return err
	}
	ctl.ranges = append(ctl.ranges, [2]int{w + 1, len(pl.p.steps)})
	pl.p.steps = append(pl.p.steps, step{kind: stepTest, bufs: cond, what: "while test"})
	first := len(pl.p.steps)
	pl.carriedUpdates(in)
	for _, p := range in.Regions[ir.WhileBody].Params {
		pl.owned[p] = true
	}
	res, err := pl.region(in, ir.WhileBody, carried, depth)
	if err != nil {
		return err
	}
	// A body that returns carried value m as carried value j (a swap)
	// would have it overwritten before it is read: carry it through a copy.
	isCarried := map[int]bool{}
	for _, c := range carried {
		isCarried[c] = true
	}
	for j, r := range res {
		if r != carried[j] && isCarried[r] {
			c := pl.newSlot(slot{typ: pl.p.slots[r].typ})
			pl.p.steps = append(pl.p.steps, step{kind: stepCopy, bufs: []int{c, r}, outs: 1, what: "copy"})
			res[j] = c
		}
	}
	ctl.ranges = append(ctl.ranges, [2]int{first, len(pl.p.steps)})
	pl.p.steps = append(pl.p.steps, step{kind: stepCarry, bufs: append(append([]int{}, carried...), res...), outs: len(carried), what: "while carry"})
	ctl.next = len(pl.p.steps)
	for i, r := range in.Results {
		env[r] = carried[i]
	}
	return nil
}

func (pl *planner) cases(in *ir.Instr, env map[*ir.Value]int, ins []int, depth int) error {
	outs := make([]int, len(in.Results))
	for i, r := range in.Results {
		outs[i] = pl.newSlot(slot{typ: r.Type})
	}
	ctl := &control{}
	pl.p.steps = append(pl.p.steps, step{kind: stepCase, bufs: append(append([]int{}, outs...), ins...), outs: len(outs), what: "case", ctl: ctl})
	for b := range in.Regions {
		first := len(pl.p.steps)
		res, err := pl.region(in, b, ins[1:], depth)
		if err != nil {
			return err
		}
		ctl.ranges = append(ctl.ranges, [2]int{first, len(pl.p.steps)})
		pl.p.steps = append(pl.p.steps, step{kind: stepYield, bufs: append(append([]int{}, outs...), res...), outs: len(outs), what: "case yield"})
	}
	pl.p.steps = append(pl.p.steps, step{kind: stepJoin, bufs: append(append([]int{}, outs...), ins...), what: "case join"})
	ctl.next = len(pl.p.steps)
	for i, r := range in.Results {
		env[r] = outs[i]
	}
	return nil
}

// adoptable reports whether the while in may carry its operand i in the
// operand's own slot, without copying it in: the operand is used once in
// its block, by in, and its storage belongs to it alone: a value an
// instruction of the block computed into a temporary, or a parameter of
// an enclosing loop body (its carried slot, which nothing else reads in
// that iteration). A nested loop that carries its parent's state (a
// stacked KV cache through the layers of a decode step) then copies
// nothing in or out. So may a parameter of the entry that callers may
// donate (a decode step's KV cache): the loop then runs in the argument's
// storage when a call donates it, and in a private copy when it does not
// (the slot is written, donate.go). Not a parameter of a case branch or of
// an inlined call: those are slots of the caller, which may read them
// afterwards.
func (pl *planner) adoptable(in *ir.Instr, i, slotOf int) bool {
	a := in.Args[i]
	if in.Block == nil || (a.Def == nil && !pl.owned[a] && !pl.donated[a]) {
		return false
	}
	if a.Def != nil && (a.Def.Block != in.Block || a.Def.Op == ir.OpCall || a.Def.Op == ir.OpCustomCall || a.Def.Op == ir.OpFusion) {
		return false // a call's or fusion's result may be its operand's slot
	}
	uses := 0
	for _, x := range in.Block.Instrs {
		for _, b := range x.Args {
			if b == a {
				uses++
			}
		}
	}
	s := pl.p.slots[slotOf]
	if pl.donated[a] {
		return uses == 1 && s.kind == slotParam && a.Type.IsStatic()
	}
	return uses == 1 && s.kind == slotTemp && s.view == nil
}

// invariantParam reports whether the while in may carry its operand i in
// the operand's own slot because the loop never changes it: the body
// returns its parameter i as it is, and the operand is an entry parameter
// that no call donates, whose slot nothing in the program writes. A
// decode step's loop over its layers carries every stacked weight so;
// copying them into carried storage cost the step a copy of all its
// weights (2.4 GB for Qwen3-0.6B in f32: 5.5x the unrolled step's time).
func (pl *planner) invariantParam(in *ir.Instr, i, slotOf int) bool {
	body := in.Regions[ir.WhileBody]
	ret := body.Terminator()
	if ret == nil || i >= len(ret.Args) || i >= len(body.Params) || ret.Args[i] != body.Params[i] {
		return false
	}
	a := in.Args[i]
	s := pl.p.slots[slotOf]
	return a.Def == nil && !pl.donated[a] && !pl.owned[a] && s.kind == slotParam && !s.written && s.view == nil
}

// carriedUpdates marks the dynamic_update_slices of a while's body that
// may write into their carried operand: one whose operand is a carried
// value the body uses nowhere else, or only to compute the update itself
// (readBeforeUpdate), and whose result the body returns as that same
// carried value (a scan's stacked outputs, a KV cache, a stacked weight's
// cotangent adding a layer's row in place). The carried slot then never
// needs a copy: the update writes only its rows, where a fresh result
// would copy the whole tensor every iteration.
func (pl *planner) carriedUpdates(in *ir.Instr) {
	body := in.Regions[ir.WhileBody]
	ret := body.Terminator()
	if ret == nil {
		return
	}
	users := map[*ir.Value][]*ir.Instr{}
	for _, x := range body.Instrs {
		for _, a := range x.Args {
			users[a] = append(users[a], x)
		}
	}
	for _, x := range body.Instrs {
		if x.Op != ir.OpDynamicUpdateSlice || len(x.Args) < 2 || !x.Args[1].Type.IsStatic() {
			continue
		}
		p := x.Args[0]
		if p.Def != nil || p.Index >= len(ret.Args) || body.Params[p.Index] != p || !readBeforeUpdate(x, p, users) {
			continue
		}
		if ret.Args[p.Index] == x.Results[0] && p.Type.IsStatic() {
			if pl.inplace == nil {
				pl.inplace = map[*ir.Instr]bool{}
			}
			pl.inplace[x] = true
		}
	}
}

// readBeforeUpdate reports whether every use of p but the update x (which
// writes p) is one that x waits for and whose results only x and what x
// waits for read: the reads of p all run before x writes it, in any order
// of the steps (sunk included), and none of them (a view of p) is read
// after. DUS(p, DS(p, s) + g, s) so adds into p's window in place.
func readBeforeUpdate(x *ir.Instr, p *ir.Value, users map[*ir.Value][]*ir.Instr) bool {
	if len(users[p]) == 1 {
		return true
	}
	cone := map[*ir.Instr]bool{}
	work := []*ir.Instr{x}
	for len(work) > 0 {
		in := work[len(work)-1]
		work = work[:len(work)-1]
		for _, a := range in.Args {
			if d := a.Def; d != nil && d.Block == x.Block && !cone[d] {
				cone[d] = true
				work = append(work, d)
			}
		}
	}
	for _, u := range users[p] {
		if u == x {
			continue
		}
		if !cone[u] {
			return false
		}
		for _, r := range u.Results {
			for _, w := range users[r] {
				if w != x && !cone[w] {
					return false
				}
			}
		}
	}
	return true
}

// region plans region r of in with its parameters bound to the slots
// params and returns the slots of what it returns.
func (pl *planner) region(in *ir.Instr, r int, params []int, depth int) ([]int, error) {
	blk := in.Regions[r]
	f := &ir.Func{Name: in.Op.String(), Params: blk.Params, Body: blk, Pos: in.Pos}
	inner := map[*ir.Value]int{}
	for i, p := range blk.Params {
		inner[p] = params[i]
	}
	return pl.function(f, inner, depth+1)
}

// runControl runs the while or case at step i and returns the step to go
// on from.
func (x *Executable) runControl(s *state, i int) (int, error) {
	st := &x.plan.steps[i]
	ctl := st.ctl
	if st.kind == stepCase {
		k := int(int32(binary.LittleEndian.Uint32(s.bufs[st.bufs[st.outs]].Bytes())))
		if k < 0 || k >= len(ctl.ranges) {
			k = len(ctl.ranges) - 1
		}
		r := ctl.ranges[k]
		if err := x.runRange(s, r[0], r[1]); err != nil {
			return 0, err
		}
		x.copyOut(s, &x.plan.steps[r[1]])
		return ctl.next, nil
	}
	x.copyOut(s, st)
	cond, body := ctl.ranges[0], ctl.ranges[1]
	test := x.plan.steps[cond[1]].bufs[0]
	for {
		if err := x.runRange(s, cond[0], cond[1]); err != nil {
			return 0, err
		}
		if s.bufs[test].Bytes()[0] == 0 {
			return ctl.next, nil
		}
		if err := x.runRange(s, body[0], body[1]); err != nil {
			return 0, err
		}
		x.copyOut(s, &x.plan.steps[body[1]])
	}
}

// copyOut copies a marker step's inputs into its outputs, pair by pair,
// skipping a slot carried unchanged.
func (x *Executable) copyOut(s *state, st *step) {
	for j, o := range st.bufs[:st.outs] {
		if in := st.bufs[st.outs+j]; in != o {
			copy(s.bufs[o].Bytes(), s.bufs[in].Bytes())
		}
	}
}
