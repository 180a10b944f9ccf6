package stablehlo

import (
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// scatter reads StableHLO's general scatter with an add body as one
// scatter_add of the flattened updates into the flattened operand, at each
// update element's row-major position (found as gather finds a result
// element's). Starts are not clamped: a window that does not fit in the
// operand is dropped whole, as XLA drops it (its positions are made one
// past the end, which scatter_add drops).
func (bd *builder) scatter(o *op, args []*ir.Value) *ir.Value {
	refuse := func() {
		bd.s.failf(o.pos, "unsupported form of %s: the dimension numbers, operands and result type do not agree (or a shape is not static)", o.name)
	}
	f := bd.indexForm(o, "scatter_dimension_numbers", [5]string{"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims", "scatter_indices_batching_dims"})
	dn := bd.attr(o, "scatter_dimension_numbers").dict
	ints := func(k string) []int64 {
		if v := dn[k]; v != nil {
			return v.ints(bd.s, k)
		}
		return nil
	}
	x, idx, upd := args[0], args[1], args[2]
	g := gatherDims{offset: f.window, collapsed: f.collapsed, startMap: f.toOperand,
		opBatch: ints("input_batching_dims"), idxBatch: ints("scatter_indices_batching_dims"), ivd: f.ivd}
	w := 0
	for d := int64(0); d < int64(x.Type.Rank()); d++ {
		switch {
		case slices.Contains(g.collapsed, d) || slices.Contains(g.opBatch, d):
			g.sizes = append(g.sizes, 1)
		case w < len(g.offset) && g.offset[w] >= 0 && g.offset[w] < int64(upd.Type.Rank()):
			g.sizes = append(g.sizes, upd.Type.Dims()[g.offset[w]])
			w++
		default:
			refuse()
		}
	}
	if len(o.outs) != 1 || !o.outs[0].Equal(x.Type) || !g.valid(x.Type, idx.Type, upd.Type) {
		refuse()
	}
	out := upd.Type.WithDType(ir.I32)
	var valid, lin *ir.Value
	stride := int64(1)
	xd := x.Type.Dims()
	for d := len(xd) - 1; d >= 0; d-- {
		c := bd.gatherCoord(o, g, idx, int64(d), xd[d], out, &valid)
		term := bd.emit(o, ir.OpMul, nil, nil, c, bd.splat(o, out, stride))
		if lin == nil {
			lin = term
		} else {
			lin = bd.emit(o, ir.OpAdd, nil, nil, lin, term)
		}
		stride *= xd[d]
	}
	n, _ := x.Type.NumElements()
	if valid != nil {
		lin = bd.emit(o, ir.OpSelect, nil, nil, valid, lin, bd.splat(o, out, n))
	}
	m, _ := upd.Type.NumElements()
	flat := func(v *ir.Value, k int64) *ir.Value {
		return bd.emit(o, ir.OpReshape, nil, []ir.Type{v.Type.WithShape([]ir.Dim{ir.D(k)})}, v)
	}
	r := bd.emit(o, ir.OpScatterAdd, &ir.AxisAttr{Axis: 0}, nil, flat(x, n), flat(lin, m), flat(upd, m))
	return bd.emit(o, ir.OpReshape, nil, []ir.Type{x.Type}, r)
}
