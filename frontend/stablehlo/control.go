package stablehlo

import (
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// Control flow: stablehlo.while, stablehlo.case and stablehlo.if become ir's
// while and case. A StableHLO region may read values of the scopes around it
// (implicit capture); ir's regions are closed. So the values a region reads
// from outside become operands: extra carried values of a while (its do
// region returns them unchanged, and the while's extra results are unused),
// extra operands of a case, in the order the text first uses them.

// prettyWhile reads (%iterArg = %init, ...) : T, ... [attributes {...}]
// cond { ... } do { ... }; both regions take the iteration arguments.
func (s *scanner) prettyWhile(o *op) {
	var params []param
	s.expect("(")
	for !s.accept(")") {
		if len(params) > 0 {
			s.expect(",")
		}
		s.skip()
		params = append(params, param{pos: s.pos(), name: s.sigil('%', "an iteration argument")})
		s.expect("=")
		o.args = append(o.args, s.use())
	}
	if len(params) > 0 {
		s.expect(":")
		for i := range params {
			if i > 0 {
				s.expect(",")
			}
			params[i].typ = s.tensorType()
		}
	}
	o.ins, o.outs = paramTypes(params), paramTypes(params)
	if s.accept("attributes") {
		s.attrDict()
	}
	s.expect("cond")
	o.regions = append(o.regions, s.block(append([]param{}, params...)))
	s.expect("do")
	o.regions = append(o.regions, s.block(append([]param{}, params...)))
}

func paramTypes(ps []param) []ir.Type {
	ts := make([]ir.Type, len(ps))
	for i, p := range ps {
		ts[i] = p.typ
	}
	return ts
}

// captured lists the operands rs read that they do not define (in nested
// regions too), each once, in the order of first use. MLIR names a value
// once per function, so a name defined anywhere inside rs is rs's own.
func captured(rs []*region) []operand {
	own := map[string]bool{}
	var define func(r *region)
	define = func(r *region) {
		for _, p := range r.params {
			own[p.name] = true
		}
		for _, o := range r.ops {
			for _, n := range o.results {
				own[baseName(n)] = true
			}
			for _, sub := range o.regions {
				define(sub)
			}
		}
	}
	for _, r := range rs {
		define(r)
	}
	var out []operand
	seen := map[operand]bool{}
	var use func(r *region)
	use = func(r *region) {
		for _, o := range r.ops {
			for _, u := range o.args {
				k := operand{name: u.name, idx: u.idx}
				if !own[u.name] && !seen[k] {
					seen[k] = true
					out = append(out, u)
				}
			}
			for _, sub := range o.regions {
				use(sub)
			}
		}
	}
	for _, r := range rs {
		use(r)
	}
	return out
}

func baseName(n string) string {
	if i := strings.IndexByte(n, '#'); i >= 0 {
		return n[:i]
	}
	return n
}

// captures resolves rs's captured operands in the current scope: the key
// each is found under there, and its value, one entry per distinct value.
func (bd *builder) captures(rs []*region) ([]string, []*ir.Value) {
	var keys []string
	var vals []*ir.Value
	seen := map[string]bool{}
	for _, u := range captured(rs) {
		k, v := bd.lookup(u)
		if !seen[k] {
			seen[k] = true
			keys, vals = append(keys, k), append(vals, v)
		}
	}
	return keys, vals
}

// while maps stablehlo.while: inits are its operands. The captured values
// are carried after them, and the do region returns them unchanged.
func (bd *builder) while(o *op, inits []*ir.Value) {
	if len(o.regions) != 2 {
		bd.s.failf(o.pos, "%s needs a cond region and a do region, got %d regions", o.name, len(o.regions))
	}
	keys, extra := bd.captures(o.regions)
	lp := bd.loopProbesOf(o)
	carried := append(append([]*ir.Value{}, inits...), extra...)
	carried = append(carried, lp.inits...)
	in := bd.emitControl(o, ir.OpWhile, nil, carried)
	types := valueTypes(carried)
	cond := bd.b.F.NewRegion(in, types)
	bd.regionBody(o, o.regions[0], cond, keys, len(lp.inits), "cond region", []ir.Type{ir.Scalar(ir.I1)}, false)
	body := bd.b.F.NewRegion(in, types)
	if len(lp.inits) > 0 {
		lp.region, lp.next = o.regions[1], append([]*ir.Value{}, body.Params[len(carried)-len(lp.inits):]...)
		bd.loop = lp
		defer func() { bd.loop = nil }()
	}
	bd.regionBody(o, o.regions[1], body, keys, len(lp.inits), "do region", types[:len(inits)], true)
	bd.results(o, in.Results[:len(inits)]...)
	lp.record(bd, in.Results[len(carried)-len(lp.inits):])
}

// caseOp maps stablehlo.case, and stablehlo.if as a case of two branches:
// if runs its first region when the predicate is true, so the index is
// select(pred, 0, 1). The captured values are the case's operands.
func (bd *builder) caseOp(o *op, args []*ir.Value) {
	if len(args) != 1 || len(o.regions) == 0 {
		bd.s.failf(o.pos, "%s needs one operand and at least one region", o.name)
	}
	idx := args[0]
	if o.name == "stablehlo.if" {
		if len(o.regions) != 2 || !idx.Type.Equal(ir.Scalar(ir.I1)) {
			bd.s.failf(o.pos, "%s needs a tensor<i1> predicate and 2 regions", o.name)
		}
		i32 := ir.Scalar(ir.I32)
		zero := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: ir.NewLiteral(i32, []float64{0})}, []ir.Type{i32})
		one := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: ir.NewLiteral(i32, []float64{1})}, []ir.Type{i32})
		idx = bd.emit(o, ir.OpSelect, nil, nil, idx, zero, one)
	}
	keys, extra := bd.captures(o.regions)
	outs := append([]ir.Type{}, o.outs...)
	in := bd.emitControl(o, ir.OpCase, outs, append([]*ir.Value{idx}, extra...))
	for i, r := range o.regions {
		blk := bd.b.F.NewRegion(in, valueTypes(extra))
		bd.regionBody(o, r, blk, keys, 0, "branch "+itoa(i), outs, false)
	}
	bd.results(o, in.Results...)
}

