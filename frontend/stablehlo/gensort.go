package stablehlo

import (
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// generalSort maps a stablehlo.sort whose comparator is of no form the
// importer maps to argsort or top_k: ir's sort with the comparator as its
// region.
func (bd *builder) generalSort(o *op, args []*ir.Value) {
	stable := false
	if a := bd.optAttr(o, "is_stable"); a != nil {
		stable = a.kind == attrBool && a.text == "true"
	}
	attr := &ir.SortAttr{Dimension: bd.attr(o, "dimension").int(bd.s, "dimension"), Stable: stable}
	in, err := bd.b.Emit(ir.OpSort, attr, nil, args...)
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "error: "); i >= 0 {
			msg = msg[i+len("error: "):]
		}
		bd.s.failf(o.pos, "%s: %s", o.name, msg)
	}
	bd.comparator(o, in)
	bd.results(o, in.Results...)
}

// comparator builds the sort's region from o's: two scalar parameters per
// operand, returning i1. ir's regions capture nothing, so a constant the
// comparator reads from outside (JAX hoists the 0 and NaN of jnp.sort's
// canonicalisation out of it) is copied in; any other outer value is
// refused at its use.
func (bd *builder) comparator(o *op, in *ir.Instr) {
	r := o.regions[0]
	params := make([]ir.Type, 0, 2*len(in.Args))
	for _, a := range in.Args {
		params = append(params, ir.Scalar(a.Type.DType), ir.Scalar(a.Type.DType))
	}
	blk := bd.b.F.NewRegion(in, params)
	type capture struct {
		key string
		v   *ir.Value
	}
	var consts []capture
	seen := map[string]bool{}
	for _, u := range captured(o.regions) {
		k, v := bd.lookup(u)
		if v.Def == nil || v.Def.Op != ir.OpConstant {
			bd.s.failf(u.pos, "unsupported form of %s: its comparator uses %%%s from outside, which is not a constant", o.name, u.name)
		}
		if !seen[k] {
			seen[k] = true
			consts = append(consts, capture{k, v})
		}
	}
	outerB, outerVals, outerUnbound := bd.b, bd.vals, bd.unbound
	defer func() { bd.b, bd.vals, bd.unbound = outerB, outerVals, outerUnbound }()
	bd.b = ir.NewBuilder(outerB.F)
	bd.b.SetAppend(blk)
	bd.vals, bd.unbound = map[string]*ir.Value{}, map[string]string{}
	if len(r.params) != len(params) {
		bd.s.failf(r.pos, "%s comparator has %s, want %d", o.name, count(len(r.params), "parameter"), len(params))
	}
	for i, p := range r.params {
		if !p.typ.Equal(params[i]) {
			bd.s.failf(p.pos, "%s comparator parameter %%%s is %s, want %s", o.name, p.name, mlirType(p.typ), mlirType(params[i]))
		}
		bd.define(p.name, blk.Params[i], p.pos)
	}
	for _, c := range consts {
		bd.b.Pos = c.v.Def.Pos
		x, err := bd.b.Emit(ir.OpConstant, c.v.Def.Attr, []ir.Type{c.v.Type})
		if err != nil {
			bd.s.failf(o.pos, "%s: %v", o.name, err)
		}
		bd.vals[c.key] = x.Results[0]
	}
	bd.regionOps(o, r, blk, len(params), "comparator", []ir.Type{ir.Scalar(ir.I1)}, false)
	outerB.Pos = o.pos
}
