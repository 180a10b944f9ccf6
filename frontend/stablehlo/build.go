package stablehlo

import (
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// builder maps the syntax tree to ir, one function at a time.
type builder struct {
	s     *scanner
	m     *ir.Module
	funcs map[string]*ir.Func
	b     *ir.Builder
	vals  map[string]*ir.Value
	// unbound names results the importer does not compute, each with what it is.
	unbound map[string]string
	// pending are the values the function's checks compare, in pairs; checks
	// the checks, per function.
	pending []*ir.Value
	checks  []Check
	probes  map[string][]*ir.Value   // test mode: interpreter.probe values by probe_id, in order
	serial  map[string][]int64       // test mode: the iterations the function's check.expect_serialized_eq read, by probe_id
	looped  map[string]*loopedProbe  // test mode: probe_ids a while recorded (check.go)
	loop    *loopProbes              // the while whose do region is being built, when it probes
	depth   int                      // how many regions deep the builder is
	tuples  map[string][]tupleElem   // tuple values by name (tuple.go)
	quant   map[*ir.Value]*quantType // the quantized type of a value of storage integers (quant.go)
	all     map[string][]Check
	par     map[string]*Parallel
}

func build(s *scanner, fns []*fn) *Tests {
	bd := &builder{s: s, m: ir.NewModule(s.file), funcs: map[string]*ir.Func{}, all: map[string][]Check{}, par: map[string]*Parallel{},
		quant: map[*ir.Value]*quantType{}}
	for _, f := range fns {
		if bd.funcs[f.name] != nil {
			s.failf(f.pos, "function @%s is defined twice", f.name)
		}
		names := make([]string, len(f.params))
		types := make([]ir.Type, len(f.params))
		for i, p := range f.params {
			names[i], types[i] = p.name, p.typ
		}
		bd.funcs[f.name] = bd.m.NewFunc(f.name, names, types, f.results, f.pos)
	}
	for _, f := range fns {
		bd.function(f, bd.funcs[f.name])
	}
	bd.checkCalls()
	return &Tests{Module: bd.m, Checks: bd.all, Parallel: bd.par}
}

// checkCalls refuses a call to a function with checks: its results grew.
func (bd *builder) checkCalls() {
	for _, f := range bd.m.Funcs {
		f.Body.Walk(func(in *ir.Instr) {
			if in.Op == ir.OpCall && len(bd.all[in.Attr.(*ir.CallAttr).Callee]) > 0 {
				bd.s.failf(in.Pos, "unsupported call to a function with checks")
			}
		})
	}
}

func (bd *builder) function(f *fn, irf *ir.Func) {
	bd.b = ir.NewBuilder(irf)
	bd.vals = map[string]*ir.Value{}
	bd.unbound = map[string]string{}
	bd.pending, bd.checks, bd.probes, bd.tuples = nil, nil, map[string][]*ir.Value{}, map[string][]tupleElem{}
	bd.serial, bd.looped = serialIters(f.body.ops, bd.s), map[string]*loopedProbe{}
	for i, p := range f.params {
		bd.define(p.name, irf.Params[i], p.pos)
	}
	for i, o := range f.body.ops {
		bd.b.Pos = o.pos
		if isReturn(o.name) {
			if i != len(f.body.ops)-1 {
				bd.s.failf(f.body.ops[i+1].pos, "an op after the function's return")
			}
			bd.ret(o, irf)
			return
		}
		if checkOps[o.name] {
			bd.check(o)
			continue
		}
		if o.name == runParallel {
			bd.runParallel(o, irf)
			continue
		}
		if o.name == probeOp {
			bd.probe(o)
			continue
		}
		bd.op(o)
	}
	bd.s.failf(f.pos, "function @%s does not end in a return", f.name)
}

func isReturn(name string) bool {
	return name == "return" || name == "func.return" || name == "stablehlo.return"
}

func (bd *builder) ret(o *op, f *ir.Func) {
	args := bd.args(o)
	if len(args) != len(f.Results) {
		bd.s.failf(o.pos, "return has %d values, @%s returns %d", len(args), f.Name, len(f.Results))
	}
	for i, a := range args {
		if !a.Type.Equal(f.Results[i]) {
			bd.s.failf(o.args[i].pos, "return value %d is %s, @%s returns %s", i, mlirType(a.Type), f.Name, mlirType(f.Results[i]))
		}
	}
	if len(bd.checks) > 0 {
		n := len(f.Results)
		for i := range bd.checks {
			bd.checks[i].Got, bd.checks[i].Want = n+2*i, n+2*i+1
		}
		for _, v := range bd.pending {
			f.Results = append(f.Results, v.Type)
		}
		args = append(args, bd.pending...)
		bd.all[f.Name] = bd.checks
	}
	bd.b.Return(args...)
}

func (bd *builder) define(name string, v *ir.Value, pos ir.Pos) {
	if bd.vals[name] != nil {
		bd.s.failf(pos, "%%%s is defined twice", name)
	}
	bd.vals[name] = v
}

func (bd *builder) args(o *op) []*ir.Value {
	out := make([]*ir.Value, len(o.args))
	for i, u := range o.args {
		_, out[i] = bd.lookup(u)
	}
	return out
}

// lookup finds u in the current scope: the key it is bound under, and its value.
func (bd *builder) lookup(u operand) (string, *ir.Value) {
	key := u.name
	if _, gone := bd.unbound[key]; u.idx > 0 || bd.vals[key] == nil && !gone {
		key += "#" + itoa(u.idx)
	}
	v := bd.vals[key]
	if what, ok := bd.unbound[key]; ok {
		bd.s.failf(u.pos, "unsupported use of %%%s: %s", u.name, what)
	}
	if _, ok := bd.tuples[u.name]; v == nil && ok {
		bd.s.failf(u.pos, "unsupported use of tuple %%%s (only get_tuple_element reads a tuple)", u.name)
	}
	if v == nil {
		bd.s.failf(u.pos, "undefined value %%%s", u.name)
	}
	return key, v
}

// results binds o's result names to vs, checking them against the types written.
func (bd *builder) results(o *op, vs ...*ir.Value) {
	if len(vs) != o.nres {
		bd.s.failf(o.pos, "%s has %d results, %d are named", o.name, len(vs), o.nres)
	}
	if len(o.outs) != len(vs) {
		bd.s.failf(o.pos, "%s has %d results, %d result types are written", o.name, len(vs), len(o.outs))
	}
	for i, v := range vs {
		if !v.Type.Equal(o.outs[i]) {
			bd.s.failf(o.pos, "%s: result %d is %s, the text says %s", o.name, i, mlirType(v.Type), mlirType(o.outs[i]))
		}
		bd.define(o.results[i], v, o.pos)
	}
}

// emit makes one ir instruction, turning a type error into a diagnostic at o.
func (bd *builder) emit(o *op, code ir.Op, a ir.Attr, hint []ir.Type, args ...*ir.Value) *ir.Value {
	in, err := bd.b.Emit(code, a, hint, args...)
	if err != nil {
		bd.s.failf(o.pos, "%s: %s", o.name, trimError(err))
	}
	if len(in.Results) != 1 {
		return nil
	}
	return in.Result()
}

// trimError is err's message without the position ir puts in front.
func trimError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "error: "); i >= 0 {
		msg = msg[i+len("error: "):]
	}
	return msg
}

