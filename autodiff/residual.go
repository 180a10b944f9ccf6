package autodiff

import "github.com/tpucc/tpucc/ir"

// residual is a value of a loop's body that the body's VJP reads and the forward loop
// saves per iteration (unless Options.Remat): result `result` of the instr-th forward
// instruction of the body as a tape clones it. Every clone of a body appends the same
// forward instructions in the same order (a call inlined, a while or case one
// instruction), so the index names the value in the forward loop's body and in the
// reverse loop's.
type residual struct {
	instr, result int
	typ           ir.Type
	name          string
}

// residuals are the values of the tape's forward instructions (a body cloned by
// bodyVJP) that its backward instructions computing cts, or cts, read, but those
// recomputed: the cheap ones, and the extra results of an inner loop saving its own
// carries (a forward copy of a body does not save them; that loop is run again).
// The backward instructions that cts do not need (the cotangent of a constant) are
// dead: what only they read is not saved.
func (t *tape) residuals(cts []*ir.Value) []residual {
	fwd := t.forwardIndex()
	live := liveFrom(cts, nil)
	cheap := map[*ir.Value]bool{}
	seen := map[*ir.Value]bool{}
	var out []residual
	note := func(v *ir.Value) {
		i, ok := fwd[v.Def]
		if !ok || seen[v] || t.isCheap(v, fwd, cheap) || !t.saveable(v) {
			return
		}
		seen[v] = true
		out = append(out, residual{instr: i, result: v.Index, typ: v.Type, name: v.Name})
	}
	for _, in := range t.b.Block.Instrs {
		if _, ok := fwd[in]; !ok && len(in.Results) > 0 && live[in.Results[0]] {
			for _, a := range in.Args {
				note(a)
			}
		}
	}
	for _, c := range cts {
		note(c)
	}
	return t.dropReshapes(out, fwd, cheap)
}

// dropReshapes leaves out the residuals that reshape another residual (or a cheap
// value): the reverse loop reshapes that one's load, where saving both would hold the
// same numbers twice (an attention's probabilities, saved as softmax returns them and
// as the product reads them).
func (t *tape) dropReshapes(res []residual, fwd map[*ir.Instr]int, cheap map[*ir.Value]bool) []residual {
	saved := map[*ir.Value]bool{}
	for _, r := range res {
		saved[t.instrs[r.instr].Results[r.result]] = true
	}
	out := res[:0]
	for _, r := range res {
		in := t.instrs[r.instr]
		if a := in.Args; in.Op == ir.OpReshape && (saved[a[0]] || t.isCheap(a[0], fwd, cheap)) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// forwardIndex maps each of the tape's forward instructions to its index.
func (t *tape) forwardIndex() map[*ir.Instr]int {
	fwd := make(map[*ir.Instr]int, len(t.instrs))
	for i, in := range t.instrs {
		fwd[in] = i
	}
	return fwd
}

// cheapOps move or widen what they read without arithmetic: a layer's weights sliced
// from their stack, a broadcast mask, an iota. Saving their results would cost as much
// memory as they read (all the layers' weights again) to save no work to speak of.
var cheapOps = map[ir.Op]bool{
	ir.OpConstant: true, ir.OpIota: true, ir.OpReshape: true, ir.OpBroadcast: true,
	ir.OpTranspose: true, ir.OpSlice: true, ir.OpDynamicSlice: true, ir.OpConvert: true,
}

// isCheap reports whether v is recomputed in the reverse loop rather than saved: a
// parameter of the body (a carried value, saved or loop-invariant), or the result of
// a cheap op or of scalar arithmetic (a counter) on cheap values.
func (t *tape) isCheap(v *ir.Value, fwd map[*ir.Instr]int, memo map[*ir.Value]bool) bool {
	if v.Def == nil {
		return true
	}
	if c, ok := memo[v]; ok {
		return c
	}
	in := v.Def
	_, isFwd := fwd[in]
	c := isFwd && (cheapOps[in.Op] || in.Op.Info().Elementwise && v.Type.Rank() == 0)
	for _, a := range in.Args {
		c = c && t.isCheap(a, fwd, memo)
	}
	memo[v] = c
	return c
}

// saveable: v is not one of the stacks an inner loop saves for its own reverse (the
// forward loop's body holds that loop without them).
func (t *tape) saveable(v *ir.Value) bool {
	ctl := t.ctl[v.Def]
	return ctl == nil || ctl.carry == nil || v.Index < ctl.carried
}

// liveFrom marks the values that computing vs needs, through their definitions in the
// tape's block, stopping at the saved ones.
func liveFrom(vs []*ir.Value, saved map[*ir.Value]bool) map[*ir.Value]bool {
	live := map[*ir.Value]bool{}
	work := append([]*ir.Value{}, vs...)
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		if live[v] || saved[v] {
			continue
		}
		live[v] = true
		if v.Def != nil {
			work = append(work, v.Def.Args...)
		}
	}
	return live
}

// readResiduals makes the tape's block read loads[i] wherever it read residual i of
// the body's clone (bodyVJP has run) and returns cts so substituted too: the forward
// instructions that computed them are left dead (prune).
func (t *tape) readResiduals(res []residual, loads, cts []*ir.Value) []*ir.Value {
	sub := make(map[*ir.Value]*ir.Value, len(res))
	for i, r := range res {
		v := t.instrs[r.instr].Results[r.result]
		if !v.Type.Equal(loads[i].Type) {
			panic("autodiff: a residual's type differs between clones of a loop body")
		}
		sub[v] = loads[i]
	}
	for _, in := range t.b.Block.Instrs {
		for j, a := range in.Args {
			if l := sub[a]; l != nil {
				in.Args[j] = l
			}
		}
	}
	out := make([]*ir.Value, len(cts))
	for q, c := range cts {
		out[q] = c
		if l := sub[c]; l != nil {
			out[q] = l
		}
	}
	return out
}

// prune removes the instructions of blk whose results nothing reads: the forward
// recomputation that the loaded residuals replaced. Regions are closed, so only the
// block's own instructions read its values.
func prune(blk *ir.Block) {
	uses := map[*ir.Value]int{}
	for _, in := range blk.Instrs {
		for _, a := range in.Args {
			uses[a]++
		}
	}
	dead := map[*ir.Instr]bool{}
	for i := len(blk.Instrs) - 1; i >= 0; i-- {
		in := blk.Instrs[i]
		if in.Op == ir.OpReturn || len(in.Results) == 0 {
			continue
		}
		unused := true
		for _, r := range in.Results {
			unused = unused && uses[r] == 0
		}
		if unused {
			dead[in] = true
			for _, a := range in.Args {
				uses[a]--
			}
		}
	}
	blk.Remove(func(in *ir.Instr) bool { return dead[in] })
}
