package target

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// Cost is the roofline estimate of one group of instructions run as one
// kernel, or the sum over several groups. Byte counts are memory traffic in
// the target's padded, tiled storage; FLOPs are useful work (XLA's
// HloCostAnalysis rules, flops.go), transcendentals apart.
type Cost struct {
	FLOPs             int64 // vector ops plus matmul FLOPs
	MatmulFLOPs       int64 // of FLOPs, those of dot_general
	PaddedMatmulFLOPs int64 // MatmulFLOPs with dimensions padded to the MXU (what runs)
	Transcendentals   int64

	ReadBytes    int64 // operands from outside the group, each once
	WriteBytes   int64 // results used outside the group, each once
	LogicalBytes int64 // the same traffic without tile padding

	ComputeSeconds float64 // padded matmul FLOPs at the matmul peak, vector ops at the vector rate
	MemorySeconds  float64 // (ReadBytes + WriteBytes) / bandwidth
	// Seconds is max(ComputeSeconds, MemorySeconds) for one group; for a sum
	// of groups it is the sum of their Seconds (kernels run one at a time).
	Seconds float64
}

// Bytes is the group's memory traffic.
func (c Cost) Bytes() int64 { return addOK(c.ReadBytes, c.WriteBytes) }

// PadBytes is the part of Bytes that is tile padding.
func (c Cost) PadBytes() int64 { return c.Bytes() - c.LogicalBytes }

// ComputeBound reports whether compute, not memory, sets the group's time.
func (c Cost) ComputeBound() bool { return c.ComputeSeconds > c.MemorySeconds }

// add accumulates d into c, as a total over groups does.
func (c *Cost) add(d Cost) {
	c.FLOPs = addOK(c.FLOPs, d.FLOPs)
	c.MatmulFLOPs = addOK(c.MatmulFLOPs, d.MatmulFLOPs)
	c.PaddedMatmulFLOPs = addOK(c.PaddedMatmulFLOPs, d.PaddedMatmulFLOPs)
	c.Transcendentals = addOK(c.Transcendentals, d.Transcendentals)
	c.ReadBytes = addOK(c.ReadBytes, d.ReadBytes)
	c.WriteBytes = addOK(c.WriteBytes, d.WriteBytes)
	c.LogicalBytes = addOK(c.LogicalBytes, d.LogicalBytes)
	c.ComputeSeconds += d.ComputeSeconds
	c.MemorySeconds += d.MemorySeconds
	c.Seconds += d.Seconds
}

// GroupBytes is the memory traffic of group run as one kernel (GroupCost's
// Bytes), or -1 when it cannot be known (passes.Target). It does not count
// the group's work: a FLOP count that overflows int64 leaves the bytes known.
func (t *Target) GroupBytes(f *ir.Func, group []*ir.Instr) int64 {
	a := &analyzer{t: t, m: f.Module, done: map[*ir.Func]*Analysis{}}
	if hasCall(group) {
		r, err := a.group(f, group, f.Uses())
		if err != nil {
			return -1
		}
		return r.cost.Bytes()
	}
	var r groupResult
	m := gather(group)
	if a.reads(m, &r.cost) != nil || a.writes(m, f.Uses(), &r) != nil {
		return -1
	}
	if c := r.cost; c.ReadBytes < 0 || c.WriteBytes < 0 || c.LogicalBytes < 0 || c.Bytes() < 0 {
		return -1
	}
	return r.cost.Bytes()
}

// OperandBytes is what in reads of its operand i from outside its kernel
// (passes.Target): the padded footprint GroupCost charges.
func (t *Target) OperandBytes(in *ir.Instr, i int) int64 {
	p, _ := t.footprint(in, i)
	return p
}

// GroupSeconds is GroupCost's Seconds, or -1 when it cannot be costed
// (passes.Target).
func (t *Target) GroupSeconds(f *ir.Func, group []*ir.Instr) float64 {
	c, err := t.GroupCost(f, group)
	if err != nil {
		return -1
	}
	return c.Seconds
}

// GroupCost estimates running group, instructions of f's body, as one kernel.
// The group reads every operand defined outside it once and writes every
// result used outside it (or returned) once. Instructions nested in a
// member's regions (a fusion's body) are part of the group. Constants are
// data, not work: a splat (or one-element) constant is an immediate, read for
// free; a dense one is read from memory at its size; neither is ever written.
// slice, dynamic_slice and take read only the window they return from their
// first operand. A call must be a group of its own; it costs what its
// callee's instructions cost, each as its own group.
func (t *Target) GroupCost(f *ir.Func, group []*ir.Instr) (Cost, error) {
	g, err := (&analyzer{t: t, m: f.Module, done: map[*ir.Func]*Analysis{}}).group(f, group, f.Uses())
	if err != nil {
		return Cost{}, err
	}
	return g.cost, nil
}

