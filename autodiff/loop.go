package autodiff

import "github.com/tpucc/tpucc/ir"

// cloneSaving copies a counted while so that it also carries one [N, ...] buffer per
// carried value the reverse loop reads (carrySaved), then one per residual of its
// body (ctl.res), and a counter k from 0: iteration k first writes the carried values
// it starts from into row k, then runs the source's body and writes its residuals
// into row k.
func (t *tape) cloneSaving(ctl *control, args []*ir.Value, depth int) (*ir.Instr, error) {
	in, f := ctl.in, ctl.src
	cond, body := in.Regions[ir.WhileCond], in.Regions[ir.WhileBody]
	read, res, err := t.planReverse(ctl)
	if err != nil {
		return nil, err
	}
	ctl.res = res
	bret := body.Terminator()
	t.b.Pos = in.Pos
	ops := append([]*ir.Value{}, args...)
	ctl.carry = make([]carryKind, len(args))
	for j, p := range body.Params {
		switch {
		case bret.Args[j] == p:
			ctl.carry[j] = carryInvariant
		case read[j]:
			ctl.carry[j] = carrySaved
			ops = append(ops, t.b.Const(stackType(args[j].Type, ctl.trip), 0))
		default:
			ctl.carry[j] = carryUnread
		}
	}
	for _, r := range res {
		ops = append(ops, t.b.Const(stackType(r.typ, ctl.trip), 0))
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
		if ctl.carry[j] == carrySaved {
			names = append(names, "saved_"+p.Name)
		}
	}
	names = append(append(names, residualNames(res)...), "k")

	sc := t.region(c, cond.Params, extra, false)
	sc.name(len(args), names)
	goOn, err := sc.clone(f.RegionFunc(cond), sc.bind(cond.Params), depth)
	if err != nil {
		return nil, err
	}
	sc.ret(cond, goOn)

	sb := t.region(c, body.Params, extra, false)
	sb.name(len(args), names)
	ps := sb.b.Block.Params
	k := ps[len(ps)-1]
	var saved []*ir.Value
	s := len(args)
	for j, p := range ps[:len(args)] {
		if ctl.carry[j] == carrySaved {
			saved = append(saved, sb.saveRow(ps[s], p, k))
			s++
		}
	}
	out, err := sb.clone(f.RegionFunc(body), sb.bind(body.Params), depth)
	if err != nil {
		return nil, err
	}
	for _, r := range res {
		saved = append(saved, sb.saveRow(ps[s], sb.instrs[r.instr].Results[r.result], k))
		s++
	}
	next := sb.b.Op1(ir.OpAdd, nil, k, sb.b.Const(k.Type, 1))
	sb.ret(body, append(append(out, saved...), next))
	return c, nil
}

// residualNames name the stacks of residuals.
func residualNames(res []residual) []string {
	names := make([]string, len(res))
	for i, r := range res {
		names[i] = "res_" + r.name
	}
	return names
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

// whileVJP is the reverse loop over a saving while's N iterations: iteration k
// rebuilds the carried values iteration N-1-k started from (its saved rows, and the
// loop-invariant operands), runs the source body's VJP on them and carries the
// cotangents of the carried values back, so that a loop-invariant value sums its
// cotangent over all iterations. It carries k, the cotangents, the saved buffers (the
// carried values', then the residuals') and the loop-invariant values, in that order.
func (t *tape) whileVJP(in *ir.Instr, ctl *control, g []*ir.Value) ([]*ir.Value, error) {
	n := ctl.carried
	fIdx, cts := t.orZero(in.Results[:n], g[:n])
	t.b.Pos = in.Pos
	ops := append([]*ir.Value{t.b.Const(ir.Scalar(ir.I32), 0)}, cts...)
	s := n
	for j := range n {
		if ctl.carry[j] == carrySaved {
			ops = append(ops, in.Results[s])
			s++
		}
	}
	ops = append(ops, in.Results[s:s+len(ctl.res)]...)
	for j := range n {
		if ctl.carry[j] == carryInvariant {
			ops = append(ops, in.Args[j])
		}
	}
	types := valueTypes(ops)
	rw := t.b.F.NewInstr(ir.OpWhile, nil, ops, types, in.Pos)
	names := reverseNames(ctl, fIdx)
	sc := t.region(rw, nil, types, false)
	sc.name(0, names)
	k := sc.b.Block.Params[0]
	sc.b.Return(sc.b.Op1(ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLT}, k, sc.b.Const(k.Type, float64(ctl.trip))))
	sb := t.region(rw, nil, types, true)
	sb.name(0, names)
	if err := sb.reverseBody(ctl, fIdx, s-n); err != nil {
		return nil, err
	}
	t.b.Block.Append(rw)
	out := make([]*ir.Value, len(in.Args))
	for q, j := range fIdx {
		out[j] = rw.Results[1+q]
	}
	return out, nil
}