// attr returns o's attribute under its pretty or generic name.
func (bd *builder) attr(o *op, names ...string) *attr {
	for _, n := range names {
		if a := o.attrs[n]; a != nil {
			return a
		}
	}
	bd.s.failf(o.pos, "%s: missing attribute %s", o.name, names[len(names)-1])
	return nil
}

func (bd *builder) optAttr(o *op, names ...string) *attr {
	for _, n := range names {
		if a := o.attrs[n]; a != nil {
			return a
		}
	}
	return nil
}

func (bd *builder) ints(o *op, names ...string) []int64 {
	return bd.attr(o, names...).ints(bd.s, names[len(names)-1])
}

func (bd *builder) result(o *op) ir.Type {
	if len(o.outs) != 1 {
		bd.s.failf(o.pos, "%s: expected one result type", o.name)
	}
	return o.outs[0]
}

// mlirType spells t as MLIR does, for diagnostics about the text.
func mlirType(t ir.Type) string {
	var b strings.Builder
	b.WriteString("tensor<")
	for _, d := range t.Dims() {
		b.WriteString(itoa(int(d)) + "x")
	}
	return b.String() + mlirElemType(t.DType) + ">"
}

// mlirElemType spells a dtype as MLIR does: ui8, complex<f32>.
func mlirElemType(dt ir.DType) string {
	name := dt.String()
	switch {
	case dt.IsUnsigned():
		name = "ui" + name[1:]
	case dt.IsComplex():
		name = "complex<" + dt.ComplexPart().String() + ">"
	}
	return name
}
