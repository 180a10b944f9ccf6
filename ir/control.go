package ir

import "fmt"

// Control flow: while and case hold closed regions, as fusion does, but
// their bodies are whole programs: any op, nested while and case, fusions
// (the fuse pass runs inside bodies) and calls. A region uses only its own
// parameters and the values it defines; loop-invariant values are carried.
//
//	while %a, ... : T, ... cond (%p: T, ...) { ...; return %go } do (%p: T, ...) { ...; return %r, ... }
//	case %k, %a, ... : R, ... (%p: T, ...) { ...; return %r, ... } (%p: T, ...) { ... }
//
// Semantics as StableHLO's: while carries its operands, runs do while cond
// returns true and returns the last carried values; case runs branch k on
// its operands after the index, and an index outside [0, N) runs the last
// branch.

// Region indices of a while instruction.
const (
	WhileCond = 0
	WhileBody = 1
)

// inferWhile: a while returns its carried values, so its result types are
// its operand types.
func inferWhile(c *inferCtx) []Type {
	res := make([]Type, len(c.args))
	copy(res, c.args)
	return res
}

// inferCase takes the written result types (the branches' return types,
// which the verifier checks) and checks the index.
func inferCase(c *inferCtx) []Type {
	if c.hint == nil {
		return c.fail("case needs its result types written after ':'")
	}
	if k := c.args[0]; k.DType != I32 || k.Rank() != 0 {
		return c.fail("case index must be i32[], got %s", k)
	}
	return c.hint
}

// NewRegion adds an empty region to in, with parameters of the given types,
// and returns it; the caller fills it and ends it with a return.
func (f *Func) NewRegion(in *Instr, params []Type) *Block {
	blk := &Block{Parent: in}
	for i, t := range params {
		v := f.NewValue(t)
		v.Index = i
		v.Pos = in.Pos
		blk.Params = append(blk.Params, v)
	}
	in.Regions = append(in.Regions, blk)
	return blk
}

// RegionFunc returns a view of region r of one of f's instructions as a
// function of its own: r is its body, r's parameters its parameters, the
// types r returns its results. It allocates values and instructions from f,
// so a pass run on the view (the pass runner runs passes inside while and
// case bodies this way) keeps IDs unique in f. The view is not in f's
// module's function list; it resolves calls through it.
func (f *Func) RegionFunc(r *Block) *Func {
	owner := f
	for owner.owner != nil {
		owner = owner.owner
	}
	var results []Type
	if ret := r.Terminator(); ret != nil {
		for _, a := range ret.Args {
			results = append(results, a.Type)
		}
	}
	name := f.Name
	if r.Parent != nil {
		name += "/" + r.Parent.Op.String()
	}
	return &Func{Name: name, Params: r.Params, Results: results, Body: r, Pos: f.Pos, Module: f.Module, owner: owner}
}

// IsControl reports whether op is while or case: an op whose regions are
// whole programs run when the op runs.
func IsControl(op Op) bool { return op == OpWhile || op == OpCase }

// regionSig is what one region of a control op must look like: its
// parameter and return types, and how messages name it and them.
type regionSig struct {
	name    string // "while cond region", "case branch 1 region"
	params  []Type
	rets    []Type
	paramOf string // "carried value", "operand"
	retOf   string // what a returned value must match, as "%s %d"
	// anyLayout: the parameters may have any layout a target gives them
	// (a sort's comparator scalars).
	anyLayout bool
}

// controlSigs gives the expected signature of each region of a while or
// case, or reports the instruction's own shape errors.
func controlSigs(in *Instr) ([]regionSig, error) {
	if in.Op == OpSort {
		return sortSig(in)
	}
	carried := make([]Type, len(in.Args))
	for i, a := range in.Args {
		if a == nil {
			return nil, fmt.Errorf("%s has a missing operand", in.Op)
		}
		carried[i] = a.Type
	}
	res := make([]Type, len(in.Results))
	for i, r := range in.Results {
		res[i] = r.Type
	}
	if in.Op == OpWhile {
		if len(in.Regions) != 2 {
			return nil, fmt.Errorf("while needs 2 regions (cond and do), got %d", len(in.Regions))
		}
		return []regionSig{
			{name: "while cond region", params: carried, rets: []Type{Scalar(I1)}, paramOf: "carried value", retOf: "i1[] condition"},
			{name: "while do region", params: carried, rets: carried, paramOf: "carried value", retOf: "carried value"},
		}, nil
	}
	if len(in.Regions) == 0 {
		return nil, fmt.Errorf("case needs at least 1 branch")
	}
	sigs := make([]regionSig, len(in.Regions))
	for i := range sigs {
		sigs[i] = regionSig{name: fmt.Sprintf("case branch %d region", i), params: carried[1:], rets: res,
			paramOf: "branch operand", retOf: "result"}
	}
	return sigs, nil
}

