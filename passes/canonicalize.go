package passes

import (
	"fmt"
	"math"

	"github.com/tpucc/tpucc/ir"
)

// maxCanonicalizeRounds caps the sweeps over a function. A rule only makes
// later instructions (its users) simplifiable, and those come later in the
// same sweep, so real programs settle in two or three; reaching the cap means
// two rules undo each other, which is a bug in the rule table.
const maxCanonicalizeRounds = 16

// rule is one rewrite of the canonicalize table. fn returns the value that
// replaces in's result, or nil when the rule does not match; it is tried only
// on instructions with one result. A rule rooted at a multi-result op (top_k)
// sets multi instead, which returns one replacement per result. Either may
// build new instructions (before in, through r.builder) only when it
// matches. Its Pattern comment, beside the function, is the spec.
type rule struct {
	name  string
	ops   []ir.Op // the root ops it is tried on
	fn    func(r *rewriter, in *ir.Instr) *ir.Value
	multi func(r *rewriter, in *ir.Instr) []*ir.Value
}

// canonicalRules is the whole table, in the order rules are tried on one
// instruction: identities first, so that add(0, X) becomes X directly rather
// than being commuted first.
var canonicalRules = concatRules(arithmeticRules, logicRules, shapeRules, orderRules, controlRules)

// canonicalIndex holds, per op, the rules rooted at it.
var canonicalIndex = indexRules(canonicalRules)

