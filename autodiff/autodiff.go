// Package autodiff turns a function into its vector-Jacobian product (reverse-mode
// differentiation) as an IR-to-IR transform. It runs on unfused IR, before the fuse pass:
// the VJP rules (rules.go) are written per op of the table, composites kept whole.
package autodiff

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// maxInlineDepth bounds call inlining: a deeper chain is taken for recursion.
const maxInlineDepth = 64

// Module returns a new module whose only function is @<entry>_vjp: the parameters of
// m's entry, then one cotangent per float result, in order; it returns the entry's
// results, then one gradient per float parameter, in parameter order. Integer and i1
// parameters get no gradient and integer results take no cotangent. Calls are
// differentiated through their callees, which are inlined.
func Module(m *ir.Module) (*ir.Module, error) {
	f := m.Entry()
	if f == nil {
		return nil, ir.Errorf(ir.Pos{File: m.File}, "the program has no function to differentiate")
	}
	return ModuleOf(f)
}

// ModuleOf is Module with f, a function of its module, as the entry.
func ModuleOf(f *ir.Func) (*ir.Module, error) { return ModuleOfWith(f, Options{}) }

// Options choose how the VJP trades memory for work.
type Options struct {
	// Remat: the reverse of a counted while recomputes each iteration's
	// forward from the carried values saved per iteration (as jax.checkpoint
	// around a scan's body), instead of reading the body's residuals, which
	// the forward loop then stacks per iteration (as JAX's scan does by
	// default): less memory, a second forward of the body's work.
	Remat bool
}

// ModuleOfWith is ModuleOf with options.
func ModuleOfWith(f *ir.Func, o Options) (*ir.Module, error) {
	out := ir.NewModule(f.Module.File)
	// The meshes that sharding_constraints name stay declared.
	out.Meshes = f.Module.Meshes
	if _, err := VJPWith(out, f, o); err != nil {
		return nil, err
	}
	if err := ir.Verify(out); err != nil {
		panic(fmt.Sprintf("autodiff: the VJP of @%s does not verify: %v", f.Name, err))
	}
	return out, nil
}

// VJP adds @<f>_vjp to out and returns it (see Module for its signature).
func VJP(out *ir.Module, f *ir.Func) (*ir.Func, error) { return VJPWith(out, f, Options{}) }

// VJPWith is VJP with options.
func VJPWith(out *ir.Module, f *ir.Func, o Options) (*ir.Func, error) {
	if err := checkStatic(f); err != nil {
		return nil, err
	}
	if err := checkReal(f); err != nil {
		return nil, err
	}
	var names []string
	var types []ir.Type
	for _, p := range f.Params {
		names = append(names, p.Name)
		types = append(types, plain(p.Type))
	}
	var results []ir.Type
	for _, t := range f.Results {
		results = append(results, plain(t))
	}
	var cts []int // indices of the results that take a cotangent
	for i, t := range f.Results {
		if t.DType.IsFloat() {
			cts = append(cts, i)
			names = append(names, fmt.Sprintf("ct%d", i))
			types = append(types, plain(t))
		}
	}
	for _, p := range f.Params {
		if p.Type.DType.IsFloat() {
			results = append(results, plain(p.Type))
		}
	}
	g := out.NewFunc(f.Name+"_vjp", names, types, results, f.Pos)
	t := &tape{b: ir.NewBuilder(g), cts: map[*ir.Value]*ir.Value{}, ctl: map[*ir.Instr]*control{}, saving: true, opts: o}
	vals := map[*ir.Value]*ir.Value{}
	for i, p := range f.Params {
		vals[p] = g.Params[i]
	}
	fwd, err := t.clone(f, vals, 0)
	if err != nil {
		return nil, err
	}
	for k, i := range cts {
		t.accumulate(fwd[i], g.Params[len(f.Params)+k])
	}
	if err := t.backward(); err != nil {
		return nil, err
	}
	rets := append([]*ir.Value{}, fwd...)
	t.b.Pos = f.Pos
	for i, p := range f.Params {
		if p.Type.DType.IsFloat() {
			rets = append(rets, t.ctOrZero(g.Params[i]))
		}
	}
	t.b.Return(rets...)
	return g, nil
}

