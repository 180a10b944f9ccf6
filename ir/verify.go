package ir

import (
	"fmt"
	"sort"
)

// Verify checks every function of m and reports every problem at once,
// each positioned, sorted by position: values used before they are defined or
// from another function, result types that disagree with the op's type rule,
// calls to unknown functions or with the wrong signature, recursion, a missing
// or misplaced return and return types that do not match the signature.
func Verify(m *Module) error {
	var errs []*Error
	seen := map[string]*Func{}
	for _, f := range m.Funcs {
		if g, dup := seen[f.Name]; dup {
			errs = append(errs, Errorf(f.Pos, "function @%s is already defined at %s", f.Name, g.Pos))
			continue
		}
		seen[f.Name] = f
	}
	for _, f := range m.Funcs {
		errs = append(errs, verifyFunc(m, f)...)
	}
	errs = append(errs, checkRecursion(m)...)
	errs = append(errs, verifyShardings(m)...)
	errs = append(errs, verifyReplicas(m)...)
	sort.SliceStable(errs, func(i, j int) bool { return posLess(errs[i].Pos, errs[j].Pos) })
	return joinErrors(errs)
}

// VerifyFunc checks one function (calls are checked against f.Module when set).
func VerifyFunc(f *Func) error {
	return joinErrors(verifyFunc(f.Module, f))
}

func posLess(a, b Pos) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

func verifyFunc(m *Module, f *Func) []*Error {
	var errs []*Error
	bad := func(pos Pos, format string, args ...any) {
		if !pos.Known() {
			pos = f.Pos
		}
		errs = append(errs, Errorf(pos, format, args...))
	}
	defined := make([]bool, f.NumValues())
	define := func(v *Value) {
		if v.ID < 0 || v.ID >= len(defined) {
			bad(v.Pos, "internal: value ID %d out of range in @%s", v.ID, f.Name)
			return
		}
		if defined[v.ID] {
			bad(v.Pos, "internal: value ID %d defined twice in @%s", v.ID, f.Name)
		}
		defined[v.ID] = true
	}
	for _, p := range f.Params {
		define(p)
	}
	n := newNamer(f)
	cc := &controlCheck{m: m, f: f, n: n, define: define}
	body := f.Body
	for i, in := range body.Instrs {
		for _, a := range in.Args {
			if a == nil || a.ID < 0 || a.ID >= len(defined) || !defined[a.ID] {
				name := "a value"
				if a != nil {
					name = n.ref(a)
				}
				bad(in.Pos, "%s uses %s before it is defined", in.Op, name)
			}
		}
		if in.Op == OpReturn {
			if i != len(body.Instrs)-1 {
				bad(in.Pos, "return must be the last instruction of @%s", f.Name)
			}
			errs = append(errs, checkReturn(f, in)...)
			continue
		}
		if err := checkTypes(m, in); err != nil {
			bad(in.Pos, "%v", err)
		}
		switch {
		case IsControl(in.Op) || in.Op == OpSort:
			cc.control(in)
		case in.Op == OpFusion || len(in.Regions) > 0:
			errs = append(errs, verifyRegions(m, f, n, in)...)
		}
		for _, r := range in.Results {
			if r.Def != in {
				bad(in.Pos, "internal: result of %s does not point back to it", in.Op)
			}
			define(r)
		}
	}
	if body.Terminator() == nil {
		bad(f.Pos, "function @%s does not end with return", f.Name)
	}
	return append(errs, cc.errs...)
}

func checkReturn(f *Func, ret *Instr) []*Error {
	if len(ret.Args) != len(f.Results) {
		return []*Error{Errorf(ret.Pos, "@%s returns %s, but its signature has %s",
			f.Name, plural(len(ret.Args), "value"), plural(len(f.Results), "result"))}
	}
	var errs []*Error
	for i, a := range ret.Args {
		if a != nil && !a.Type.Equal(f.Results[i]) {
			errs = append(errs, Errorf(ret.Pos, "result %d of @%s is %s, but its signature says %s", i, f.Name, a.Type, f.Results[i]))
		}
	}
	return errs
}

// checkTypes re-derives the instruction's result types and compares them.
func checkTypes(m *Module, in *Instr) error {
	args := make([]Type, len(in.Args))
	for i, a := range in.Args {
		if a == nil {
			return fmt.Errorf("%s has a missing operand", in.Op)
		}
		args[i] = a.Type
	}
	res := make([]Type, len(in.Results))
	for i, r := range in.Results {
		res[i] = r.Type
	}
	if in.Op == OpCall {
		return checkCall(m, in, args, res)
	}
	if in.Op == OpCustomCall && in.Attr != nil {
		return checkCustomCall(m, in, args, res)
	}
	if in.Op.Info().decode != nil || in.Op == OpConstant {
		if in.Attr == nil {
			return fmt.Errorf("%s is missing its attributes", in.Op)
		}
	}
	_, err := Infer(in.Op, args, in.Attr, res)
	return err
}

func checkCall(m *Module, in *Instr, args, res []Type) error {
	a, ok := in.Attr.(*CallAttr)
	if !ok {
		return fmt.Errorf("call has no callee")
	}
	if m == nil {
		return nil
	}
	g := m.Func(a.Callee)
	if g == nil {
		return fmt.Errorf("call to undefined function @%s", a.Callee)
	}
	if len(args) != len(g.Params) {
		return fmt.Errorf("@%s takes %s, got %d", g.Name, plural(len(g.Params), "argument"), len(args))
	}
	for i, t := range args {
		if !t.Equal(g.Params[i].Type) {
			return fmt.Errorf("argument %d of call @%s is %s, but the parameter is %s", i, g.Name, t, g.Params[i].Type)
		}
	}
	if len(res) != len(g.Results) {
		return fmt.Errorf("@%s returns %s, but %d are bound", g.Name, plural(len(g.Results), "value"), len(res))
	}
	for i, t := range res {
		if !t.Equal(g.Results[i]) {
			return fmt.Errorf("result %d of call @%s is written %s, but @%s returns %s", i, g.Name, t, g.Name, g.Results[i])
		}
	}
	return nil
}

// checkRecursion reports call cycles: tensor programs here have no recursion.
func checkRecursion(m *Module) []*Error {
	const (
		white = iota
		grey
		black
	)
	color := map[*Func]int{}
	var errs []*Error
	var visit func(f *Func)
	visit = func(f *Func) {
		color[f] = grey
		f.Body.Walk(func(in *Instr) {
			a, ok := in.Attr.(*CallAttr)
			if !ok {
				return
			}
			g := m.Func(a.Callee)
			switch {
			case g == nil:
			case color[g] == grey:
				errs = append(errs, Errorf(in.Pos, "call @%s from @%s is recursive", g.Name, f.Name))
			case color[g] == white:
				visit(g)
			}
		})
		color[f] = black
	}
	for _, f := range m.Funcs {
		if color[f] == white {
			visit(f)
		}
	}
	return errs
}
