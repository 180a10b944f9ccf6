package passes

import "github.com/tpucc/tpucc/ir"

// build turns every planned group with at least two kernels' worth of work
// into a fusion instruction, then reorders the body topologically (a fusion
// sits where its first result is needed, so values a member produced for a
// non-member are still defined before their use). Members move into the
// region unchanged; operands from outside become region parameters;
// broadcasts, iotas and constants read from outside are cloned in.
func (p *fusePlan) build() bool {
	groups := p.fusionGroups()
	if len(groups) == 0 {
		return false
	}
	place := map[int]*ir.Instr{} // index of a group's last member -> its fusion
	moved := make([]bool, len(p.instrs))
	cloned := make([]bool, len(p.instrs))
	for _, g := range groups {
		fu := p.buildGroup(g, moved, cloned)
		ms := p.groups[g].members
		place[ms[len(ms)-1]] = fu
	}
	var list []*ir.Instr
	for i, in := range p.instrs {
		if fu, ok := place[i]; ok {
			list = append(list, fu)
		}
		if !moved[i] {
			list = append(list, in)
		}
	}
	p.f.Body.Instrs = topoOrder(p.f.Body, list)
	// Originals of clones that nothing reads any more.
	uses := p.f.UseCounts()
	p.f.Body.Remove(func(in *ir.Instr) bool {
		if i, ok := p.at(in); !ok || !cloned[i] {
			return false
		}
		for _, r := range in.Results {
			if uses[r.ID] > 0 {
				return false
			}
		}
		return true
	})
	return true
}

// fusionGroups lists, by label, the groups with at least two members that
// are not constants, each with its members sorted.
func (p *fusePlan) fusionGroups() []int {
	var out []int
	for g, grp := range p.groups {
		if grp == nil {
			continue
		}
		work := 0
		for _, i := range grp.members {
			if p.kind[i] != fkConst {
				work++
			}
		}
		if work >= 2 {
			p.sortedMembers(g)
			out = append(out, g)
		}
	}
	return out
}

// buildGroup makes the fusion of group g and points the readers of its
// outputs at the fusion's results.
func (p *fusePlan) buildGroup(g int, moved, cloned []bool) *ir.Instr {
	ms := p.groups[g].members
	root := p.instrs[ms[len(ms)-1]]
	r := &regionBuilder{p: p, g: g, body: &ir.Block{}, mapped: map[*ir.Value]*ir.Value{}, pos: root.Pos, cloned: cloned}
	var outs []*ir.Value
	for _, i := range ms {
		in := p.instrs[i]
		for k, a := range in.Args {
			in.Args[k] = r.resolve(a)
		}
		r.body.Append(in)
		moved[i] = true
		for _, u := range p.users[i] {
			if p.find(u) != g {
				outs = append(outs, in.Results...)
				break
			}
		}
	}
	types := make([]ir.Type, len(outs))
	for k, v := range outs {
		types[k] = v.Type
	}
	kind := p.fusionKind(ms)
	fu := p.f.NewInstr(ir.OpFusion, &ir.FusionAttr{Kind: kind}, r.operands, types, root.Pos)
	fu.Block = p.f.Body
	r.body.Parent = fu
	fu.Regions = []*ir.Block{r.body}
	r.body.Append(p.f.NewInstr(ir.OpReturn, nil, append([]*ir.Value(nil), outs...), nil, root.Pos))
	p.uses.Add(fu)
	for k, v := range outs {
		res := fu.Results[k]
		res.Name, res.Pos = v.Name, v.Pos
		p.redirect(g, v, res)
	}
	p.c.Count(kind.String())
	return fu
}

// fusionKind is loop, input (rooted at a reduction or a normalising
// composite) or output (rooted at a dot_general).
func (p *fusePlan) fusionKind(ms []int) ir.FusionKind {
	kind := ir.FusionLoop
	for _, i := range ms {
		switch p.kind[i] {
		case fkDot:
			kind = ir.FusionOutput
		case fkReduce, fkNorm:
			if kind != ir.FusionOutput {
				kind = ir.FusionInput
			}
		}
	}
	return kind
}

// redirect makes the readers of v outside group g read res instead: the
// top-level instructions and the fusions built so far (members of those
// read region parameters now, and find nothing to rename).
func (p *fusePlan) redirect(g int, v, res *ir.Value) {
	for _, u := range p.uses.Users(v) {
		if i, ok := p.at(u); ok && p.find(i) == g {
			continue
		}
		for k, a := range u.Args {
			if a == v {
				u.Args[k] = res
			}
		}
	}
}

// regionBuilder gathers a fusion's body: the operands it reads from outside
// become region parameters, except broadcasts, iotas and constants, which
// are cloned in.
type regionBuilder struct {
	p        *fusePlan
	g        int
	body     *ir.Block
	operands []*ir.Value
	mapped   map[*ir.Value]*ir.Value // outside value -> its stand-in in the region
	pos      ir.Pos
	cloned   []bool // by body index: originals cloned into some region
}

func (r *regionBuilder) resolve(a *ir.Value) *ir.Value {
	p := r.p
	if i, ok := p.at(a.Def); ok && p.find(i) == r.g {
		return a
	}
	if v, ok := r.mapped[a]; ok {
		return v
	}
	var v *ir.Value
	if d := a.Def; d != nil && p.clonable(d) {
		args := make([]*ir.Value, len(d.Args))
		for k, x := range d.Args {
			args[k] = r.resolve(x)
		}
		c := p.f.NewInstr(d.Op, d.Attr, args, []ir.Type{a.Type}, d.Pos)
		r.body.Append(c)
		i, _ := p.at(d)
		r.cloned[i] = true
		v = c.Results[0]
		v.Name = a.Name
	} else {
		v = p.f.NewValue(a.Type)
		v.Index = len(r.operands)
		v.Pos = r.pos
		r.operands = append(r.operands, a)
		r.body.Params = append(r.body.Params, v)
	}
	r.mapped[a] = v
	return v
}

// topoOrder orders list so every instruction follows those of blk defining
// its operands, keeping the given order where it already is one.
func topoOrder(blk *ir.Block, list []*ir.Instr) []*ir.Instr {
	top := map[*ir.Instr]bool{}
	for _, in := range list {
		top[in] = true
	}
	done := map[*ir.Instr]bool{}
	out := make([]*ir.Instr, 0, len(list))
	var emit func(in *ir.Instr)
	emit = func(in *ir.Instr) {
		if done[in] {
			return
		}
		done[in] = true
		for _, a := range in.Args {
			if a.Def != nil && top[a.Def] {
				emit(a.Def)
			}
		}
		in.Block = blk
		out = append(out, in)
	}
	for _, in := range list {
		emit(in)
	}
	return out
}

// clonable: a broadcast, iota or constant of the body that no group took.
func (p *fusePlan) clonable(d *ir.Instr) bool {
	i, ok := p.at(d)
	return ok && duplicable(d) && len(d.Results) == 1 && p.size(p.find(i)) == 1
}
