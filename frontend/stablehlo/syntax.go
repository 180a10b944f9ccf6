package stablehlo

import (
	"strconv"

	"github.com/tpucc/tpucc/ir"
)

// The syntax tree: what the text says, before any op is mapped to ir.

type operand struct {
	name string // without %
	idx  int    // the result number after #, 0 without one
	pos  ir.Pos
}

type op struct {
	pos     ir.Pos
	name    string   // stablehlo.add, func.call, ...
	results []string // defined names without %; one per result unless written %r:N
	nres    int
	args    []operand
	attrs   map[string]*attr
	regions []*region
	ins     []ir.Type // operand types; nil when the short form wrote only results
	outs    []ir.Type
	// inQ and outQ are the quantized types of ins and outs (nil where
	// not quantized; both nil when none is).
	inQ, outQ []*quantType
}

type param struct {
	name string
	typ  ir.Type
	pos  ir.Pos
}

type region struct {
	pos    ir.Pos
	params []param
	ops    []*op
}

type fn struct {
	pos     ir.Pos
	name    string
	params  []param
	results []ir.Type
	body    *region
}

// module reads the whole file: #alias definitions, then module { func... }
// (or bare functions).
func (s *scanner) module() []*fn {
	var fns []*fn
	for {
		s.skip()
		switch {
		case s.eof():
			return fns
		case s.peek("#"):
			s.aliasDef()
		case s.accept("module"):
			fns = append(fns, s.moduleBody()...)
		case s.peek("func.func"):
			fns = append(fns, s.function())
		default:
			s.failf(s.pos(), "expected module or func.func, found %s", s.found())
		}
	}
}

// aliasDef skips #loc3 = loc(...) and other attribute alias definitions.
func (s *scanner) aliasDef() {
	s.sigil('#', "an alias")
	s.expect("=")
	if s.accept("loc") {
		s.balanced()
		return
	}
	s.attrValue(true)
}

func (s *scanner) moduleBody() []*fn {
	if s.peek("@") {
		s.sigil('@', "a module name")
	}
	if s.accept("attributes") {
		if a := s.attrDict()["mhlo.num_replicas"]; a != nil {
			s.replicas = a
		}
	}
	s.expect("{")
	var fns []*fn
	for !s.accept("}") {
		if s.peek("sdy.mesh") {
			s.mesh()
			continue
		}
		if !s.peek("func.func") {
			s.failf(s.pos(), "expected func.func, found %s", s.found())
		}
		fns = append(fns, s.function())
	}
	s.loc()
	return fns
}

// loc skips a trailing loc(...).
func (s *scanner) loc() {
	if s.accept("loc") {
		s.balanced()
	}
}

func (s *scanner) function() *fn {
	s.skip()
	f := &fn{pos: s.pos()}
	s.expect("func.func")
	for s.accept("public") || s.accept("private") || s.accept("nested") {
	}
	f.name = s.sigil('@', "a function name")
	s.expect("(")
	for !s.accept(")") {
		if len(f.params) > 0 {
			s.expect(",")
		}
		s.skip()
		p := param{pos: s.pos(), name: s.sigil('%', "a parameter")}
		s.expect(":")
		p.typ = s.tensorType()
		s.attrsAndLoc()
		f.params = append(f.params, p)
	}
	if s.accept("->") {
		f.results = s.resultTypes()
	}
	if s.accept("attributes") {
		s.attrDict()
	}
	f.body = s.block(nil)
	s.loc()
	return f
}

// attrsAndLoc skips a parameter's or result's {attributes} and loc(...).
func (s *scanner) attrsAndLoc() {
	if s.peek("{") {
		s.attrDict()
	}
	s.loc()
}

func (s *scanner) resultTypes() []ir.Type {
	if !s.accept("(") {
		// A lone result type cannot carry attributes: the { is the body.
		return []ir.Type{s.tensorType()}
	}
	var ts []ir.Type
	for !s.accept(")") {
		if len(ts) > 0 {
			s.expect(",")
		}
		ts = append(ts, s.tensorType())
		s.attrsAndLoc()
	}
	return ts
}

