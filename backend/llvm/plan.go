package llvm

import (
	"fmt"
	"slices"

	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// A plan is the entry function as a straight sequence of steps over slots.
// Calls are inlined and fusion regions opened, so a step is a generated
// kernel, a constant, or one instruction that the reference executor runs
// (an op not generated yet). Slots are the values that live in memory.

type slotKind uint8

const (
	slotTemp   slotKind = iota // an intermediate, in memory planned by liveness
	slotParam                  // an argument of Run
	slotConst                  // a constant, filled once at compile time
	slotResult                 // a result, allocated fresh by each Run
	slotView                   // a block of another slot (view.go)
)

type slot struct {
	typ   ir.Type
	kind  slotKind
	param int    // slotParam: which argument
	data  []byte // slotConst: the value
	// written: a slotParam that a step writes into (donate.go)
	written bool
	view    *sliceView // slotView: where its elements are
}

type stepKind uint8

const (
	stepKernel stepKind = iota
	stepRef             // the reference executor runs instr
	stepCopy            // a result that is a parameter or constant: copied out
	stepUpdate          // a dynamic_update_slice into a parameter's storage (donate.go)
	// control.go: a while or case and the markers that end its regions
	stepWhile
	stepTest
	stepCarry
	stepCase
	stepYield
	stepJoin
)

type step struct {
	kind  stepKind
	name  string // the kernel's symbol
	bufs  []int  // slots: outputs first, then inputs
	outs  int    // how many of bufs are outputs
	rows  int64  // the kernel's outer range [0, rows)
	work  int64  // elements (or multiply-adds) it touches: decides splitting
	instr *ir.Instr
	mod   *ir.Module // stepRef: resolves calls in instr's regions
	what  string     // what the step computes, for reports
	fn    uintptr
	// fine: the kernel's ranges cost nothing to start (a loop, a norm, a
	// softmax, a reduction; not a product, which packs per range), so a
	// call may be cut into more ranges than threads (exec.go, fineRanges).
	fine bool
	// each: every index of the range is a range of its own, taken from
	// the pool's shared counter (a ragged_dot split by expert,
	// ragged_expert.go); such a step uses no scratch either.
	each bool
	// scratch, when set, is the scratch one part of this step's call
	// uses, beyond the plan's scratchBytes: only the regions of the parts
	// the call is split into are that large (a sort of one long line has
	// one part), so the executable holds it once per part, not per thread.
	scratch int64
	// ctl: a stepWhile's or stepCase's regions (control.go)
	ctl *control
}

type plan struct {
	slots   []slot
	steps   []step
	results []int
	gen     *gen
	// scratchBytes is the scratch memory each kernel call may use.
	scratchBytes int64
	// generated and fallen back count instructions by op.
	generated map[ir.Op]int
	fallback  map[ir.Op]int
}

type planner struct {
	m   *ir.Module
	p   *plan
	tgt target
	// epis are the epilogues fused into dot_general kernels (dot.go).
	epis map[*ir.Instr]*dotEpilogue
	// synthetic are the copies that bind an inlined fusion's parameters
	// and results; they are not the program's ops, so not counted.
	synthetic map[*ir.Instr]bool
	// inplace are the updates that write into a donated parameter.
	inplace map[*ir.Instr]bool
	// donated are the entry's parameters a caller may donate: a while
	// may carry one in its storage (control.go, adoptable).
	donated map[*ir.Value]bool
	// raggedT are the ragged_dots whose rhs is a transpose [0,2,1] of the
	// value given, which they read as it is stored (ragged.go).
	raggedT map[*ir.Instr]*ir.Value
	// reshaped are the dot_general operands (and those of fusions that
	// only products read) that are a reshape, copy or narrow convert of a
	// value in memory, which the kernel reads in place (reshapedOperand).
	reshaped map[*ir.Instr]map[int]*ir.Value
	// narrowSrc maps the result of each f32 convert of an f16/bf16 value
	// that is not planned to that value, which the products read and
	// widen themselves (narrow.go).
	narrowSrc map[*ir.Value]*ir.Value
	// exact are the module's f32 values that hold bf16 values, found on
	// first use (ragged_bf16.go, bf16Exact).
	exact map[*ir.Value]bool
	// owned are the parameters of the loop bodies planned: their slots
	// are the loops' carried slots (control.go, adoptable).
	owned map[*ir.Value]bool
	// viewOf maps each view slot crossViews made to its value; noView are
	// the values it must not make views of (newPlan).
	viewOf map[int]*ir.Value
	noView map[*ir.Value]bool
	// defs are the expressions of the group being planned: a reduction
	// of one computes it as it reads (fusedReduce).
	defs map[*ir.Value]*ir.Instr
	// top, topUsers, returned and params describe the entry for
	// overwrites (overwrite.go): its instructions, each donated
	// parameter's users among them, the values it returns, and its
	// parameters in order.
	top      map[*ir.Instr]bool
	topUsers map[*ir.Value][]*ir.Instr
	returned map[*ir.Value]bool
	params   []*ir.Value
}

// target is what a plan may assume of the machine that runs it.
type target struct {
	wide    bool     // the CPU has AVX-512 (gen.wide)
	threads int      // the parts a kernel call is split into (Options.Threads)
	bf16    bf16Unit // how bf16 × bf16 products run (bf16dot.go)
	// gemm: the blocked product's tile, blocks and prefetch distance
	// (gemm_tune.go); the zero value is staticGemm(wide).
	gemm gemmParams
	// stream: loop kernels whose outputs are at least this many bytes
	// store them with streaming stores (stream.go); 0 never.
	stream int64
}

// newPlan builds the plan of f in m for tgt, generating kernels into a new
// module; donate lists the parameters the caller may donate (donate.go).
// A value planned as a view of a later step's operand (view.go,
// crossViews) that a step other than a kernel turns out to read is
// planned again in memory: the plan is made once more without that view.
func newPlan(m *ir.Module, f *ir.Func, tgt target, donate ...int) (*plan, error) {
	noView := map[*ir.Value]bool{}
	for {
		p, bad, err := planOnce(m, f, tgt, noView, donate)
		if err != nil || len(bad) == 0 {
			return p, err
		}
		for _, v := range bad {
			if noView[v] {
				panic("llvm: a view planned again after it was refused")
			}
			noView[v] = true
		}
	}
}

// planOnce is one try of newPlan: the plan, or the values it made views
// of that a step other than a kernel reads.
func planOnce(m *ir.Module, f *ir.Func, tgt target, noView map[*ir.Value]bool, donate []int) (*plan, []*ir.Value, error) {
	if tgt.gemm == (gemmParams{}) {
		tgt.gemm = staticGemm(tgt.wide)
	}
	g := newGen(tgt.wide)
	g.gemm = tgt.gemm
	pl := &planner{m: m, tgt: tgt, p: &plan{gen: g, generated: map[ir.Op]int{}, fallback: map[ir.Op]int{}},
		epis: map[*ir.Instr]*dotEpilogue{}, synthetic: map[*ir.Instr]bool{}, inplace: inplaceUpdates(f, donate),
		raggedT: map[*ir.Instr]*ir.Value{}, reshaped: map[*ir.Instr]map[int]*ir.Value{},
		narrowSrc: map[*ir.Value]*ir.Value{}, owned: map[*ir.Value]bool{}, donated: map[*ir.Value]bool{},
		noView: noView, viewOf: map[int]*ir.Value{}}
	for _, i := range donate {
		if i >= 0 && i < len(f.Params) {
			pl.donated[f.Params[i]] = true
		}
	}
	pl.params = f.Params
	pl.entryUses(f)
	env := map[*ir.Value]int{}
	for i, prm := range f.Params {
		env[prm] = pl.newSlot(slot{typ: prm.Type, kind: slotParam, param: i})
	}
	res, err := pl.function(f, env, 0)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range res {
		if k := pl.p.slots[s].kind; k != slotTemp && !pl.p.slots[s].written {
			// A parameter or constant returned as is: results never share
			// storage with args, so copy it out.
			c := pl.newSlot(slot{typ: pl.p.slots[s].typ, kind: slotResult})
			pl.p.steps = append(pl.p.steps, step{kind: stepCopy, bufs: []int{c, s}, outs: 1, what: "copy"})
			s = c
		} else if k == slotTemp {
			pl.p.slots[s].kind = slotResult
		}
		pl.p.results = append(pl.p.results, s)
	}
	// A value returned twice must still be two results.
	seen := map[int]bool{}
	for i, s := range pl.p.results {
		if seen[s] {
			c := pl.newSlot(slot{typ: pl.p.slots[s].typ, kind: slotResult})
			pl.p.steps = append(pl.p.steps, step{kind: stepCopy, bufs: []int{c, s}, outs: 1, what: "copy"})
			pl.p.results[i] = c
		}
		seen[s] = true
	}
	if bad := pl.p.keepViewsAlive(); len(bad) > 0 {
		var vals []*ir.Value
		seen := map[int]bool{}
		for _, b := range bad {
			v, ok := pl.viewOf[b]
			if !ok {
				panic("llvm: a view slot read by a step that is not a kernel")
			}
			if !seen[b] {
				vals = append(vals, v)
			}
			seen[b] = true
		}
		return nil, vals, nil
	}
	pl.p.scopeKernels()
	pl.p.dedupeKernels()
	return pl.p, nil, nil
}

func (pl *planner) newSlot(s slot) int {
	pl.p.slots = append(pl.p.slots, s)
	return len(pl.p.slots) - 1
}

// maxInline bounds call nesting; the verifier already refuses recursion.
const maxInline = 64

// function plans f's body with its parameters bound by env and returns
// the slots of its results.
func (pl *planner) function(f *ir.Func, env map[*ir.Value]int, depth int) ([]int, error) {
	if depth > maxInline {
		return nil, ir.Errorf(f.Pos, "calls nest deeper than %d", maxInline)
	}
	var body, absorbed []*ir.Instr
	instrs := sunk(f.Body.Instrs)
	users := map[*ir.Value][]*ir.Instr{}
	for _, in := range instrs {
		for _, a := range in.Args {
			users[a] = append(users[a], in)
		}
	}
	narrow := pl.deferNarrow(instrs, users)
	// flush plans the pending group; what it defines and later
	// instructions use must be in memory.
	flush := func() error {
		inBody := map[*ir.Instr]bool{}
		for _, in := range append(body, absorbed...) {
			inBody[in] = true
		}
		var need []*ir.Value
		for _, in := range body {
			for _, r := range in.Results {
				for _, u := range users[r] {
					if !inBody[u] {
						need = append(need, r)
						break
					}
				}
			}
		}
		err := pl.group(body, env, need)
		body, absorbed = nil, nil
		return err
	}
	for _, in := range instrs {
		if narrow[in] {
			pl.p.generated[in.Op]++ // its products read its operand
			continue
		}
		switch in.Op {
		case ir.OpReturn:
			if err := flush(); err != nil {
				return nil, err
			}
			out := make([]int, len(in.Args))
			for i, a := range in.Args {
				out[i] = env[a]
			}
			return out, nil
		case ir.OpCall, ir.OpFusion, ir.OpCustomCall:
			if inl := pl.inlineFusion(in); inl != nil {
				body = append(body, inl...)
				absorbed = append(absorbed, in)
				continue
			}
			if err := flush(); err != nil {
				return nil, err
			}
			if err := pl.nested(in, env, depth); err != nil {
				return nil, err
			}
		case ir.OpWhile, ir.OpCase:
			if err := flush(); err != nil {
				return nil, err
			}
			if err := pl.control(in, env, depth); err != nil {
				return nil, err
			}
		default:
			if exp := pl.convExpanded(in); exp != nil {
				body = append(body, exp...) // im2col and the GEMM (conv.go)
				continue
			}
			if exp := pl.windowExpanded(in); exp != nil {
				body = append(body, exp...) // a take of the windows and a reduction (window.go)
				continue
			}
			body = append(body, in)
		}
	}
	return nil, ir.Errorf(f.Pos, "@%s does not end in return", f.Name)
}

// inlineFusion returns the region of an elementwise-only fusion as
// instructions of the enclosing group (copies bind its parameters to the
// fusion's operands and its results to what the region returns), nil for
// any other instruction. Joining the group lets a dot_general before the
// fusion see the expression after it, and fuse it as its epilogue.
func (pl *planner) inlineFusion(in *ir.Instr) []*ir.Instr {
	if !inlinable(in) {
		return nil
	}
	body := in.FusionBody()
	n := len(body.Instrs)
	var out []*ir.Instr
	bind := func(from, to *ir.Value) {
		c := &ir.Instr{Op: ir.OpCopy, Args: []*ir.Value{from}, Results: []*ir.Value{to}, Pos: in.Pos}
		pl.synthetic[c] = true
		out = append(out, c)
	}
	for i, p := range body.Params {
		bind(in.Args[i], p)
	}
	out = append(out, body.Instrs[:n-1]...)
	for i, r := range in.Results {
		bind(body.Instrs[n-1].Args[i], r)
	}
	return out
}

// boundInMemory is the slot of the operand of in, a copy that binds an
// opened fusion's parameter or result, when that operand is in memory
// already: the value's readers read that slot, as a fusion planned as a
// group of its own binds its parameters and results (nested), where a
// loop would copy it. A reduction's result that a product or the
// function's return reads after the fusion is one.
func (pl *planner) boundInMemory(in *ir.Instr, env map[*ir.Value]int) (int, bool) {
	if !pl.synthetic[in] || in.Op != ir.OpCopy {
		return 0, false
	}
	s, ok := env[in.Args[0]]
	return s, ok
}

// inlinable reports whether in is a fusion that inlineFusion opens into
// the enclosing group.
func inlinable(in *ir.Instr) bool {
	if in.Op != ir.OpFusion {
		return false
	}
	body := in.FusionBody()
	n := len(body.Instrs)
	if n == 0 || body.Instrs[n-1].Op != ir.OpReturn || len(body.Params) != len(in.Args) {
		return false
	}
	for _, v := range append(append([]*ir.Value{}, body.Params...), in.Results...) {
		if !supportedType(v.Type) {
			return false
		}
	}
	// Opened, the parameters are copies of the operands (inlineFusion).
	defs := map[*ir.Value]*ir.Instr{}
	for _, p := range body.Params {
		defs[p] = &ir.Instr{Op: ir.OpCopy}
	}
	for _, x := range body.Instrs[:n-1] {
		if isExpr(x) {
			defs[x.Results[0]] = x
			continue
		}
		if !narrowDot(x) && !fusedReduce(x, 0, defs) {
			return false
		}
	}
	return true
}

// nested plans a call (inlined), a custom_call's fallback (inlined as a
// call: this backend has no custom kernels) or a fusion (its region as one
// group).
func (pl *planner) nested(in *ir.Instr, env map[*ir.Value]int, depth int) error {
	var params []*ir.Value
	var f *ir.Func
	if in.Op == ir.OpCustomCall {
		var err error
		if f, err = ir.CustomCallFallback(pl.m, in); err != nil {
			return err
		}
		params = f.Params
	} else if in.Op == ir.OpCall {
		a, _ := in.Attr.(*ir.CallAttr)
		if a != nil && pl.m != nil {
			f = pl.m.Func(a.Callee)
		}
		if f == nil {
			return ir.Errorf(in.Pos, "call to undefined function")
		}
		params = f.Params
	} else {
		body := in.FusionBody()
		f = &ir.Func{Name: "fusion", Params: body.Params, Body: body, Pos: in.Pos}
		params = body.Params
	}
	inner := map[*ir.Value]int{}
	for i, p := range params {
		inner[p] = env[in.Args[i]]
	}
	res, err := pl.function(f, inner, depth+1)
	if err != nil {
		return err
	}
	for i, r := range in.Results {
		env[r] = res[i]
	}
	return nil
}

// group plans a straight run of instructions: values computed as
// expressions stay virtual unless something outside them (need, or an op
// that reads memory) uses them; each materialised expression is one loop
// kernel, and every other instruction is its own step.
func (pl *planner) group(body []*ir.Instr, env map[*ir.Value]int, need []*ir.Value) error {
	if len(body) == 0 {
		return nil
	}
	defs, mat, reshapes := pl.inMemory(body, env, need)
	outer := pl.defs
	pl.defs = defs
	defer func() { pl.defs = outer }()
	views := pl.readInPlace(reshapes, defs, mat)
	cross := pl.crossViews(need, defs, env, mat)
	// Tensor constants (scalars are expressions) are in memory from the
	// start, so that a dot_general's epilogue may read one defined after the
	// dot: an attention mask applied to the scores.
	for _, in := range body {
		if in.Op == ir.OpConstant && !isExpr(in) {
			if err := pl.constant(in, env); err != nil {
				return err
			}
		}
	}
	pl.findEpilogues(body, env, defs, mat)
	for i, in := range body {
		if in.Op == ir.OpConstant && !isExpr(in) {
			continue
		}
		if isExpr(in) {
			if !pl.synthetic[in] {
				pl.p.generated[in.Op]++
			}
			if _, done := env[in.Results[0]]; done {
				continue // a dot_general's epilogue computed it
			}
			if ds, ok := cross[in.Results[0]]; ok {
				lead, _ := contiguousSlice(ds)
				if s, ok := pl.viewSlot(ds, lead, in.Results[0].Type, env); ok {
					env[in.Results[0]] = s
					pl.viewOf[s] = in.Results[0]
					continue
				}
			}
			if lead, ok := views[in.Results[0]]; ok {
				if s, ok := pl.viewSlot(in, lead, in.Results[0].Type, env); ok {
					env[in.Results[0]] = s
					continue
				}
				mat[in.Results[0]] = true // its operand is not in memory: copied
			}
			if s, ok := pl.boundInMemory(in, env); ok {
				env[in.Results[0]] = s
				continue
			}
			if r := in.Results[0]; mat[r] {
				vs := append([]*ir.Value{r}, pl.siblingLoops(in, body[i+1:], env, defs, mat, views, cross)...)
				if err := pl.loopKernels(vs, env, defs); err != nil {
					return err
				}
			}
			continue
		}
		if err := pl.heavy(in, env); err != nil {
			return err
		}
	}
	return nil
}

// inMemory finds what group must store: the expressions of body (defs),
// the values a step that is not an expression reads from memory (mat,
// with need), and the products' reshaped operands that readInPlace may
// read where they are.
func (pl *planner) inMemory(body []*ir.Instr, env map[*ir.Value]int, need []*ir.Value) (map[*ir.Value]*ir.Instr, map[*ir.Value]bool, []reshapeUse) {
	defs := map[*ir.Value]*ir.Instr{}
	mat := map[*ir.Value]bool{}
	var reshapes []reshapeUse
	fused := map[*ir.Value]bool{} // reduce operands computed as read (fusedReduce)
	for _, v := range need {
		mat[v] = true
	}
	for _, in := range body {
		if isExpr(in) {
			defs[in.Results[0]] = in
			continue
		}
		for i, a := range in.Args {
			if t := raggedRhsT(in, i, defs); t != nil {
				w := raggedSource(t, defs)
				pl.raggedT[in] = w // the transpose stays virtual: not materialised
				if d := defs[w]; d != nil && d.Op == ir.OpDynamicSlice {
					reshapes = append(reshapes, reshapeUse{in, i, w}) // a view (readInPlace)
				} else {
					mat[w] = true
				}
				continue
			}
			if x := pl.reshapedOperand(in, i, defs, env); x != nil {
				reshapes = append(reshapes, reshapeUse{in, i, x})
				continue
			}
			if fusedReduce(in, i, defs) {
				fused[a] = true
				continue
			}
			if zeroScatter(in, i, defs) {
				continue
			}
			mat[a] = true
		}
	}
	// A reduction's operand that a product also reads through a reshape
	// is stored once for both (readInPlace) rather than computed twice
	// and copied for the product.
	for _, r := range reshapes {
		if fused[r.x] {
			mat[r.x] = true
		}
	}
	return defs, mat, reshapes
}

// reshapeUse is operand arg of in, a reshape of x (reshapedOperand).
type reshapeUse struct {
	in  *ir.Instr
	arg int
	x   *ir.Value
}

// readInPlace decides how each product reads its reshaped operands: a
// reshape of a value in memory stays virtual, and the dot reads that
// memory; of a contiguous dynamic_slice nothing else materialises, the dot
// reads a view of the slice's operand (view.go: the result maps each such
// slice to its leading dimensions); of another expression, it is copied.
func (pl *planner) readInPlace(reshapes []reshapeUse, defs map[*ir.Value]*ir.Instr, mat map[*ir.Value]bool) map[*ir.Value]int {
	views := map[*ir.Value]int{}
	for _, r := range reshapes {
		if defs[r.x] != nil && !mat[r.x] {
			lead, ok := contiguousSlice(defs[r.x])
			switch {
			case ok && lead > 0:
				views[r.x] = lead
				for _, st := range defs[r.x].Args[1 : 1+lead] {
					mat[st] = true // the executor reads the starts
				}
			case r.in.Op == ir.OpRaggedDot:
				mat[r.x] = true // the kernel reads the slice (raggedSource)
			case narrowRead(r):
				// A product's activations rounded to bf16 (models' linear):
				// the bf16 value is written, half the bytes of the f32
				// operand, and the product reads it at its width.
				mat[r.x] = true
			default:
				mat[r.in.Args[r.arg]] = true
				continue
			}
		}
		if pl.reshaped[r.in] == nil {
			pl.reshaped[r.in] = map[int]*ir.Value{}
		}
		pl.reshaped[r.in][r.arg] = r.x
	}
	return views
}

// narrowRead reports whether r reads an f16/bf16 value for an f32
// operand of a dot_general (through a widening convert).
func narrowRead(r reshapeUse) bool {
	dt := r.x.Type.DType
	return r.in.Op == ir.OpDotGeneral && (dt == ir.BF16 || dt == ir.F16) && r.in.Args[r.arg].Type.DType == ir.F32
}

// exprOp names the expression v for reports: its op, or, when v binds an
// opened fusion's result (a synthetic copy), the op of what it binds.
func (pl *planner) exprOp(v *ir.Value, defs map[*ir.Value]*ir.Instr) ir.Op {
	d := defs[v]
	for pl.synthetic[d] && defs[d.Args[0]] != nil {
		d = defs[d.Args[0]]
	}
	return d.Op
}

// siblingLoops are the values that one loop kernel can write beside first's
// (an expression to materialise): the materialised expressions of rest (the
// body after first), up to the next instruction that is not an expression, of first's
// shape, each read at its own index (no concat of its own). Their leaves
// are all in memory by then, and a value among them that another reads is
// computed once per element in registers: AdamW's new moments and weight,
// or a norm's outputs, are one pass over their operands, not one each.
func (pl *planner) siblingLoops(first *ir.Instr, rest []*ir.Instr, env map[*ir.Value]int, defs map[*ir.Value]*ir.Instr, mat map[*ir.Value]bool, views map[*ir.Value]int, cross map[*ir.Value]*ir.Instr) []*ir.Value {
	r := first.Results[0]
	if ownConcat(r, defs) != nil {
		return nil
	}
	var out []*ir.Value
	for _, in := range rest {
		if !isExpr(in) {
			break
		}
		v := in.Results[0]
		if !mat[v] || !slices.Equal(v.Type.Dims(), r.Type.Dims()) || ownConcat(v, defs) != nil {
			continue
		}
		if _, done := env[v]; done {
			continue
		}
		if _, ok := views[v]; ok {
			continue
		}
		if _, ok := cross[v]; ok {
			continue
		}
		out = append(out, v)
	}
	return out
}

// loopKernels materialises the expressions vs, all of one shape, into new
// slots with one kernel: one loop nest that stores each at its index.
func (pl *planner) loopKernels(vs []*ir.Value, env map[*ir.Value]int, defs map[*ir.Value]*ir.Instr) error {
	v := vs[0]
	k := pl.p.gen.newKernel()
	st := step{kind: stepKernel, name: k.name, outs: len(vs), what: "loop " + pl.exprOp(v, defs).String(), fine: true}
	over := map[int]int{} // a parameter's slot written over: the output's buffer
	for i, p := range pl.overwrites(vs, env, defs) {
		if p != nil {
			over[env[p]] = i
			pl.p.slots[env[p]].written = true
			st.bufs = append(st.bufs, env[p])
			continue
		}
		st.bufs = append(st.bufs, pl.newSlot(slot{typ: vs[i].Type}))
	}
	if len(vs) > 1 {
		st.what += fmt.Sprintf(" (+%d)", len(vs)-1)
	}
	if len(over) > 0 {
		st.what += " over its arguments"
	}

	e := &expr{k: k, defs: defs, memo: map[string]value.Value{}, bufs: map[*ir.Value]int{}}
	e.leaf = func(x *ir.Value) (int, bool) {
		s, ok := env[x]
		if !ok {
			return 0, false
		}
		if j, ok := over[s]; ok {
			return j, true // read where the output is written (overwrite.go)
		}
		st.bufs = append(st.bufs, s)
		return len(st.bufs) - 1, true
	}
	dims := v.Type.Dims()
	n, _ := v.Type.NumElements()
	inMemory := func(x *ir.Value) bool { _, ok := env[x]; return ok }
	cat, axis := ownConcat(v, defs), -1
	if cat != nil {
		axis = int(cat.Attr.(*ir.AxisAttr).Axis)
	} else if cat = lastConcat(vs, defs, inMemory); cat != nil {
		axis = len(dims) - 1
	}
	if cat == nil && len(dims) > 1 && flatExpr(vs, defs, inMemory) {
		e.flat, dims = true, []int64{n}
	}
	st.rows, _ = nestRows(dims)
	st.work = n * int64(len(vs))
	cuts := concatCuts(cat)
	dst, mems := make([]value.Value, len(vs)), make([]types.Type, len(vs))
	for i, w := range vs {
		_, mems[i], _ = elemType(w.Type.DType)
		dst[i] = k.buf(i, mems[i])
	}
	if cat == nil && pl.streams(vs, dims) {
		st.what += " (streamed)"
		emitStreamed(k, dims, dst, mems, func(idx []value.Value) []value.Value {
			out := make([]value.Value, len(vs))
			for i, w := range vs {
				out[i] = stored(k, e.at(w, idx), w.Type.DType)
			}
			return out
		})
		return pl.loopDone(k, st, vs, env)
	}
	emitNestSplit(k, dims, axis, cuts, func(idx []value.Value, part int) {
		if cat != nil { // each part's loop reads one operand, without selects
			e.seg.in, e.seg.at, e.seg.op, e.seg.off = cat, idx[axis], part, cuts[part]
			clear(e.memo) // values of another part's loop do not dominate this one
		}
		vals := make([]value.Value, len(vs))
		for i, w := range vs { // all before any store (overwrite.go)
			vals[i] = stored(k, e.at(w, idx), w.Type.DType)
		}
		for i := range vs {
			k.store(vals[i], dst[i], k.linear(idx, dims))
		}
	})
	return pl.loopDone(k, st, vs, env)
}

// loopDone finishes loopKernels' kernel k and adds its step st, whose
// outputs are vs.
func (pl *planner) loopDone(k *kfn, st step, vs []*ir.Value, env map[*ir.Value]int) error {
	k.finish()
	for i, w := range vs {
		env[w] = st.bufs[i]
	}
	pl.p.steps = append(pl.p.steps, st)
	return nil
}

// stored is x, a value of dtype dt in registers, as it is kept in memory.
func stored(k *kfn, x value.Value, dt ir.DType) value.Value {
	reg, mem, _ := elemType(dt)
	switch {
	case dt == ir.F16 || dt == ir.BF16:
		return k.narrow(x, dt)
	case reg != mem:
		return k.cur.NewZExt(x, mem)
	}
	return x
}

// heavy plans an instruction that is not an expression: a constant, a
// generated kernel where there is one, else the reference executor.
func (pl *planner) heavy(in *ir.Instr, env map[*ir.Value]int) error {
	if in.Op == ir.OpConstant {
		return pl.constant(in, env)
	}
	if pl.inplace[in] {
		return pl.updateInPlace(in, env)
	}
	if ok, err := pl.kernel(in, env); ok || err != nil {
		if ok {
			pl.p.generated[in.Op]++
		}
		return err
	}
	pl.p.fallback[in.Op]++
	st := step{kind: stepRef, instr: in, mod: pl.m, what: "reference " + in.Op.String()}
	for _, r := range in.Results {
		if !r.Type.IsStatic() {
			return ir.Errorf(in.Pos, "the llvm backend needs static shapes: %s", r.Type)
		}
		st.bufs = append(st.bufs, pl.newSlot(slot{typ: r.Type}))
	}
	st.outs = len(in.Results)
	for _, a := range in.Args {
		s, ok := env[a]
		if !ok {
			return ir.Errorf(in.Pos, "internal error: operand of %s was not planned", in.Op)
		}
		st.bufs = append(st.bufs, s)
	}
	for i, r := range in.Results {
		env[r] = st.bufs[i]
	}
	pl.p.steps = append(pl.p.steps, st)
	return nil
}

// constant evaluates a constant once, with the reference executor.
func (pl *planner) constant(in *ir.Instr, env map[*ir.Value]int) error {
	data, err := refConstant(in)
	if err != nil {
		return err
	}
	env[in.Results[0]] = pl.newSlot(slot{typ: in.Results[0].Type, kind: slotConst, data: data})
	return nil
}

// String lists the steps, one a line, for reports and tests.
func (p *plan) String() string {
	s := ""
	for i, st := range p.steps {
		s += fmt.Sprintf("%d: %s %v\n", i, st.what, st.bufs)
	}
	return s
}

// reshapedOperand is, when argument i of in is the operand of a generated
// dot_general and a reshape of a value x (not a parameter: an in-place
// update may write it before the dot reads it), x; group keeps it only if
// x is in memory anyway:
// a row-major reshape does not move elements, so the kernel reads x's
// memory with the reshape's dimensions. Copied, a prefill's attention
// probabilities ([1,16,512,512] to [16,512,512]) cost 2 ms a layer.
func (pl *planner) reshapedOperand(in *ir.Instr, i int, defs map[*ir.Value]*ir.Instr, env map[*ir.Value]int) *ir.Value {
	if in.Op != ir.OpDotGeneral || !floatStatic(in) { // else the reference runs it
		return nil
	}
	x, moved := operandSource(in.Args[i], defs, narrowDot(in))
	if x == nil {
		return nil
	}
	if n := pl.narrowSrc[x]; n != nil {
		// An opened fusion's operand that is a deferred convert
		// (deferNarrow): read as a product's own operand would be.
		return n
	}
	if s, ok := env[x]; ok && moved && pl.p.slots[s].kind == slotParam {
		return nil
	}
	return x
}
