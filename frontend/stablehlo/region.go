package stablehlo

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// reductions are the reducer bodies recognised: one binary op of the two
// block parameters, returned.
var reductions = map[string]ir.Op{
	"stablehlo.add": ir.OpReduceSum, "stablehlo.maximum": ir.OpReduceMax,
	"stablehlo.minimum": ir.OpReduceMin, "stablehlo.multiply": ir.OpReduceProd,
}

// regionOp maps the ops that carry a reducer region (or whose form is
// recognised as one of ir's indexing ops): reduce, reduce_window, gather, scatter.
func (bd *builder) regionOp(o *op, args []*ir.Value) {
	switch o.name {
	case "stablehlo.reduce":
		if len(args) == 4 {
			bd.argReduce(o)
			return
		}
		bd.results(o, bd.reduce(o, args))
	case "stablehlo.reduce_window":
		if axis, ok := bd.cumsumAxis(o, args); ok {
			bd.results(o, bd.emit(o, ir.OpCumsum, &ir.AxisAttr{Axis: int64(axis)}, nil, args[0]))
			return
		}
		bd.results(o, bd.reduceWindow(o, args))
	case "stablehlo.select_and_scatter":
		bd.results(o, bd.selectScatter(o, args))
	case "stablehlo.gather":
		bd.results(o, bd.take(o, args))
	case "stablehlo.dynamic_gather":
		bd.results(o, bd.dynamicGather(o, args))
	case "stablehlo.scatter":
		bd.results(o, bd.scatterAdd(o, args))
	case "stablehlo.sort":
		bd.sort(o, args)
	case "stablehlo.while":
		bd.while(o, args)
	case "stablehlo.case", "stablehlo.if":
		bd.caseOp(o, args)
	default:
		bd.s.failf(o.pos, "unsupported op %s", o.name)
	}
}

// body names the single binary op a reducer region applies, or "".
func (bd *builder) body(o *op) string {
	if a := o.attrs["applies"]; a != nil {
		return a.text
	}
	if len(o.regions) != 1 {
		return ""
	}
	r := o.regions[0]
	if len(r.params) != 2 || len(r.ops) != 2 || r.params[0].typ.Rank() != 0 {
		return ""
	}
	x, ret := r.ops[0], r.ops[1]
	if len(x.args) != 2 || x.nres != 1 || !isReturn(ret.name) || len(ret.args) != 1 || ret.args[0].name != x.results[0] {
		return ""
	}
	a, b := x.args[0].name, x.args[1].name
	p, q := r.params[0].name, r.params[1].name
	if !(a == p && b == q || a == q && b == p) || x.args[0].idx != 0 || x.args[1].idx != 0 {
		return ""
	}
	return x.name
}

func (bd *builder) reduce(o *op, args []*ir.Value) *ir.Value {
	if len(args) != 2 {
		bd.s.failf(o.pos, "unsupported form of %s: %d inputs (only single-input add, maximum, minimum and multiply reductions are supported)", o.name, len(args)/2)
	}
	kind := bd.body(o)
	if args[0].Type.DType == ir.I1 {
		return bd.reduceBool(o, args, kind)
	}
	code, ok := reductions[kind]
	if !ok {
		bd.s.failf(o.pos, "unsupported form of %s: the body is not one add, maximum, minimum or multiply", o.name)
	}
	dims := bd.ints(o, "dimensions")
	r := bd.emit(o, code, &ir.AxesAttr{Axes: dims}, nil, args[0])
	if isIdentity(args[1], code) {
		return r
	}
	// A non-identity init enters once, as XLA applies it.
	init := bd.emit(o, ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, []ir.Type{r.Type}, args[1])
	return bd.emit(o, elementwise[kind], nil, nil, r, init)
}

// isIdentity reports whether v is a constant equal to the reduction's identity.
func isIdentity(v *ir.Value, code ir.Op) bool {
	for v.Def != nil && (v.Def.Op == ir.OpBroadcast || v.Def.Op == ir.OpReshape) && v.Def.Args[0].Type.Rank() == 0 {
		v = v.Def.Args[0] // JAX broadcasts the scalar init to a scalar
	}
	if v.Def == nil || v.Def.Op != ir.OpConstant || v.Type.Rank() != 0 {
		return false
	}
	l := v.Def.Attr.(*ir.ConstAttr).Value
	dt := v.Type.DType
	lo, hi := dt.IntRange()
	switch code {
	case ir.OpReduceSum:
		return l.Float(0) == 0
	case ir.OpReduceProd:
		return l.Float(0) == 1
	case ir.OpReduceMax:
		return dt.IsFloat() && math.IsInf(l.Float(0), -1) || !dt.IsFloat() && l.Int(0) == lo
	case ir.OpReduceMin:
		return dt.IsFloat() && math.IsInf(l.Float(0), 1) || !dt.IsFloat() && l.Int(0) == hi
	}
	return false
}

// cumsumAxis recognises the reduce_window jnp.cumsum emits: an add over a
// window as long as one axis, padded by its length-1 in front, every stride
// and dilation 1, init 0. It is read as cumsum, which the llvm backend has
// a kernel for.
func (bd *builder) cumsumAxis(o *op, args []*ir.Value) (int, bool) {
	if len(args) != 2 || bd.body(o) != "stablehlo.add" || !isIdentity(args[1], ir.OpReduceSum) {
		return 0, false
	}
	dims := args[0].Type.Dims()
	win := bd.ints(o, "window_dimensions")
	for _, k := range []string{"window_strides", "base_dilations", "window_dilations"} {
		if a := o.attrs[k]; a != nil && !allOnes(a.ints(bd.s, k)) {
			return 0, false
		}
	}
	pad := o.attrs["padding"]
	if pad == nil || pad.kind != attrDense || len(win) != len(dims) {
		return 0, false
	}
	padding := pad.dense.literal(bd.s)
	if padding.Len() != 2*len(dims) {
		return 0, false
	}
	axis := -1
	for d, w := range win {
		lo, hi := padding.Int(2*d), padding.Int(2*d+1)
		switch {
		case w == 1 && lo == 0 && hi == 0:
		case axis < 0 && w == dims[d] && lo == w-1 && hi == 0:
			axis = d
		default:
			return 0, false
		}
	}
	return axis, axis >= 0
}

func allOnes(v []int64) bool {
	for _, x := range v {
		if x != 1 {
			return false
		}
	}
	return true
}

// reduceBool maps and/or reductions of i1 (jnp.all, jnp.any): over 0 and 1
// as i32 they are min and max, converted back with != 0.
func (bd *builder) reduceBool(o *op, args []*ir.Value, kind string) *ir.Value {
	code, ok := map[string]ir.Op{"stablehlo.and": ir.OpReduceMin, "stablehlo.or": ir.OpReduceMax}[kind]
	if !ok {
		bd.s.failf(o.pos, "unsupported form of %s: an i1 reduction whose body is not one and or or", o.name)
	}
	x := bd.emit(o, ir.OpConvert, nil, []ir.Type{args[0].Type.WithDType(ir.I32)}, args[0])
	r := bd.emit(o, code, &ir.AxesAttr{Axes: bd.ints(o, "dimensions")}, nil, x)
	r = bd.emit(o, ir.OpConvert, nil, []ir.Type{r.Type.WithDType(ir.I1)}, r)
	init := bd.emit(o, ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, []ir.Type{r.Type}, args[1])
	return bd.emit(o, elementwise[kind], nil, nil, r, init)
}
