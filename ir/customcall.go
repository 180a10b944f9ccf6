package ir

import (
	"fmt"
	"strings"
)

// CustomCallAttr is custom_call's attribute: printed as
// custom_call @target(%a, ...) {backend_config="...", ...} : T, ...
// The target is the callee position's name; the rest are fields.
type CustomCallAttr struct {
	Target string
	// BackendConfig is passed through byte for byte (a Pallas kernel's
	// serialized Mosaic module, for one).
	BackendConfig string
	HasSideEffect bool
	APIVersion    int64 // 0 when not written
	// OperandLayouts and ResultLayouts are minor-to-major orders, one per
	// operand or result; nil when not written.
	OperandLayouts [][]int64
	ResultLayouts  [][]int64
	// Fallback names a function of the module with the call's signature that
	// computes the same results where the target's kernel cannot run.
	Fallback string
	// Cost is the call's flops for the cost model; HasCost says it was written.
	Cost    int64
	HasCost bool
}

func (a *CustomCallAttr) Fields() []AttrField {
	var fs []AttrField
	str := func(name, s string) {
		fs = append(fs, AttrField{Name: name, Value: AttrValue{Kind: AttrString, Str: s}})
	}
	if a.BackendConfig != "" {
		str("backend_config", a.BackendConfig)
	}
	if a.HasSideEffect {
		fs = append(fs, AttrField{Name: "has_side_effect", Value: AttrValue{Kind: AttrBool, Bool: true}})
	}
	if a.APIVersion != 0 {
		fs = append(fs, intField("api_version", a.APIVersion))
	}
	layouts := func(name string, ls [][]int64) {
		if ls == nil {
			return
		}
		l := make([]AttrValue, len(ls))
		for i, x := range ls {
			l[i] = intsValue(x)
		}
		fs = append(fs, AttrField{Name: name, Value: AttrValue{Kind: AttrList, List: l}})
	}
	layouts("operand_layouts", a.OperandLayouts)
	layouts("result_layouts", a.ResultLayouts)
	if a.Fallback != "" {
		fs = append(fs, AttrField{Name: "fallback", Value: AttrValue{Kind: AttrIdent, Str: "@" + a.Fallback}})
	}
	if a.HasCost {
		fs = append(fs, intField("cost", a.Cost))
	}
	return sortFields(fs)
}

func decodeCustomCall(r *attrReader) Attr {
	a := &CustomCallAttr{HasSideEffect: r.bool("has_side_effect")}
	if f, ok := r.get("backend_config", false); ok {
		if f.Value.Kind != AttrString {
			r.errorf(f.Pos, "attribute 'backend_config' of custom_call must be a string, got %s", f.Value)
		}
		a.BackendConfig = f.Value.Str
	}
	if _, ok := r.fields["api_version"]; ok {
		a.APIVersion = r.int("api_version")
	}
	r.used["api_version"] = true
	a.OperandLayouts = r.layouts("operand_layouts")
	a.ResultLayouts = r.layouts("result_layouts")
	if f, ok := r.get("fallback", false); ok {
		if f.Value.Kind != AttrIdent || !strings.HasPrefix(f.Value.Str, "@") {
			r.errorf(f.Pos, "attribute 'fallback' of custom_call must be a function, @name, got %s", f.Value)
		}
		a.Fallback = strings.TrimPrefix(f.Value.Str, "@")
	}
	if _, ok := r.fields["cost"]; ok {
		a.Cost, a.HasCost = r.int("cost"), true
		if a.Cost < 0 {
			r.errorf(r.fields["cost"].Pos, "attribute 'cost' of custom_call must be at least 0, got %d", a.Cost)
		}
	}
	r.used["cost"] = true
	return a
}

// layouts reads an optional list of integer lists.
func (r *attrReader) layouts(name string) [][]int64 {
	f, ok := r.get(name, false)
	if !ok {
		return nil
	}
	bad := func() [][]int64 {
		r.errorf(f.Pos, "attribute '%s' of custom_call must be a list of integer lists, got %s", name, f.Value)
		return nil
	}
	if f.Value.Kind != AttrList {
		return bad()
	}
	out := make([][]int64, 0, len(f.Value.List))
	for _, e := range f.Value.List {
		if e.Kind != AttrList {
			return bad()
		}
		l := make([]int64, 0, len(e.List))
		for _, x := range e.List {
			if x.Kind != AttrInt {
				return bad()
			}
			l = append(l, x.Int)
		}
		out = append(out, l)
	}
	return out
}

