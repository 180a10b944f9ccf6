package passes

import "github.com/tpucc/tpucc/ir"

// build turns every planned group with at least two kernels' worth of work
// into a fusion instruction, then reorders the body topologically (a fusion
// sits where its first result is needed, so values a member produced for a
// non-member are still defined before their use). Members move into the
// region unchanged; operands from outside become region parameters;
// broadcasts, iotas and constants read from outside are cloned in.
func (p *fusePlan) build() bool {
	var groups []int
	for g, ms := range p.members {
		work := 0
		for _, i := range ms {
			if p.kind[i] != fkConst {
				work++
			}
		}
		if work >= 2 {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return false
	}
	place := map[int]*ir.Instr{} // index of a group's last member -> its fusion
	moved := map[*ir.Instr]bool{}
	cloned := map[*ir.Instr]bool{}
	for _, g := range groups {
		fu := p.buildGroup(g, moved, cloned)
		ms := p.members[g]
		place[ms[len(ms)-1]] = fu
	}
	var list []*ir.Instr
	for i, in := range p.instrs {
		if fu, ok := place[i]; ok {
			list = append(list, fu)
		}
		if !moved[in] {
			list = append(list, in)
		}
	}
	p.f.Body.Instrs = topoOrder(p.f.Body, list)
	// Originals of clones that nothing reads any more.
	uses := p.f.UseCounts()
	p.f.Body.Remove(func(in *ir.Instr) bool {
		if !cloned[in] {
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

func (p *fusePlan) buildGroup(g int, moved, cloned map[*ir.Instr]bool) *ir.Instr {
	ms := p.members[g]
	inGroup := map[*ir.Instr]bool{}
	kind := ir.FusionLoop
	for _, i := range ms {
		inGroup[p.instrs[i]] = true
		switch p.kind[i] {
		case fkDot:
			kind = ir.FusionOutput
		case fkReduce, fkNorm:
			if kind != ir.FusionOutput {
				kind = ir.FusionInput
			}
		}
	}
	root := p.instrs[ms[len(ms)-1]]
	body := &ir.Block{}
	var operands []*ir.Value
	mapped := map[*ir.Value]*ir.Value{}
	var resolve func(a *ir.Value) *ir.Value
	resolve = func(a *ir.Value) *ir.Value {
		if a.Def != nil && inGroup[a.Def] {
			return a
		}
		if v, ok := mapped[a]; ok {
			return v
		}
		var v *ir.Value
		if d := a.Def; d != nil && p.clonable(d) {
			args := make([]*ir.Value, len(d.Args))
			for k, x := range d.Args {
				args[k] = resolve(x)
			}
			c := p.f.NewInstr(d.Op, d.Attr, args, []ir.Type{a.Type}, d.Pos)
			body.Append(c)
			cloned[d] = true
			v = c.Results[0]
			v.Name = a.Name
		} else {
			v = p.f.NewValue(a.Type)
			v.Index = len(operands)
			v.Pos = root.Pos
			operands = append(operands, a)
			body.Params = append(body.Params, v)
		}
		mapped[a] = v
		return v
	}
	var outs []*ir.Value
	for _, i := range ms {
		in := p.instrs[i]
		for k, a := range in.Args {
			in.Args[k] = resolve(a)
		}
		body.Append(in)
		moved[in] = true
		for _, u := range p.users[i] {
			if p.group[u] != g {
				outs = append(outs, in.Results...)
				break
			}
		}
	}
	types := make([]ir.Type, len(outs))
	for k, v := range outs {
		types[k] = v.Type
	}
	fu := p.f.NewInstr(ir.OpFusion, &ir.FusionAttr{Kind: kind}, operands, types, root.Pos)
	fu.Block = p.f.Body
	body.Parent = fu
	fu.Regions = []*ir.Block{body}
	ret := p.f.NewInstr(ir.OpReturn, nil, append([]*ir.Value(nil), outs...), nil, root.Pos)
	body.Append(ret)
	// Outside readers of the outputs read the fusion's results instead.
	repl := map[*ir.Value]*ir.Value{}
	for k, v := range outs {
		r := fu.Results[k]
		r.Name, r.Pos = v.Name, v.Pos
		repl[v] = r
	}
	for _, x := range p.instrs {
		if inGroup[x] {
			continue
		}
		for k, a := range x.Args {
			if r, ok := repl[a]; ok {
				x.Args[k] = r
			}
		}
	}
	for _, x := range p.built {
		for k, a := range x.Args {
			if r, ok := repl[a]; ok {
				x.Args[k] = r
			}
		}
	}
	p.built = append(p.built, fu)
	p.c.Count(kind.String())
	return fu
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
	i, ok := p.index[d]
	return ok && d.Block == p.f.Body && duplicable(d) && len(d.Results) == 1 && len(p.members[p.group[i]]) == 1
}
