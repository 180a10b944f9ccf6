package tir

import (
	"sort"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/tpucc/tpucc/ir"
)

// Parse reads a .tir file of at most MaxSource bytes and returns its
// verified module, or the problems found, each positioned as FILE:LINE:COL (an *ir.Error, or an *ir.ErrorList in
// source order). After a syntax error only that one is reported; otherwise
// every independent problem is.
func Parse(filename string, src []byte) (*ir.Module, error) {
	if err := checkSize(filename, src); err != nil {
		return nil, err
	}
	if err := checkUTF8(filename, src); err != nil {
		return nil, err
	}
	if err := checkNesting(filename, src); err != nil {
		return nil, err
	}
	ast, err := tirParser.ParseBytes(filename, src)
	if err != nil {
		return nil, syntaxError(filename, src, err)
	}
	if len(ast.Funcs) == 0 {
		return nil, ir.Errorf(ir.Pos{File: filename, Line: 1, Col: 1}, "no functions")
	}
	b := &moduleBuilder{file: filename, m: ir.NewModule(filename), funcs: map[string]*ir.Func{}, badSig: map[*ir.Func]bool{}}
	b.build(ast)
	if len(b.errs) > 0 {
		sort.SliceStable(b.errs, func(i, j int) bool { return posLess(b.errs[i].Pos, b.errs[j].Pos) })
		if len(b.errs) == 1 {
			return nil, b.errs[0]
		}
		return nil, &ir.ErrorList{Errs: b.errs}
	}
	if err := ir.Verify(b.m); err != nil {
		return nil, err
	}
	return b.m, nil
}

func posLess(a, b ir.Pos) bool {
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

// moduleBuilder turns the syntax tree into ir, collecting diagnostics.
type moduleBuilder struct {
	file   string
	m      *ir.Module
	funcs  map[string]*ir.Func // the first definition of each name: what calls refer to
	badSig map[*ir.Func]bool   // signature had errors (already reported): calls to it are not checked
	errs   []*ir.Error
}

func (b *moduleBuilder) pos(p lexer.Position) ir.Pos { return toPos(b.file, p) }

func (b *moduleBuilder) errorf(pos ir.Pos, format string, args ...any) {
	b.errs = append(b.errs, ir.Errorf(pos, format, args...))
}

// addErr records an error that ir already positioned (BuildAttr), or positions it at pos.
func (b *moduleBuilder) addErr(pos ir.Pos, err error) {
	switch e := err.(type) {
	case *ir.Error:
		b.errs = append(b.errs, e)
	case *ir.ErrorList:
		b.errs = append(b.errs, e.Errs...)
	default:
		b.errorf(pos, "%v", err)
	}
}

// build declares every signature first, so calls may refer to functions
// defined later in the file, then builds each body.
func (b *moduleBuilder) build(file *fileAST) {
	b.replicas(file.Replicas)
	b.meshes(file.Meshes)
	fns := make([]*ir.Func, len(file.Funcs))
	for i, fa := range file.Funcs {
		fns[i] = b.declare(fa)
	}
	for i, fa := range file.Funcs {
		fb := &funcBuilder{moduleBuilder: b, f: fns[i], scope: map[string]binding{}, bld: ir.NewBuilder(fns[i])}
		fb.body(fa)
	}
}

func (b *moduleBuilder) declare(fa *funcAST) *ir.Func {
	pos := b.pos(fa.Pos)
	name := fa.Name.Value[1:]
	ok := true
	names := make([]string, len(fa.Params))
	params := make([]ir.Type, len(fa.Params))
	for i, p := range fa.Params {
		names[i] = valueName(p.Name.Value)
		t, tok := b.typ(p.Type)
		ok = ok && tok
		params[i] = t
	}
	results := make([]ir.Type, len(fa.Results))
	for i, r := range fa.Results {
		t, tok := b.typ(r.Type)
		ok = ok && tok
		results[i] = t
	}
	f := b.m.NewFunc(name, names, params, results, pos)
	b.signatureShardings(f, fa)
	for i, p := range fa.Params {
		f.Params[i].Pos = b.pos(p.Name.Pos)
	}
	if prev, dup := b.funcs[name]; dup {
		b.errorf(pos, "function @%s is already defined at %s", name, prev.Pos)
	} else {
		b.funcs[name] = f
	}
	if !ok {
		b.badSig[f] = true
	}
	return f
}

// valueName is the Value.Name a %name token gets: digit-only names are
// numbered by the printer, so they are not kept.
func valueName(tok string) string {
	name := tok[1:]
	for _, r := range name {
		if r < '0' || r > '9' {
			return name
		}
	}
	return ""
}

// binding is what a %name refers to within a function. v is nil for a name
// whose defining instruction had an error (already reported): its uses are
// skipped silently instead of cascading.
type binding struct {
	v   *ir.Value
	pos ir.Pos
}

type funcBuilder struct {
	*moduleBuilder
	f     *ir.Func
	scope map[string]binding
	bld   *ir.Builder
	// Inside a fusion body: the fusion being built and the scope around it,
	// whose names the body may not use (regions capture nothing).
	region     *ir.Instr
	regionWhat string // how messages name the region: "fusion body", "while do region"
	outer      map[string]binding
}

func (fb *funcBuilder) body(fa *funcAST) {
	for i, p := range fa.Params {
		v := fb.f.Params[i]
		if fb.badSig[fb.f] && v.Type.DType == ir.Invalid {
			v = nil
		}
		fb.define(p.Name, v)
	}
	returns := false
	for i, st := range fa.Body {
		if st.Op.Value == "return" {
			returns = true
			if i != len(fa.Body)-1 {
				fb.errorf(fb.pos(st.Op.Pos), "return must be the last instruction of @%s", fb.f.Name)
			}
		}
		fb.stmt(st)
	}
	if !returns {
		fb.errorf(fb.f.Pos, "function @%s does not end with return", fb.f.Name)
	}
}

// define binds a %name, reporting a redefinition (the first binding stays).
func (fb *funcBuilder) define(tok *valueTok, v *ir.Value) {
	pos := fb.pos(tok.Pos)
	if prev, dup := fb.scope[tok.Value]; dup {
		fb.errorf(pos, "%s is already defined at %s", tok.Value, prev.pos)
		return
	}
	// The regions of while and case are closed, so a name there may shadow
	// an outer one (a loop nest writes %one in each body); a fusion body,
	// which passes write, keeps every name distinct.
	shadows := fb.region != nil && ir.IsControl(fb.region.Op)
	if prev, dup := fb.outer[tok.Value]; dup && !shadows {
		fb.errorf(pos, "%s is already defined at %s", tok.Value, prev.pos)
		return
	}
	fb.scope[tok.Value] = binding{v: v, pos: pos}
}

// operands resolves %names. ok is false if any is undefined (reported) or
// poisoned by an earlier error (not reported again).
func (fb *funcBuilder) operands(toks []*valueTok) (vals []*ir.Value, ok bool) {
	ok = true
	vals = make([]*ir.Value, len(toks))
	for i, t := range toks {
		bnd, found := fb.scope[t.Value]
		if _, outside := fb.outer[t.Value]; !found && outside {
			fb.errorf(fb.pos(t.Pos), "%s uses %s from outside its region", fb.regionWhat, t.Value)
			ok = false
			continue
		}
		if !found {
			fb.errorf(fb.pos(t.Pos), "undefined value %s", t.Value)
			ok = false
			continue
		}
		if bnd.v == nil {
			ok = false
		}
		vals[i] = bnd.v
	}
	return vals, ok
}