// plain drops a layout: autodiff runs before layouts are assigned.
func plain(t ir.Type) ir.Type { return t.WithShape(t.Shape) }

// checkReal refuses a function with a complex parameter or result, which
// would otherwise get no cotangent, as integers do, silently.
func checkReal(f *ir.Func) error {
	for _, p := range f.Params {
		if p.Type.DType.IsComplex() {
			return ir.Errorf(p.Pos, "cannot differentiate @%s: parameter %%%s is %s; %s", f.Name, p.Name, p.Type, complexRefused)
		}
	}
	for i, t := range f.Results {
		if t.DType.IsComplex() {
			return ir.Errorf(f.Pos, "cannot differentiate @%s: result %d is %s; %s", f.Name, i, t, complexRefused)
		}
	}
	return nil
}

func checkStatic(f *ir.Func) error {
	for _, p := range f.Params {
		if !p.Type.IsStatic() {
			return ir.Errorf(p.Pos, "cannot differentiate @%s: parameter %%%s has the symbolic type %s; give its sizes (--dim)", f.Name, p.Name, p.Type)
		}
	}
	return nil
}

// tape is the forward program as cloned into the VJP function, and the cotangent of
// each of its values.
type tape struct {
	b      *ir.Builder
	instrs []*ir.Instr // forward instructions in order
	cts    map[*ir.Value]*ir.Value
	ctl    map[*ir.Instr]*control // the while and case instructions among instrs
	// saving: the tape's backward will run, so its counted loops save their carries
	// (false for the forward copies of regions, which the backward re-clones).
	saving bool
	opts   Options
}

// clone copies f's body into the tape's function with vals binding f's parameters,
// inlining calls, and returns the values f returns.
func (t *tape) clone(f *ir.Func, vals map[*ir.Value]*ir.Value, depth int) ([]*ir.Value, error) {
	if depth > maxInlineDepth {
		return nil, ir.Errorf(f.Pos, "cannot differentiate @%s: calls nest deeper than %d (recursion?)", f.Name, maxInlineDepth)
	}
	for _, in := range f.Body.Instrs {
		args := make([]*ir.Value, len(in.Args))
		for i, a := range in.Args {
			args[i] = vals[a]
		}
		switch in.Op {
		case ir.OpReturn:
			return args, nil
		case ir.OpCall:
			callee := f.Module.Func(in.Attr.(*ir.CallAttr).Callee)
			inner := map[*ir.Value]*ir.Value{}
			for i, p := range callee.Params {
				inner[p] = args[i]
			}
			res, err := t.clone(callee, inner, depth+1)
			if err != nil {
				return nil, err
			}
			for i, r := range in.Results {
				vals[r] = res[i]
			}
			continue
		case ir.OpFusion:
			return nil, ir.Errorf(in.Pos, "cannot differentiate fusion: autodiff runs on unfused IR, before the fuse pass")
		case ir.OpCustomCall:
			// Refused here, not at its VJP: the tape's module has no fallback to verify against.
			return nil, ir.Errorf(in.Pos, "cannot differentiate custom_call @%s: %s", in.Attr.(*ir.CustomCallAttr).Target, rules[in.Op].refused)
		case ir.OpWhile, ir.OpCase:
			c, err := t.cloneControl(f, in, args, depth)
			if err != nil {
				return nil, err
			}
			for i, r := range in.Results {
				c.Results[i].Name = r.Name
				vals[r] = c.Results[i]
			}
			t.b.Block.Append(c)
			t.instrs = append(t.instrs, c)
			continue
		}
		if !in.Op.Info().Elementwise || in.Op == ir.OpCopy {
			for _, r := range in.Results {
				if !r.Type.IsStatic() {
					return nil, ir.Errorf(in.Pos, "cannot differentiate @%s: %s has the symbolic type %s", f.Name, in.Op, r.Type)
				}
			}
		}
		var types []ir.Type
		for _, r := range in.Results {
			types = append(types, plain(r.Type))
		}
		c := t.b.F.NewInstr(in.Op, in.Attr, args, types, in.Pos)
		for i, r := range in.Results {
			c.Results[i].Name = r.Name
			vals[r] = c.Results[i]
		}
		t.b.Block.Append(c)
		t.instrs = append(t.instrs, c)
	}
	panic(fmt.Sprintf("autodiff: @%s has no return", f.Name))
}