func concatRules(groups ...[]rule) []rule {
	var out []rule
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func indexRules(rules []rule) [][]rule {
	idx := make([][]rule, len(ir.Ops())+1)
	for _, ru := range rules {
		for _, op := range ru.ops {
			idx[op] = append(idx[op], ru)
		}
	}
	return idx
}

// canonicalize sweeps f, trying the rules of each live instruction's op in
// order and applying the first that matches, until a sweep changes nothing.
// Replaced instructions stay in place, dead, for dce.
func canonicalize(f *ir.Func, c *Context) (bool, error) {
	return sweepRules(f, c, "canonicalize", canonicalIndex)
}

// sweepRules is the fixed-point loop of canonicalize over the rule table idx
// (indexRules), shared by the passes that are rule tables (contract).
func sweepRules(f *ir.Func, c *Context, pass string, idx [][]rule) (bool, error) {
	changed := false
	for round := 0; round < maxCanonicalizeRounds; round++ {
		uses := f.UseCounts()
		fired := false
		// New instructions land before the one being rewritten; they are
		// looked at in the next sweep.
		s := newSweep(f)
		for _, in := range s.instrs {
			if live(in, uses) {
				for _, ru := range idx[in.Op] {
					if applyRule(s, c, ru, in) {
						fired = true
						break
					}
				}
			}
			s.place(in)
		}
		s.done()
		if !fired {
			return changed, nil
		}
		changed = true
	}
	return changed, fmt.Errorf("%s did not reach a fixed point in %d rounds", pass, maxCanonicalizeRounds)
}

// live reports whether some result of in is used (by an instruction or the
// return); uses was counted before in's sweep began.
func live(in *ir.Instr, uses []int) bool {
	for _, v := range in.Results {
		if v.ID < len(uses) && uses[v.ID] > 0 {
			return true
		}
	}
	return false
}

func applyRule(s *sweep, c *Context, ru rule, in *ir.Instr) bool {
	f := s.f
	r := &rewriter{s: s, at: in}
	mark := f.NumInstrs()
	var vs []*ir.Value
	switch {
	case ru.multi != nil:
		vs = ru.multi(r, in)
	case len(in.Results) == 1:
		if v := ru.fn(r, in); v != nil {
			vs = []*ir.Value{v}
		}
	}
	if vs == nil {
		if f.NumInstrs() != mark {
			panic(fmt.Sprintf("canonicalize: rule %s built instructions but did not match", ru.name))
		}
		return false
	}
	if len(vs) != len(in.Results) {
		panic(fmt.Sprintf("canonicalize: rule %s gave %d values for the %d results of %s", ru.name, len(vs), len(in.Results), in.Op))
	}
	for i, v := range vs {
		old := in.Results[i]
		if v == old || !v.Type.Equal(old.Type) {
			panic(fmt.Sprintf("canonicalize: rule %s replaced a %s with a %s", ru.name, old.Type, v.Type))
		}
		if v.Def != nil && v.Def.ID >= mark && v.Name == "" {
			v.Name, old.Name = old.Name, "" // a rebuilt value takes over the source name, for readable dumps
		}
		s.replace(old, v)
	}
	c.Count(ru.name)
	return true
}

// rewriter is what a rule builds with: a builder inserting just before the
// matched instruction, made on first use.
type rewriter struct {
	s  *sweep
	at *ir.Instr
	b  *ir.Builder
}

func (r *rewriter) builder() *ir.Builder {
	if r.b == nil {
		r.b = r.s.builder(r.at)
	}
	return r.b
}

// splat builds a value of type t with every element x (integer and i1 types
// only: the rules never make float constants). A constant needs a static type,
// so a symbolic t gets a scalar constant broadcast to it.
func (r *rewriter) splat(t ir.Type, x int64) *ir.Value {
	b := r.builder()
	if t.IsStatic() {
		return b.Typed(ir.OpConstant, &ir.ConstAttr{Value: ir.NewIntLiteral(t, []int64{x})}, &t)
	}
	s := ir.Scalar(t.DType)
	c := b.Typed(ir.OpConstant, &ir.ConstAttr{Value: ir.NewIntLiteral(s, []int64{x})}, &s)
	return b.Typed(ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, &t, c)
}

// sameType returns v if it can stand for in's result: the same type,
// layout included. Rules that forward an operand go through it.
func sameType(v *ir.Value, in *ir.Instr) *ir.Value {
	if v.Type.Equal(in.Result().Type) {
		return v
	}
	return nil
}

// literal returns the elements of v when v is defined by a constant.
func literal(v *ir.Value) (*ir.Literal, bool) {
	if v.Def == nil || v.Def.Op != ir.OpConstant {
		return nil, false
	}
	a, ok := v.Def.Attr.(*ir.ConstAttr)
	if !ok || a.Value == nil || a.Value.Len() == 0 {
		return nil, false
	}
	return a.Value, true
}

func isConstant(v *ir.Value) bool {
	_, ok := literal(v)
	return ok
}

// splatLiteral returns the literal of v when v is a constant whose elements
// are all equal (bit for bit, for floats).
func splatLiteral(v *ir.Value) (*ir.Literal, bool) {
	l, ok := literal(v)
	if !ok {
		return nil, false
	}
	for i := 1; i < l.Len(); i++ {
		if l.Floats != nil && math.Float64bits(l.Floats[i]) != math.Float64bits(l.Floats[0]) ||
			l.Ints != nil && l.Ints[i] != l.Ints[0] ||
			l.Complex != nil && !sameComplexBits(l.Complex[i], l.Complex[0]) {
			return nil, false
		}
	}
	return l, true
}

// isFloatSplat reports whether v is a float constant with every element
// exactly x, sign of zero included (isFloatSplat(v, math.Copysign(0, -1))
// matches only -0.0).
func isFloatSplat(v *ir.Value, x float64) bool {
	l, ok := splatLiteral(v)
	return ok && l.Floats != nil && math.Float64bits(l.Floats[0]) == math.Float64bits(x)
}

// isIntSplat reports whether v is an integer or i1 constant with every element x.
func isIntSplat(v *ir.Value, x int64) bool {
	l, ok := splatLiteral(v)
	return ok && l.Ints != nil && l.Ints[0] == x
}

// isIdentity reports whether p is 0, 1, ..., len(p)-1.
func isIdentity(p []int64) bool {
	for i, x := range p {
		if x != int64(i) {
			return false
		}
	}
	return true
}
