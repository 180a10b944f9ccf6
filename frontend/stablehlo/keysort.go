package stablehlo

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// keySort reads a sort of any number of operands whose comparator is one
// LT or GT compare of an integer operand's pair of parameters (a sort by
// that key, the others carried along): the stable ascending argsort of the
// key (of its bitwise not for GT, which reverses the order of signed and
// unsigned values alike, without overflow) gives the permutation, and each
// operand is taken at it. A stable order is a valid result of an unstable
// sort. false when the comparator or operands are of another form.
func (bd *builder) keySort(o *op, args []*ir.Value, axis int64) bool {
	k, dir, ok := keyComparator(o.regions[0], len(args))
	if !ok || axis < 0 || axis >= int64(args[0].Type.Rank()) {
		return false
	}
	key := args[k]
	c := o.regions[0].ops[0]
	if t := c.attrs["compare_type"]; !key.Type.DType.IsInt() ||
		t != nil && t.text != map[bool]string{true: "SIGNED", false: "UNSIGNED"}[key.Type.DType.IsSigned()] {
		return false
	}
	n, _ := key.Type.NumElements()
	if n > math.MaxInt32 {
		return false
	}
	for _, a := range args {
		if !a.Type.SameShape(key.Type) {
			return false
		}
	}
	if dir == "GT" {
		key = bd.emit(o, ir.OpNot, nil, nil, key)
	}
	lin := bd.linearIndex(o, bd.emit(o, ir.OpArgsort, &ir.AxisAttr{Axis: axis}, nil, key), axis)
	out := make([]*ir.Value, len(args))
	for i, a := range args {
		flat := bd.emit(o, ir.OpReshape, nil, []ir.Type{a.Type.WithShape([]ir.Dim{ir.D(n)})}, a)
		out[i] = bd.emit(o, ir.OpTake, &ir.AxisAttr{Axis: 0}, nil, flat, lin)
	}
	bd.results(o, out...)
	return true
}

// keyComparator matches a body `compare DIR, %p2k, %p2k+1; return`: the
// operand k and the direction.
func keyComparator(r *region, operands int) (int, string, bool) {
	if len(r.params) != 2*operands || len(r.ops) != 2 {
		return 0, "", false
	}
	c, ret := r.ops[0], r.ops[1]
	if c.name != "stablehlo.compare" || len(c.args) != 2 || c.nres != 1 || !isReturn(ret.name) ||
		len(ret.args) != 1 || ret.args[0].name != c.results[0] {
		return 0, "", false
	}
	d := c.attrs["comparison_direction"]
	if d == nil || d.text != "LT" && d.text != "GT" {
		return 0, "", false
	}
	for k := 0; k < operands; k++ {
		if c.args[0].name == r.params[2*k].name && c.args[1].name == r.params[2*k+1].name {
			return k, d.text, true
		}
	}
	return 0, "", false
}

// linearIndex turns indices idx along axis (of idx's shape) into i32
// row-major positions in a tensor of that shape: idx·stride(axis) plus each
// other dimension's coordinate times its stride.
func (bd *builder) linearIndex(o *op, idx *ir.Value, axis int64) *ir.Value {
	dims := idx.Type.Dims()
	t := idx.Type
	stride := int64(1)
	var lin *ir.Value
	for d := len(dims) - 1; d >= 0; d-- {
		coord := idx
		if int64(d) != axis {
			coord = bd.emit(o, ir.OpIota, &ir.AxisAttr{Axis: int64(d)}, []ir.Type{t})
		}
		term := bd.emit(o, ir.OpMul, nil, nil, coord, bd.splat(o, t, stride))
		if lin == nil {
			lin = term
		} else {
			lin = bd.emit(o, ir.OpAdd, nil, nil, lin, term)
		}
		stride *= dims[d]
	}
	return lin
}
