package stablehlo

import "github.com/tpucc/tpucc/ir"

// mapOp reads stablehlo.map whose body is elementwise (unary and binary ops
// of the op table, compare, select and scalar constants): the body applied
// to the whole inputs is the map, each scalar constant broadcast to their
// shape. Any other body, or dimensions other than all of them in order, is
// refused by name.
func (bd *builder) mapOp(o *op, args []*ir.Value) *ir.Value {
	if len(o.regions) != 1 || len(args) == 0 {
		bd.s.failf(o.pos, "unsupported form of %s: one region and at least one input are needed", o.name)
	}
	shape := args[0].Type
	if dims := bd.ints(o, "dimensions"); len(dims) != shape.Rank() || !isIota(dims) {
		bd.s.failf(o.pos, "unsupported form of %s: dimensions must be all of the inputs' dimensions in order", o.name)
	}
	return bd.elementwiseBody(o, o.regions[0], args)
}

// elementwiseBody applies r, a body of scalar parameters of the dtypes of
// args (of one shape) built of elementwise ops, compare, select and scalar
// constants, to the whole of args, each constant broadcast to their shape.
func (bd *builder) elementwiseBody(o *op, r *region, args []*ir.Value) *ir.Value {
	shape := args[0].Type
	outer := bd.vals
	defer func() { bd.vals = outer }()
	bd.vals = map[string]*ir.Value{}
	if len(r.params) != len(args) {
		bd.s.failf(r.pos, "%s body has %s, want %d", o.name, count(len(r.params), "parameter"), len(args))
	}
	for i, p := range r.params {
		if p.typ.Rank() != 0 || p.typ.DType != args[i].Type.DType {
			bd.s.failf(p.pos, "%s body parameter %%%s is %s, want tensor<%s>", o.name, p.name, mlirType(p.typ), args[i].Type.DType)
		}
		bd.define(p.name, args[i], p.pos)
	}
	for _, x := range r.ops {
		if !isReturn(x.name) && len(x.results) != 1 {
			bd.s.failf(x.pos, "unsupported form of %s: %s in its body must have one result", o.name, x.name)
		}
		switch code, ok := elementwise[x.name]; {
		case isReturn(x.name):
			got := bd.args(x)
			if len(got) != 1 {
				bd.s.failf(x.pos, "unsupported form of %s: the body returns %s", o.name, count(len(got), "value"))
			}
			return got[0]
		case ok:
			bd.define(x.results[0], bd.emit(x, code, nil, nil, bd.args(x)...), x.pos)
		case x.name == "stablehlo.compare":
			bd.define(x.results[0], bd.compare(x, bd.args(x)), x.pos)
		case x.name == "stablehlo.select":
			bd.define(x.results[0], bd.emit(x, ir.OpSelect, nil, nil, bd.args(x)...), x.pos)
		case x.name == "stablehlo.constant" && len(x.outs) == 1 && x.outs[0].Rank() == 0:
			a := bd.attr(x, "value")
			if a.kind != attrDense {
				bd.s.failf(a.pos, "unsupported constant value %s", a.describe())
			}
			c := bd.emit(x, ir.OpConstant, &ir.ConstAttr{Value: a.dense.literal(bd.s)}, []ir.Type{x.outs[0]})
			bd.define(x.results[0], bd.emit(x, ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, []ir.Type{shape.WithDType(c.Type.DType)}, c), x.pos)
		default:
			bd.s.failf(x.pos, "unsupported form of %s: %s in its body (only elementwise ops, compare, select and scalar constants)", o.name, x.name)
		}
	}
	bd.s.failf(r.pos, "%s body does not end in a return", o.name)
	return nil
}

func isIota(xs []int64) bool {
	for i, x := range xs {
		if x != int64(i) {
			return false
		}
	}
	return true
}
