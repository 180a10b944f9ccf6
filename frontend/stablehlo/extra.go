package stablehlo

import (
	"github.com/tpucc/tpucc/ir"
)

// reverse flips x along each dimension listed: a take of the indices n-1..0,
// which is the same elements in the other order.
func (bd *builder) reverse(o *op, args []*ir.Value) *ir.Value {
	if len(args) != 1 {
		bd.s.failf(o.pos, "%s needs 1 operand", o.name)
	}
	x := args[0]
	for _, d := range bd.ints(o, "dims", "dimensions") {
		if d < 0 || d >= int64(x.Type.Rank()) {
			bd.s.failf(o.pos, "%s: dimension %d is out of range for %s", o.name, d, mlirType(x.Type))
		}
		n := x.Type.Dims()[d]
		if n == 0 {
			continue
		}
		idx := make([]int64, n)
		for i := range idx {
			idx[i] = n - 1 - int64(i)
		}
		t := ir.Tensor(ir.I32, n)
		c := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Ints: idx}}, []ir.Type{t})
		x = bd.emit(o, ir.OpTake, &ir.AxisAttr{Axis: d}, nil, x, c)
	}
	return x
}

// dimensionSize is the static size of one dimension, an i32 constant.
func (bd *builder) dimensionSize(o *op, args []*ir.Value) *ir.Value {
	if len(args) != 1 {
		bd.s.failf(o.pos, "%s needs 1 operand", o.name)
	}
	d := bd.attr(o, "dim", "dimension").int(bd.s, "dimension")
	if d < 0 || d >= int64(args[0].Type.Rank()) {
		bd.s.failf(o.pos, "%s: dimension %d is out of range for %s", o.name, d, mlirType(args[0].Type))
	}
	size := args[0].Type.Dims()[d]
	return bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Ints: []int64{size}}}, []ir.Type{ir.Scalar(ir.I32)})
}

// prettyComposite reads "name" %a, ... {attrs} : type; the op means a call
// of its decomposition.
func (s *scanner) prettyComposite(o *op) {
	s.str()
	for s.peek("%") {
		o.args = append(o.args, s.use())
		if !s.accept(",") {
			break
		}
	}
	if s.peek("{") {
		for k, v := range s.attrDict() {
			o.attrs[k] = v
		}
	}
	s.expect(":")
	o.ins, o.outs = s.opType()
}