// accumulate adds ct to v's cotangent.
func (t *tape) accumulate(v, ct *ir.Value) {
	if ct == nil || !v.Type.DType.IsFloat() {
		return
	}
	if ct.Type.DType != v.Type.DType || !ct.Type.SameShape(v.Type) {
		panic(fmt.Sprintf("autodiff: cotangent %s for a value of type %s", ct.Type, v.Type))
	}
	if old := t.cts[v]; old != nil {
		ct = t.b.Op1(ir.OpAdd, nil, old, ct)
	}
	t.cts[v] = ct
}

func (t *tape) ctOrZero(v *ir.Value) *ir.Value {
	if ct := t.cts[v]; ct != nil {
		return ct
	}
	return t.b.Const(v.Type, 0)
}

// complexRefused is why complex values stop differentiation: the rules are
// real ones, and no convention for complex cotangents (JAX's conjugated one,
// or Wirtinger derivatives) is chosen yet.
const complexRefused = "complex values are not differentiated yet (the rules are real; no convention for complex cotangents is chosen)"

// touchesComplex reports whether an operand or result of in is complex.
func touchesComplex(in *ir.Instr) bool {
	for _, vs := range [][]*ir.Value{in.Args, in.Results} {
		for _, v := range vs {
			if v.Type.DType.IsComplex() {
				return true
			}
		}
	}
	return false
}

// backward walks the tape in reverse, applying each instruction's rule where one of its
// results has a cotangent.
func (t *tape) backward() error {
	for i := len(t.instrs) - 1; i >= 0; i-- {
		in := t.instrs[i]
		g := make([]*ir.Value, len(in.Results))
		any := false
		for j, r := range in.Results {
			g[j] = t.cts[r]
			any = any || g[j] != nil
		}
		if !any {
			continue
		}
		t.b.Pos = in.Pos
		if ctl := t.ctl[in]; ctl != nil {
			cts, err := t.controlVJP(in, ctl, g)
			if err != nil {
				return err
			}
			t.accumulateAll(in, cts)
			continue
		}
		r := rules[in.Op]
		if r.vjp != nil && touchesComplex(in) {
			return ir.Errorf(in.Pos, "cannot differentiate %s: %s", in.Op, complexRefused)
		}
		if r.vjp == nil {
			if r.refused != "" {
				return ir.Errorf(in.Pos, "cannot differentiate %s: %s", in.Op, r.refused)
			}
			continue // not differentiable: nothing flows back
		}
		if why := Refused(in); why != "" && r.vjp != nil {
			return ir.Errorf(in.Pos, "cannot differentiate %s: %s", in.Op, why)
		}
		t.b.Pos = in.Pos
		if in.Op == ir.OpDynamicSlice && t.cts[in.Args[0]] != nil {
			t.accumulateSlice(in, g[0])
			continue
		}
		t.accumulateAll(in, r.vjp(&emitter{b: t.b}, in, g))
	}
	return nil
}

// accumulateSlice adds g, the cotangent of a dynamic_slice of x, into x's cotangent
// where the slice was read: dynamic_update_slice of the window plus g into the
// cotangent so far, the same numbers as adding the rule's zeros with g in the window
// (the starts clamp alike for both). A loop reading one layer's weights from their
// stack per iteration so adds each layer's gradient into the stack's cotangent row,
// which the backend updates in place, instead of storing a stack of zeros and adding
// all of it per iteration.
func (t *tape) accumulateSlice(in *ir.Instr, g *ir.Value) {
	x, starts := in.Args[0], in.Args[1:]
	old := t.cts[x]
	win := t.b.Op1(ir.OpDynamicSlice, in.Attr, append([]*ir.Value{old}, starts...)...)
	sum := t.b.Op1(ir.OpAdd, nil, win, g)
	t.cts[x] = t.b.Op1(ir.OpDynamicUpdateSlice, nil, append([]*ir.Value{old, sum}, starts...)...)
}

// accumulateAll adds cts[j] to the cotangent of in's operand j.
func (t *tape) accumulateAll(in *ir.Instr, cts []*ir.Value) {
	for j, ct := range cts {
		if ct != nil && j < len(in.Args) {
			t.accumulate(in.Args[j], ct)
		}
	}
}
