package stablehlo

import (
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// sortBody is the comparator tpucc writes for top_k ({D} = GT) and argsort
// ({D} = LT): one compare of the two values in total order ({C}: TOTALORDER
// for floats, SIGNED or UNSIGNED for integers).
const sortBody = "stablehlo.compare p0 p1 compare_type={C} comparison_direction={D};stablehlo.return v0.0;"

// sort maps a sort of values and their i32 iota along the sorted axis with
// that comparator: descending along the last axis is top_k with k the axis's
// length (both results), ascending is argsort (the indices; a use of the
// sorted values is refused, ir has no op for them alone). Stable or not, a
// stable sort is a valid result.
func (bd *builder) sort(o *op, args []*ir.Value) {
	general := func() { bd.generalSort(o, args) }
	if len(args) < 1 || len(o.regions) != 1 || o.nres != len(args) || len(o.outs) != len(args) {
		bd.s.failf(o.pos, "%s needs one comparator region and as many results as operands (at least one)", o.name)
	}
	x := args[0]
	axis := bd.attr(o, "dimension").int(bd.s, "dimension")
	if len(args) > 2 || len(args) == 2 && (args[1].Def == nil || args[1].Def.Op != ir.OpIota) {
		if !bd.keySort(o, args, axis) {
			general()
		}
		return
	}
	if len(args) == 2 {
		idx := args[1]
		if idx.Type.DType != ir.I32 || idx.Def == nil || idx.Def.Op != ir.OpIota || idx.Def.Attr.(*ir.AxisAttr).Axis != axis {
			general()
		}
	}
	c := "TOTALORDER"
	switch dt := x.Type.DType; {
	case dt.IsSigned():
		c = "SIGNED"
	case dt.IsUnsigned() || dt == ir.I1:
		c = "UNSIGNED"
	}
	body := canonical(o.regions[0])
	switch {
	case len(args) == 2 && body == strings.NewReplacer("{C}", c, "{D}", "GT").Replace(sortBody) && axis == int64(x.Type.Rank()-1):
		in, err := bd.b.Emit(ir.OpTopK, &ir.TopKAttr{K: x.Type.Dims()[axis]}, nil, x)
		if err != nil {
			bd.s.failf(o.pos, "%s: %v", o.name, err)
		}
		bd.results(o, in.Results...)
	case body == strings.NewReplacer("{C}", c, "{D}", "LT").Replace(sortBody):
		idx := bd.emit(o, ir.OpArgsort, &ir.AxisAttr{Axis: axis}, nil, x)
		if x.Type.Rank() > 1 {
			bd.define(o.results[0], bd.sortedValues(o, x, axis), o.pos)
		}
		bd.ascending(o, x, idx)
	case body == jaxSortBody && x.Type.DType == ir.F32:
		bd.ascending(o, x, bd.emit(o, ir.OpArgsort, &ir.AxisAttr{Axis: axis}, nil, bd.canonicalise(o, x)))
	default:
		if !bd.keySort(o, args, axis) {
			general()
		}
	}
}

// ascending binds an ascending sort's results: the indices, and the sorted
// values as x taken at them where x has one axis (ir has no gather along an
// axis of a higher rank; a use of them there is refused).
func (bd *builder) ascending(o *op, x, idx *ir.Value) {
	switch {
	case bd.vals[o.results[0]] != nil:
	case x.Type.Rank() == 1:
		bd.define(o.results[0], bd.emit(o, ir.OpTake, &ir.AxisAttr{Axis: 0}, nil, x, idx), o.pos)
	default:
		bd.unbound[o.results[0]] = "the sorted values of a " + o.name + " of rank above 1"
	}
	if len(o.results) == 2 {
		if !idx.Type.Equal(o.outs[1]) {
			bd.s.failf(o.pos, "%s: result 1 is %s, the text says %s", o.name, mlirType(idx.Type), mlirType(o.outs[1]))
		}
		bd.define(o.results[1], idx, o.pos)
	}
}

// sortedValues sorts x ascending along axis in total order: top_k of the
// whole axis (moved last) is the values descending, and ties in total order
// are equal bits, so reversing it gives the ascending values exactly.
func (bd *builder) sortedValues(o *op, x *ir.Value, axis int64) *ir.Value {
	rank := int64(x.Type.Rank())
	perm := make([]int64, 0, rank)
	for d := int64(0); d < rank; d++ {
		if d != axis {
			perm = append(perm, d)
		}
	}
	perm = append(perm, axis)
	inv := make([]int64, rank)
	for i, d := range perm {
		inv[d] = int64(i)
	}
	t := bd.emit(o, ir.OpTranspose, &ir.PermAttr{Perm: perm}, nil, x)
	in, err := bd.b.Emit(ir.OpTopK, &ir.TopKAttr{K: x.Type.Dims()[axis]}, nil, t)
	if err != nil {
		bd.s.failf(o.pos, "%s: %v", o.name, err)
	}
	sorted := bd.reverseAxis(o, in.Results[0], rank-1)
	return bd.emit(o, ir.OpTranspose, &ir.PermAttr{Perm: inv}, nil, sorted)
}