// groupResult is a costed group and the values it writes.
type groupResult struct {
	cost      Cost
	written   []*ir.Value // results used outside the group, in result order
	transient int64       // memory a call's callee holds at its peak, beyond the call's results
}

// analyzer costs groups; it remembers each callee's analysis and the calls
// being costed, to refuse recursion (which the verifier forbids already).
type analyzer struct {
	t     *Target
	m     *ir.Module
	done  map[*ir.Func]*Analysis
	stack []*ir.Func
}

// groupMembers is a group with the instructions nested in its members.
type groupMembers struct {
	all      []*ir.Instr // members and their nested instructions, in order
	inside   map[*ir.Instr]bool
	internal map[*ir.Value]bool // values defined inside: results and region parameters
	// times is how often each instruction of all runs: a while's do region
	// its trip count (ir.TripCount), its cond one more, nested loops the
	// product; once where the count is not known.
	times map[*ir.Instr]int64
}

func gather(group []*ir.Instr) groupMembers {
	m := groupMembers{inside: map[*ir.Instr]bool{}, internal: map[*ir.Value]bool{}, times: map[*ir.Instr]int64{}}
	var visit func(x *ir.Instr, times int64)
	visit = func(x *ir.Instr, times int64) {
		m.inside[x] = true
		m.all = append(m.all, x)
		m.times[x] = times
		for _, v := range x.Results {
			m.internal[v] = true
		}
		for i, reg := range x.Regions {
			for _, p := range reg.Params {
				m.internal[p] = true
			}
			t := times
			if n, ok := ir.TripCount(x); ok {
				t = mulOK(times, n+1-int64(i)) // cond runs once more than do
			}
			for _, y := range reg.Instrs {
				visit(y, t)
			}
		}
	}
	for _, in := range group {
		visit(in, 1)
	}
	return m
}

func hasCall(group []*ir.Instr) bool {
	for _, in := range group {
		if in.Op == ir.OpCall {
			return true
		}
	}
	return false
}

// group costs one group of f; uses is f's use-list.
func (a *analyzer) group(f *ir.Func, group []*ir.Instr, uses *ir.Uses) (groupResult, error) {
	var r groupResult
	if len(group) == 0 {
		return r, fmt.Errorf("tpu: empty group in @%s", f.Name)
	}
	if hasCall(group) {
		if len(group) != 1 {
			return r, ir.Errorf(group[0].Pos, "cannot cost a call fused with other instructions")
		}
		return a.call(group[0])
	}
	m := gather(group)
	c, err := a.work(m)
	if err != nil {
		return r, err
	}
	r.cost = c
	if err := a.reads(m, &r.cost); err != nil {
		return r, err
	}
	if err := a.writes(m, uses, &r); err != nil {
		return r, err
	}
	c = r.cost
	if c.FLOPs < 0 || c.MatmulFLOPs < 0 || c.PaddedMatmulFLOPs < 0 || c.Transcendentals < 0 ||
		c.ReadBytes < 0 || c.WriteBytes < 0 || c.LogicalBytes < 0 || c.Bytes() < 0 {
		return r, ir.Errorf(group[0].Pos, "cannot cost %s: the counts overflow int64", group[0].Op)
	}
	r.cost.MemorySeconds = float64(c.Bytes()) / a.t.Bandwidth
	r.cost.Seconds = max(c.ComputeSeconds, r.cost.MemorySeconds)
	return r, nil
}

// work counts what the instructions compute; constants, returns and the
// fusions themselves (whose bodies are in all) compute nothing.
func (a *analyzer) work(m groupMembers) (Cost, error) {
	var w work
	for _, in := range m.all {
		switch {
		case in.Op == ir.OpConstant, in.Op == ir.OpReturn, len(in.Regions) > 0:
			continue
		case in.Op == ir.OpCall:
			return Cost{}, ir.Errorf(in.Pos, "cannot cost a call inside a region")
		}
		iw, ok := a.t.instrWork(in)
		if !ok {
			return Cost{}, ir.Errorf(in.Pos, "cannot cost %s: %s", in.Op, notStatic(in))
		}
		w.add(iw.times(m.times[in]))
	}
	return Cost{FLOPs: w.flops, MatmulFLOPs: w.matmul, PaddedMatmulFLOPs: w.paddedMatmul,
		Transcendentals: w.transcendentals, ComputeSeconds: w.seconds}, nil
}

// reads adds each external operand once, at the largest footprint any
// member reads of it.
func (a *analyzer) reads(m groupMembers, c *Cost) error {
	var order []*ir.Value
	foot := map[*ir.Value][2]int64{} // padded, logical
	for _, in := range m.all {
		for i, v := range in.Args {
			if m.internal[v] {
				continue
			}
			p, l := a.t.footprint(in, i)
			if p < 0 || l < 0 {
				return ir.Errorf(in.Pos, "cannot cost %s: %s", in.Op, notStatic(in))
			}
			old, seen := foot[v]
			if !seen {
				order = append(order, v)
			}
			foot[v] = [2]int64{max(old[0], p), max(old[1], l)}
		}
	}
	for _, v := range order {
		c.ReadBytes = addOK(c.ReadBytes, foot[v][0])
		c.LogicalBytes = addOK(c.LogicalBytes, foot[v][1])
	}
	return nil
}