// block reads { [^bb0(%a: T, ...):] op... }. params, when given, are the
// block's parameters written before it (the pretty reduce's reducer).
func (s *scanner) block(params []param) *region {
	s.enter()
	defer s.leave()
	s.skip()
	r := &region{pos: s.pos(), params: params}
	s.expect("{")
	if s.peek("^") {
		s.sigil('^', "a block label")
		r.params = s.blockParams()
		s.expect(":")
	}
	for !s.accept("}") {
		if s.peek("^") {
			s.failf(s.pos(), "unsupported second block in a region")
		}
		r.ops = append(r.ops, s.operation())
	}
	return r
}

func (s *scanner) blockParams() []param {
	var ps []param
	s.expect("(")
	for !s.accept(")") {
		if len(ps) > 0 {
			s.expect(",")
		}
		s.skip()
		p := param{pos: s.pos(), name: s.sigil('%', "a block parameter")}
		s.expect(":")
		p.typ = s.tensorType()
		s.loc()
		ps = append(ps, p)
	}
	return ps
}

// operation reads [%r, ... =] op, in pretty or generic form.
func (s *scanner) operation() *op {
	s.skip()
	o := &op{attrs: map[string]*attr{}}
	if s.peek("%") {
		s.resultNames(o)
		s.expect("=")
	} else {
		o.nres = 0
	}
	s.skip()
	o.pos = s.pos()
	if s.peek("\"") {
		s.generic(o)
	} else {
		o.name = s.needWord("an op")
		s.pretty(o)
	}
	s.loc()
	return o
}

func (s *scanner) resultNames(o *op) {
	for {
		name := s.sigil('%', "a result name")
		n := 1
		if s.accept(":") {
			pos := s.pos()
			v, err := strconv.Atoi(s.word())
			if err != nil || v < 1 || v > 1<<16 {
				s.failf(pos, "bad result count")
			}
			n = v
		}
		for i := 0; i < n; i++ {
			o.results = append(o.results, name+"#"+strconv.Itoa(i))
		}
		if n == 1 {
			o.results[len(o.results)-1] = name
		}
		o.nres += n
		if !s.accept(",") {
			return
		}
	}
}

// use reads an operand: %name or %name#N.
func (s *scanner) use() operand {
	s.skip()
	u := operand{pos: s.pos(), name: s.sigil('%', "an operand")}
	if s.accept("#") {
		pos := s.pos()
		v, err := strconv.Atoi(s.word())
		if err != nil || v < 0 {
			s.failf(pos, "bad result number")
		}
		u.idx = v
	}
	return u
}

// generic reads "name"(args) <{props}> ({regions}) {attrs} : (T...) -> R.
func (s *scanner) generic(o *op) {
	o.name = s.str()
	s.checkSupported(o)
	s.expect("(")
	for !s.accept(")") {
		if len(o.args) > 0 {
			s.expect(",")
		}
		o.args = append(o.args, s.use())
	}
	if s.accept("<") {
		for k, v := range s.attrDict() {
			o.attrs[k] = v
		}
		s.expect(">")
	}
	if s.accept("(") {
		for !s.accept(")") {
			if len(o.regions) > 0 {
				s.expect(",")
			}
			o.regions = append(o.regions, s.block(nil))
		}
	}
	if s.peek("{") {
		for k, v := range s.attrDict() {
			o.attrs[k] = v
		}
	}
	s.expect(":")
	var quants []*quantType
	s.quants = &quants
	o.ins, o.outs = s.opType()
	s.quants = nil
	if o.ins == nil {
		s.failf(o.pos, "%s: expected a function type (operands) -> results", o.name)
	}
	for _, q := range quants {
		if q != nil {
			o.inQ, o.outQ = quants[:len(o.ins)], quants[len(o.ins):]
			break
		}
	}
}