func (bd *builder) emitControl(o *op, code ir.Op, hint []ir.Type, args []*ir.Value) *ir.Instr {
	in, err := bd.b.Emit(code, nil, hint, args...)
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "error: "); i >= 0 {
			msg = msg[i+len("error: "):]
		}
		bd.s.failf(o.pos, "%s: %s", o.name, msg)
	}
	return in
}

func valueTypes(vs []*ir.Value) []ir.Type {
	ts := make([]ir.Type, len(vs))
	for i, v := range vs {
		ts[i] = v.Type
	}
	return ts
}

// regionBody builds r into blk in a scope of its own: r's parameters name
// blk's first parameters, the captured keys the next ones, and the last
// probes parameters carry a while's looped probes (loopProbes). r's return
// must give want; passThrough appends the captured parameters to it.
func (bd *builder) regionBody(o *op, r *region, blk *ir.Block, keys []string, probes int, what string, want []ir.Type, passThrough bool) {
	outerB, outerVals, outerUnbound := bd.b, bd.vals, bd.unbound
	bd.depth++
	defer func() { bd.b, bd.vals, bd.unbound = outerB, outerVals, outerUnbound; bd.depth-- }()
	bd.b = ir.NewBuilder(outerB.F)
	bd.b.SetAppend(blk)
	bd.vals, bd.unbound = map[string]*ir.Value{}, map[string]string{}
	n := len(blk.Params) - len(keys) - probes
	if len(r.params) != n {
		bd.s.failf(r.pos, "%s %s has %s, want %d", o.name, what, count(len(r.params), "parameter"), n)
	}
	for i, p := range r.params {
		if !p.typ.Equal(blk.Params[i].Type) {
			bd.s.failf(p.pos, "%s %s parameter %%%s is %s, want %s", o.name, what, p.name, mlirType(p.typ), mlirType(blk.Params[i].Type))
		}
		bd.define(p.name, blk.Params[i], p.pos)
	}
	for j, k := range keys {
		bd.vals[k] = blk.Params[n+j]
	}
	bd.regionOps(o, r, blk, n, what, want, passThrough)
}

// regionOps builds r's ops into blk, the scope already set up; blk's
// parameters from n on are the captured values passThrough returns.
func (bd *builder) regionOps(o *op, r *region, blk *ir.Block, n int, what string, want []ir.Type, passThrough bool) {
	for i, x := range r.ops {
		bd.b.Pos = x.pos
		switch {
		case isReturn(x.name):
			if i != len(r.ops)-1 {
				bd.s.failf(r.ops[i+1].pos, "an op after the return of a %s %s", o.name, what)
			}
			got := bd.args(x)
			bd.checkReturn(o, x, what, got, want)
			if passThrough {
				got = append(got, blk.Params[n:]...)
			}
			if lp := bd.loop; lp != nil && lp.region == r {
				copy(got[len(got)-len(lp.next):], lp.next)
			}
			bd.b.Return(got...)
			return
		case checkOps[x.name]:
			bd.s.failf(x.pos, "unsupported %s inside a %s region", x.name, o.name)
		case x.name == probeOp && bd.loop != nil && bd.loop.region == r:
			bd.loop.probe(bd, x)
			continue
		}
		bd.op(x)
	}
	bd.s.failf(r.pos, "%s %s does not end in a return", o.name, what)
}

func (bd *builder) checkReturn(o, ret *op, what string, got []*ir.Value, want []ir.Type) {
	if len(got) != len(want) {
		bd.s.failf(ret.pos, "%s %s returns %s, want %d", o.name, what, count(len(got), "value"), len(want))
	}
	for i, v := range got {
		if !v.Type.Equal(want[i]) {
			bd.s.failf(ret.args[i].pos, "%s %s returns %s as value %d, want %s", o.name, what, mlirType(v.Type), i, mlirType(want[i]))
		}
	}
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return itoa(n) + " " + what + "s"
}