// writes adds the results of non-constant members used outside the group,
// and lists them in r.written.
func (a *analyzer) writes(m groupMembers, uses *ir.Uses, r *groupResult) error {
	c := &r.cost
	for _, in := range m.all {
		if in.Op == ir.OpConstant {
			continue
		}
		for _, v := range in.Results {
			if !usedOutside(v, m.inside, uses) {
				continue
			}
			r.written = append(r.written, v)
			p, l := a.t.Bytes(v.Type), a.t.LogicalBytes(v.Type)
			if p < 0 || l < 0 {
				return ir.Errorf(in.Pos, "cannot cost %s: %s", in.Op, notStatic(in))
			}
			c.WriteBytes = addOK(c.WriteBytes, p)
			c.LogicalBytes = addOK(c.LogicalBytes, l)
		}
	}
	return nil
}

func usedOutside(v *ir.Value, inside map[*ir.Instr]bool, uses *ir.Uses) bool {
	for _, u := range uses.Users(v) {
		if !inside[u] {
			return true
		}
	}
	return false
}

// footprint is how many bytes (padded and logical) instruction in reads of
// its operand i when that operand comes from outside the group.
func (t *Target) footprint(in *ir.Instr, i int) (padded, logical int64) {
	v := in.Args[i]
	if v.Def != nil && v.Def.Op == ir.OpConstant {
		if ca, ok := v.Def.Attr.(*ir.ConstAttr); ok && ca.Value != nil && ca.Value.Len() <= 1 {
			return 0, 0 // an immediate
		}
	}
	ty := v.Type
	if i == 0 && len(in.Results) == 1 {
		switch in.Op {
		case ir.OpSlice, ir.OpDynamicSlice, ir.OpTake:
			// Only the window: the result's size, never more than the operand.
			w := in.Results[0].Type.WithDType(ty.DType)
			p, l := t.Bytes(w), t.LogicalBytes(w)
			if fp := t.Bytes(ty); p >= 0 && fp >= 0 {
				p = min(p, fp)
			}
			return p, l
		}
	}
	if in.Op == ir.OpRaggedDot && i == 1 {
		return t.raggedWeights(in)
	}
	return t.Bytes(ty), t.LogicalBytes(ty)
}

// raggedWeights is what a ragged_dot reads of its rhs [g,k,n]: only the
// groups that hold rows, and with m rows at most min(g, m) of them do. A
// batch-64 decode of a 128-expert, top-8 layer has 512 rows and reads every
// expert; a single token reads 8 of 128.
func (t *Target) raggedWeights(in *ir.Instr) (padded, logical int64) {
	rhs := in.Args[1].Type
	g, m := rhs.Shape[0].Size, in.Args[0].Type.Shape[0].Size
	p, l := t.Bytes(rhs), t.LogicalBytes(rhs)
	if g <= 0 || m >= g || p < 0 || l < 0 {
		return p, l
	}
	return p / g * max(m, 0), l / g * max(m, 0)
}

// call costs a call as its callee's groups (each instruction its own group).
func (a *analyzer) call(in *ir.Instr) (groupResult, error) {
	var r groupResult
	ca, ok := in.Attr.(*ir.CallAttr)
	if !ok || a.m == nil {
		return r, ir.Errorf(in.Pos, "cannot cost a call without its module")
	}
	callee := a.m.Func(ca.Callee)
	if callee == nil {
		return r, ir.Errorf(in.Pos, "cannot cost a call of @%s: no such function", ca.Callee)
	}
	an, err := a.analyze(callee, nil)
	if err != nil {
		return r, err
	}
	r.cost = an.Total
	// The call's results are written by the callee's groups and stay live
	// after the call; everything else the callee held at its peak is
	// transient.
	var results int64
	for _, v := range in.Results {
		results = addOK(results, a.t.Bytes(v.Type))
	}
	r.transient = max(an.PeakBytes-results, 0)
	for _, v := range in.Results {
		r.written = append(r.written, v)
	}
	return r, nil
}

// notStatic says why an instruction could not be costed.
func notStatic(in *ir.Instr) string {
	for _, v := range in.Args {
		if !v.Type.IsStatic() {
			return "operand type " + v.Type.String() + " is not static"
		}
	}
	for _, v := range in.Results {
		if !v.Type.IsStatic() {
			return "result type " + v.Type.String() + " is not static"
		}
	}
	return "the counts overflow int64"
}
