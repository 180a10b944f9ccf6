package stablehlo

import (
	"strconv"

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
		x = bd.reverseAxis(o, x, d)
	}
	return x
}

func (bd *builder) reverseAxis(o *op, x *ir.Value, d int64) *ir.Value {
	n := x.Type.Dims()[d]
	if n == 0 {
		return x
	}
	idx := make([]int64, n)
	for i := range idx {
		idx[i] = n - 1 - int64(i)
	}
	t := ir.Tensor(ir.I32, n)
	c := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Ints: idx}}, []ir.Type{t})
	return bd.emit(o, ir.OpTake, &ir.AxisAttr{Axis: d}, nil, x, c)
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

// staticShape checks that a dynamic op's shape operand is a constant equal to
// the static result shape, so the op is its static form.
func (bd *builder) staticShape(o *op, shape *ir.Value) {
	refuse := func() {
		bd.s.failf(o.pos, "unsupported form of %s: its shape operand must be a constant equal to the result's shape", o.name)
	}
	if shape.Def == nil || shape.Def.Op != ir.OpConstant || shape.Type.Rank() != 1 {
		refuse()
	}
	l := shape.Def.Attr.(*ir.ConstAttr).Value
	dims := bd.result(o).Dims()
	if shape.Type.Dims()[0] != int64(len(dims)) {
		refuse()
	}
	for i, d := range dims {
		if l.Int(i) != d {
			refuse()
		}
	}
}

// dynamicShape maps dynamic_iota, dynamic_reshape and dynamic_broadcast_in_dim
// whose shape operand is the constant result shape to iota, reshape and broadcast.
func (bd *builder) dynamicShape(o *op, args []*ir.Value) *ir.Value {
	if len(args) == 0 {
		bd.s.failf(o.pos, "%s needs its shape operand", o.name)
	}
	t := bd.result(o)
	switch o.name {
	case "stablehlo.dynamic_iota":
		if len(args) != 1 {
			bd.s.failf(o.pos, "%s needs 1 operand", o.name)
		}
		bd.staticShape(o, args[0])
		axis := bd.attr(o, "dim", "iota_dimension").int(bd.s, "iota_dimension")
		return bd.emit(o, ir.OpIota, &ir.AxisAttr{Axis: axis}, []ir.Type{t})
	case "stablehlo.dynamic_reshape":
		if len(args) != 2 {
			bd.s.failf(o.pos, "%s needs 2 operands", o.name)
		}
		bd.staticShape(o, args[1])
		return bd.emit(o, ir.OpReshape, nil, []ir.Type{t}, args[0])
	}
	if len(args) != 2 {
		bd.s.failf(o.pos, "%s needs 2 operands", o.name)
	}
	bd.staticShape(o, args[1])
	dims := bd.ints(o, "dims", "broadcast_dimensions")
	return bd.emit(o, ir.OpBroadcast, &ir.DimsAttr{Dims: dims}, []ir.Type{t}, args[0])
}

// constInts reads a rank-1 integer constant operand of a dynamic op.
func (bd *builder) constInts(o *op, v *ir.Value, what string) []int64 {
	if v.Def == nil || v.Def.Op != ir.OpConstant || v.Type.Rank() != 1 || v.Type.DType.IsFloat() {
		bd.s.failf(o.pos, "unsupported form of %s: %s must be a constant", o.name, what)
	}
	l := v.Def.Attr.(*ir.ConstAttr).Value
	out := make([]int64, v.Type.Dims()[0])
	for i := range out {
		out[i] = l.Int(i)
	}
	return out
}

// dynamicPad with constant paddings is pad.
func (bd *builder) dynamicPad(o *op, args []*ir.Value) *ir.Value {
	if len(args) != 5 {
		bd.s.failf(o.pos, "%s needs 5 operands", o.name)
	}
	a := &ir.PadAttr{Low: bd.constInts(o, args[2], "edge_padding_low"), High: bd.constInts(o, args[3], "edge_padding_high"),
		Interior: bd.constInts(o, args[4], "interior_padding")}
	return bd.emit(o, ir.OpPad, a, nil, args[0], args[1])
}

// dynamicGather reads dynamic_gather whose slice sizes are a constant as
// the gather with those slice_sizes.
func (bd *builder) dynamicGather(o *op, args []*ir.Value) *ir.Value {
	if len(args) != 3 {
		bd.s.failf(o.pos, "%s needs 3 operands", o.name)
	}
	sizes := &attr{pos: o.pos, kind: attrList}
	for _, n := range bd.constInts(o, args[2], "slice_sizes") {
		sizes.list = append(sizes.list, &attr{pos: o.pos, kind: attrNum, text: strconv.FormatInt(n, 10)})
	}
	o.attrs["slice_sizes"] = sizes
	return bd.take(o, args[:2])
}
