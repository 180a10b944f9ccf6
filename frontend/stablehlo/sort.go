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
	refuse := func() {
		bd.s.failf(o.pos, "unsupported form of %s (only the sorts of values and their indices tpucc writes for top_k and argsort)", o.name)
	}
	if len(args) != 2 || len(o.regions) != 1 || o.nres != 2 || len(o.outs) != 2 {
		refuse()
	}
	x, idx := args[0], args[1]
	axis := bd.attr(o, "dimension").int(bd.s, "dimension")
	if idx.Type.DType != ir.I32 || idx.Def == nil || idx.Def.Op != ir.OpIota || idx.Def.Attr.(*ir.AxisAttr).Axis != axis {
		refuse()
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
	case body == strings.NewReplacer("{C}", c, "{D}", "GT").Replace(sortBody) && axis == int64(x.Type.Rank()-1):
		in, err := bd.b.Emit(ir.OpTopK, &ir.TopKAttr{K: x.Type.Dims()[axis]}, nil, x)
		if err != nil {
			bd.s.failf(o.pos, "%s: %v", o.name, err)
		}
		bd.results(o, in.Results...)
	case body == strings.NewReplacer("{C}", c, "{D}", "LT").Replace(sortBody):
		v := bd.emit(o, ir.OpArgsort, &ir.AxisAttr{Axis: axis}, nil, x)
		if !v.Type.Equal(o.outs[1]) {
			refuse()
		}
		bd.define(o.results[1], v, o.pos)
		bd.unbound[o.results[0]] = "the sorted values of an argsort-form " + o.name
	default:
		refuse()
	}
}