// inferCustomCall: the results are what is written; the layouts, when
// written, must be permutations of each operand's and result's dimensions.
func inferCustomCall(c *inferCtx) []Type {
	a, ok := c.attr.(*CustomCallAttr)
	if !ok {
		return c.fail("custom_call has no target")
	}
	if !tirName(a.Target) {
		return c.fail("custom_call target %q cannot be written in .tir: a target is letters, digits, '_' and '.', not starting with a digit", a.Target)
	}
	if c.hint == nil {
		return c.fail("custom_call @%s needs its result types written after ':'", a.Target)
	}
	if err := checkLayouts("operand", a.OperandLayouts, c.args); err != nil {
		return c.fail("custom_call @%s: %v", a.Target, err)
	}
	if err := checkLayouts("result", a.ResultLayouts, c.hint); err != nil {
		return c.fail("custom_call @%s: %v", a.Target, err)
	}
	return c.hint
}

// tirName reports whether s can follow '@' in .tir (the lexer's Global).
func tirName(s string) bool {
	for i, r := range s {
		letter := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r != '.' && (r < '0' || r > '9')) {
			return false
		}
	}
	return s != ""
}

func checkLayouts(what string, ls [][]int64, ts []Type) error {
	if ls == nil {
		return nil
	}
	if len(ls) != len(ts) {
		return fmt.Errorf("%d %s layouts for %s", len(ls), what, plural(len(ts), what))
	}
	for i, l := range ls {
		seen := make([]bool, ts[i].Rank())
		bad := len(l) != ts[i].Rank()
		for _, d := range l {
			if bad || d < 0 || int(d) >= len(seen) || seen[d] {
				return fmt.Errorf("%s layout %d %v is not a permutation of the dimensions of %s", what, i, l, ts[i])
			}
			seen[d] = true
		}
	}
	return nil
}

// checkCustomCall checks a custom_call's fallback against the module: the
// function must exist and take and return the call's types.
func checkCustomCall(m *Module, in *Instr, args, res []Type) error {
	if _, err := Infer(in.Op, args, in.Attr, res); err != nil {
		return err
	}
	a := in.Attr.(*CustomCallAttr)
	if a.Fallback == "" || m == nil {
		return nil
	}
	g := m.Func(a.Fallback)
	if g == nil {
		return fmt.Errorf("custom_call @%s: fallback @%s is not a function of the module", a.Target, a.Fallback)
	}
	sig := func(ps []Type, rs []Type) string {
		var b strings.Builder
		b.WriteByte('(')
		writeTypes(&b, ps)
		b.WriteString(") -> (")
		writeTypes(&b, rs)
		b.WriteByte(')')
		return b.String()
	}
	params := make([]Type, len(g.Params))
	for i, p := range g.Params {
		params[i] = p.Type
	}
	if !typesEqual(params, args) || !typesEqual(g.Results, res) {
		return fmt.Errorf("custom_call @%s is %s, but its fallback @%s is %s", a.Target, sig(args, res), g.Name, sig(params, g.Results))
	}
	return nil
}

// typesEqual compares dtypes and shapes, not layouts: assign-layout gives
// the call's values a target's layouts, and the fallback keeps its own.
func typesEqual(a, b []Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].WithShape(a[i].Shape).Equal(b[i].WithShape(b[i].Shape)) {
			return false
		}
	}
	return true
}

// HasSideEffects reports whether in does more than compute its results: the
// op's table entry says so, or a custom_call is marked has_side_effect. cse,
// dce and licm ask it, so such an instruction is neither merged, dropped nor moved.
func HasSideEffects(in *Instr) bool {
	if a, ok := in.Attr.(*CustomCallAttr); ok && a.HasSideEffect {
		return true
	}
	return in.Op.Info().SideEffects
}

// CustomCallFallback returns the function a backend without in's kernel runs
// in its place, or the refusal, at in's position, that names the target.
func CustomCallFallback(m *Module, in *Instr) (*Func, error) {
	a, ok := in.Attr.(*CustomCallAttr)
	if !ok {
		return nil, Errorf(in.Pos, "custom_call has no target")
	}
	if a.Fallback == "" {
		return nil, Errorf(in.Pos, "custom_call @%s has no fallback: it runs only on a backend that has the kernel", a.Target)
	}
	var g *Func
	if m != nil {
		g = m.Func(a.Fallback)
	}
	if g == nil {
		return nil, Errorf(in.Pos, "custom_call @%s: fallback @%s is not a function of the module", a.Target, a.Fallback)
	}
	return g, nil
}
