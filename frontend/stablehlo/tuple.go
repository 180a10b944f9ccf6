package stablehlo

import "github.com/tpucc/tpucc/ir"

// Tuples are read in the pretty form only, and live in the importer: a
// tuple value is the list of the values it was built from, and
// get_tuple_element picks one. ir has no tuple type, so a tuple used any
// other way (returned, passed, an operand of another op) is refused.

// tupleElem is one element of a tuple: a value, or a nested tuple.
type tupleElem struct {
	v     *ir.Value
	tuple []tupleElem
}

// prettyTuple reads `stablehlo.tuple %a, ... : tuple<...>` and
// `stablehlo.get_tuple_element %t[i] : (tuple<...>) -> T`.
func (s *scanner) prettyTuple(o *op) {
	if o.name == "stablehlo.tuple" {
		for s.peek("%") {
			o.args = append(o.args, s.use())
			if !s.accept(",") {
				break
			}
		}
		s.expect(":")
		s.tupleType()
		return
	}
	o.args = append(o.args, s.use())
	s.expect("[")
	o.attrs["index"] = s.attrValue(false)
	s.expect("]")
	s.expect(":")
	s.expect("(")
	s.tupleType()
	s.expect(")")
	s.expect("->")
	if s.peekWord() != "tuple" {
		o.outs = []ir.Type{s.tensorType()}
	} else {
		s.tupleType()
	}
}

// tupleType skips tuple<...>: the element types are checked against the
// values where they are used.
func (s *scanner) tupleType() {
	pos := s.pos()
	if s.word() != "tuple" || !s.peek("<") {
		s.failf(pos, "expected a tuple type, found %s", s.found())
	}
	s.balanced()
}

// tupleOp builds a tuple or takes an element of one.
func (bd *builder) tupleOp(o *op) {
	elem := func(u operand) tupleElem {
		if t, ok := bd.tuples[u.name]; ok && u.idx == 0 {
			return tupleElem{tuple: t}
		}
		_, v := bd.lookup(u)
		return tupleElem{v: v}
	}
	if len(o.results) != 1 {
		bd.s.failf(o.pos, "%s has 1 result, %d are named", o.name, len(o.results))
	}
	name := o.results[0]
	if o.name == "stablehlo.tuple" {
		var t []tupleElem
		for _, u := range o.args {
			t = append(t, elem(u))
		}
		bd.tuples[name] = t
		return
	}
	t, ok := bd.tuples[o.args[0].name]
	if !ok {
		bd.s.failf(o.args[0].pos, "%s: %%%s is not a tuple", o.name, o.args[0].name)
	}
	i := bd.attr(o, "index").int(bd.s, "index")
	if i < 0 || i >= int64(len(t)) {
		bd.s.failf(o.pos, "%s: index %d of a tuple of %d", o.name, i, len(t))
	}
	switch e := t[i]; {
	case e.v != nil && o.outs != nil:
		bd.results(o, e.v)
	case e.v == nil && o.outs == nil:
		bd.tuples[name] = e.tuple
	default:
		bd.s.failf(o.pos, "%s: element %d's type is not the one written", o.name, i)
	}
}
