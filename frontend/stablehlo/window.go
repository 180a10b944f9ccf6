package stablehlo

import (
	"github.com/tpucc/tpucc/ir"
)

var windowKinds = map[string]ir.ReduceKind{"stablehlo.add": ir.ReduceSum, "stablehlo.maximum": ir.ReduceMax,
	"stablehlo.minimum": ir.ReduceMin, "stablehlo.multiply": ir.ReduceProd}

// reduceWindow maps a single-input reduce_window whose body is one add,
// maximum, minimum or multiply.
func (bd *builder) reduceWindow(o *op, args []*ir.Value) *ir.Value {
	if len(args) != 2 {
		bd.s.failf(o.pos, "unsupported form of %s: %d inputs (only single-input reductions are supported)", o.name, len(args)/2)
	}
	kind, ok := windowKinds[bd.body(o)]
	if !ok && len(o.regions) == 1 {
		return bd.unrolledWindow(o, args[0], args[1])
	}
	if !ok || args[0].Type.DType == ir.I1 {
		bd.s.failf(o.pos, "unsupported form of %s: the body is not one add, maximum, minimum or multiply of numbers", o.name)
	}
	a := &ir.ReduceWindowAttr{Kind: kind, Window: bd.window(o, args[0].Type.Rank())}
	a.BaseDilation, a.WindowDilation = bd.optInts(o, "base_dilations"), bd.optInts(o, "window_dilations")
	return bd.emit(o, ir.OpReduceWindow, a, nil, args...)
}

func (bd *builder) window(o *op, rank int) ir.Window {
	w := ir.Window{Size: bd.ints(o, "window_dimensions"), Stride: bd.optInts(o, "window_strides")}
	w.PadLow, w.PadHigh = bd.convPadding(o, rank)
	return w
}

var selectDirs = map[string]ir.CmpDir{"GE": ir.CmpGE, "GT": ir.CmpGT, "LE": ir.CmpLE, "LT": ir.CmpLT}

// selectScatter maps select_and_scatter whose select body compares its two
// parameters in order (GE, GT, LE or LT) and whose scatter body adds.
func (bd *builder) selectScatter(o *op, args []*ir.Value) *ir.Value {
	refuse := func() {
		bd.s.failf(o.pos, "unsupported form of %s: the select body is not one GE, GT, LE or LT compare of its parameters, or the scatter body is not one add", o.name)
	}
	if len(args) != 3 || len(o.regions) != 2 || args[0].Type.DType == ir.I1 {
		refuse()
	}
	dir, ok := bd.selectDir(o.regions[0])
	if !ok || bd.body(&op{regions: o.regions[1:], attrs: map[string]*attr{}}) != "stablehlo.add" {
		refuse()
	}
	a := &ir.SelectScatterAttr{Select: dir, Window: bd.window(o, args[0].Type.Rank())}
	return bd.emit(o, ir.OpSelectAndScatter, a, nil, args...)
}

func (bd *builder) selectDir(r *region) (ir.CmpDir, bool) {
	if len(r.params) != 2 || len(r.ops) != 2 || r.params[0].typ.Rank() != 0 {
		return 0, false
	}
	c, ret := r.ops[0], r.ops[1]
	if c.name != "stablehlo.compare" || len(c.args) != 2 || c.nres != 1 || !isReturn(ret.name) || len(ret.args) != 1 || ret.args[0].name != c.results[0] {
		return 0, false
	}
	if c.args[0].name != r.params[0].name || c.args[1].name != r.params[1].name || c.args[0].idx != 0 || c.args[1].idx != 0 {
		return 0, false
	}
	if t := c.attrs["compare_type"]; t != nil && t.text != "FLOAT" && t.text != "SIGNED" && t.text != "UNSIGNED" {
		return 0, false
	}
	d := c.attrs["comparison_direction"]
	if d == nil {
		return 0, false
	}
	dir, ok := selectDirs[d.text]
	return dir, ok
}