// controlCheck verifies the regions of while and case instructions,
// recursively: each region is checked with its own set of local values, so
// a nested region cannot reach its parent's values either.
type controlCheck struct {
	m      *Module
	f      *Func
	n      *namer
	define func(*Value) // marks a value defined in the function (IDs are unique across regions)
	errs   []*Error
}

func (cc *controlCheck) bad(pos Pos, format string, args ...any) {
	if !pos.Known() {
		pos = cc.f.Pos
	}
	cc.errs = append(cc.errs, Errorf(pos, format, args...))
}

// control checks one while or case instruction's regions.
func (cc *controlCheck) control(in *Instr) {
	sigs, err := controlSigs(in)
	if err != nil {
		cc.bad(in.Pos, "%v", err)
		return
	}
	for i, r := range in.Regions {
		if r.Parent != in {
			cc.bad(in.Pos, "internal: %s region does not point back to it", in.Op)
		}
		cc.region(in, r, sigs[i])
	}
}

// region checks one region against its signature: parameters, closedness,
// each instruction, and the return.
func (cc *controlCheck) region(in *Instr, r *Block, sig regionSig) {
	pos := in.Pos
	if len(r.Params) > 0 && r.Params[0].Pos.Known() {
		pos = r.Params[0].Pos
	}
	if len(r.Params) != len(sig.params) {
		cc.bad(pos, "%s has %s, but %s", sig.name, plural(len(r.Params), "parameter"), countOf(len(sig.params), sig.paramOf))
		return
	}
	local := map[int]bool{}
	for i, p := range r.Params {
		if !p.Type.Equal(sig.params[i]) && !(sig.anyLayout && p.Type.DType == sig.params[i].DType && p.Type.SameShape(sig.params[i])) {
			cc.bad(p.Pos, "%s parameter %s is %s, but %s %d is %s", sig.name, cc.n.ref(p), p.Type, sig.paramOf, i, sig.params[i])
		}
		cc.define(p)
		local[p.ID] = true
	}
	for i, x := range r.Instrs {
		cc.instr(in, r, sig, local, i, x)
	}
	if r.Terminator() == nil {
		cc.bad(pos, "%s does not end with return", sig.name)
	}
}

func countOf(n int, what string) string {
	if n == 1 {
		return "there is 1 " + what
	}
	return fmt.Sprintf("there are %d %ss", n, what)
}

// instr checks instruction i of a control region.
func (cc *controlCheck) instr(in *Instr, r *Block, sig regionSig, local map[int]bool, i int, x *Instr) {
	for _, a := range x.Args {
		switch {
		case a != nil && local[a.ID]:
		case a != nil && a.ID >= 0 && a.ID < cc.f.NumValues() && isOuter(a, r):
			cc.bad(x.Pos, "%s uses %s from outside its region", sig.name, cc.n.ref(a))
		default:
			name := "a value"
			if a != nil {
				name = cc.n.ref(a)
			}
			cc.bad(x.Pos, "%s uses %s before it is defined", x.Op, name)
		}
	}
	if x.Block != r {
		cc.bad(x.Pos, "internal: %s in a %s region does not point back to it", x.Op, in.Op)
	}
	if x.Op == OpReturn {
		cc.ret(r, sig, i, x)
		return
	}
	if err := checkTypes(cc.m, x); err != nil {
		cc.bad(x.Pos, "%v", err)
	}
	switch {
	case IsControl(x.Op) || x.Op == OpSort:
		cc.control(x)
	case x.Op == OpFusion || len(x.Regions) > 0:
		cc.errs = append(cc.errs, verifyRegions(cc.m, cc.f, cc.n, x)...)
	}
	for _, res := range x.Results {
		if res.Def != x {
			cc.bad(x.Pos, "internal: result of %s does not point back to it", x.Op)
		}
		cc.define(res)
		local[res.ID] = true
	}
}

// ret checks a region's return: last, and of the region's return types.
func (cc *controlCheck) ret(r *Block, sig regionSig, i int, x *Instr) {
	if i != len(r.Instrs)-1 {
		cc.bad(x.Pos, "return must be the last instruction of a %s", sig.name)
	}
	if len(x.Args) != len(sig.rets) {
		cc.bad(x.Pos, "%s returns %s, but it must return %s", sig.name, plural(len(x.Args), "value"), plural(len(sig.rets), "value"))
		return
	}
	for j, a := range x.Args {
		if a == nil || a.Type.Equal(sig.rets[j]) {
			continue
		}
		if sig.retOf == "i1[] condition" {
			// A condition is a scalar: any layout a target gives it will do.
			if a.Type.DType != I1 || a.Type.Rank() != 0 {
				cc.bad(x.Pos, "%s returns %s, but it must return i1[]", sig.name, a.Type)
			}
			continue
		}
		cc.bad(x.Pos, "%s returns %s as %s %d, but the %s is %s", sig.name, a.Type, sig.retOf, j, sig.retOf, sig.rets[j])
	}
}