// reverseNames names the reverse loop's parameters after the carried values.
func reverseNames(ctl *control, fIdx []int) []string {
	body := ctl.in.Regions[ir.WhileBody]
	names := []string{"k"}
	for _, j := range fIdx {
		names = append(names, "ct_"+body.Params[j].Name)
	}
	for _, kind := range []carryKind{carrySaved, carryInvariant} {
		for j, p := range body.Params {
			if ctl.carry[j] == kind {
				names = append(names, map[carryKind]string{carrySaved: "saved_"}[kind]+p.Name)
			}
		}
		if kind == carrySaved {
			names = append(names, residualNames(ctl.res)...)
		}
	}
	return names
}

// reverseBody fills the reverse loop's body (see whileVJP); nSaved buffers of carried
// values, then the residuals', follow the cotangents of the float carried values fIdx.
// It loads the residuals first, so that what reads one reads its load, and prunes the
// forward instructions that are then dead.
func (t *tape) reverseBody(ctl *control, fIdx []int, nSaved int) error {
	ps := t.b.Block.Params
	k := ps[0]
	idx := t.b.Op1(ir.OpSub, nil, t.b.Const(k.Type, float64(ctl.trip-1)), k)
	kept := ps[1+len(fIdx):] // the saved buffers, then the invariant values
	body := ctl.in.Regions[ir.WhileBody]
	loads := make([]*ir.Value, len(ctl.res))
	for i, r := range ctl.res {
		loads[i] = t.loadRow(kept[nSaved+i], idx, r.typ)
		loads[i].Name = r.name
	}
	x := make([]*ir.Value, len(body.Params))
	si, ii := 0, nSaved+len(ctl.res)
	for j, p := range body.Params {
		switch ctl.carry[j] {
		case carrySaved:
			x[j] = t.loadRow(kept[si], idx, plain(p.Type))
			x[j].Name = p.Name
			si++
		case carryInvariant:
			x[j] = kept[ii]
			ii++
		default:
			x[j] = t.b.Const(plain(p.Type), 0)
			x[j].Name = p.Name
		}
	}
	cts, err := t.bodyVJP(ctl, x, ps[1:1+len(fIdx)], fIdx)
	if err != nil {
		return err
	}
	if len(ctl.res) > 0 {
		cts = t.readResiduals(ctl.res, loads, cts)
	}
	rets := append([]*ir.Value{t.b.Op1(ir.OpAdd, nil, k, t.b.Const(k.Type, 1))}, cts...)
	t.ret(body, append(rets, kept...))
	if len(ctl.res) > 0 {
		prune(t.b.Block)
	}
	return nil
}

// bodyVJP recomputes the loop's body from x, the values its carried values have at
// the start of an iteration, and returns the cotangents of the float carried values
// fIdx at that start given cts, theirs at its end.
func (t *tape) bodyVJP(ctl *control, x, cts []*ir.Value, fIdx []int) ([]*ir.Value, error) {
	body := ctl.in.Regions[ir.WhileBody]
	vals := map[*ir.Value]*ir.Value{}
	for j, p := range body.Params {
		vals[p] = x[j]
	}
	res, err := t.clone(ctl.src.RegionFunc(body), vals, 0)
	if err != nil {
		return nil, err
	}
	for q, j := range fIdx {
		t.accumulate(res[j], cts[q])
	}
	if err := t.backward(); err != nil {
		return nil, err
	}
	out := make([]*ir.Value, len(fIdx))
	for q, j := range fIdx {
		out[q] = t.ctOrZero(x[j])
	}
	return out, nil
}

// planReverse reports, per carried value of ctl's loop, whether the reverse loop reads
// the value it has at the start of an iteration, and the body's residuals that the
// forward loop saves (none under Options.Remat). It builds the body's VJP once, with
// every carried value a parameter, in a region of an instruction that is then
// dropped, takes the residuals from what its backward instructions read, and follows
// the operands back from the cotangents it returns, stopping at the residuals.
func (t *tape) planReverse(ctl *control) ([]bool, []residual, error) {
	body := ctl.in.Regions[ir.WhileBody]
	var fIdx []int
	var types []ir.Type
	for j, p := range body.Params {
		if p.Type.DType.IsFloat() {
			fIdx = append(fIdx, j)
			types = append(types, plain(p.Type))
		}
	}
	probe := t.b.F.NewInstr(ir.OpWhile, nil, nil, nil, ctl.in.Pos)
	sb := t.region(probe, nil, append(types, plainTypes(body.Params)...), true)
	ps := sb.b.Block.Params
	x := ps[len(fIdx):]
	cts, err := sb.bodyVJP(ctl, x, ps[:len(fIdx)], fIdx)
	if err != nil {
		return nil, nil, err
	}
	var res []residual
	saved := map[*ir.Value]bool{}
	if !t.opts.Remat {
		res = sb.residuals(cts)
		for _, r := range res {
			saved[sb.instrs[r.instr].Results[r.result]] = true
		}
	}
	live := liveFrom(cts, saved)
	read := make([]bool, len(x))
	for j, v := range x {
		read[j] = live[v]
	}
	return read, res, nil
}
