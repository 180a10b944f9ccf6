package llvm

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// reduce_window runs as the ops this backend has kernels for, as a
// convolution does: x padded with init (base dilation as interior padding)
// into memory; every window's elements gathered by one take at constant
// indices, the trailing dimensions the window leaves whole (size, stride
// and dilation 1, no padding: a pooling's channels) kept as contiguous
// rows; the gathered windows reduced along their last axis; and init
// combined once, as StableHLO starts each window's reduction from it.

var windowReduceOps = map[ir.ReduceKind]struct{ reduce, combine ir.Op }{
	ir.ReduceSum: {ir.OpReduceSum, ir.OpAdd}, ir.ReduceMax: {ir.OpReduceMax, ir.OpMax},
	ir.ReduceMin: {ir.OpReduceMin, ir.OpMin}, ir.ReduceProd: {ir.OpReduceProd, ir.OpMul},
}

// windowExpanded returns the instructions that compute reduce_window in in
// its place, the last binding in's result, or nil when it stays whole
// (types without kernels, empty tensors, more elements than i32 indices
// reach).
func (pl *planner) windowExpanded(in *ir.Instr) []*ir.Instr {
	if in.Op != ir.OpReduceWindow || !(floatStatic(in) || intStatic(in)) {
		return nil
	}
	for _, v := range append(append([]*ir.Value{}, in.Args...), in.Results...) {
		if n, _ := v.Type.NumElements(); n == 0 && v.Type.Rank() > 0 {
			return nil
		}
	}
	f := &ir.Func{Name: "reduce_window", Body: &ir.Block{}}
	b := ir.NewBuilder(f)
	b.Pos = in.Pos
	y := windowGather(b, in)
	if y == nil {
		return nil
	}
	c := &ir.Instr{Op: ir.OpCopy, Args: []*ir.Value{y}, Results: []*ir.Value{in.Results[0]}, Pos: in.Pos}
	pl.synthetic[c] = true
	pl.p.generated[ir.OpReduceWindow]++
	return append(f.Body.Instrs, c)
}

func windowGather(b *ir.Builder, in *ir.Instr) *ir.Value {
	a := in.Attr.(*ir.ReduceWindowAttr)
	x, init := in.Args[0], in.Args[1]
	od := in.Results[0].Type.Dims()
	n := x.Type.Rank()
	// The trailing dimensions the window leaves whole stay rows.
	keep := n
	for keep > 0 && a.Size[keep-1] == 1 && a.Stride[keep-1] == 1 && a.BaseDilation[keep-1] == 1 &&
		a.PadLow[keep-1] == 0 && a.PadHigh[keep-1] == 0 {
		keep--
	}
	ops := windowReduceOps[a.Kind]
	if keep == 0 { // every window is one element
		t := x.Type
		return b.Op1(ops.combine, nil, x, b.Typed(ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, &t, init))
	}
	lo, hi, inner := make([]int64, n), make([]int64, n), make([]int64, n)
	for d := range n {
		lo[d], hi[d], inner[d] = a.PadLow[d], a.PadHigh[d], a.BaseDilation[d]-1
	}
	xp := b.Op1(ir.OpPad, &ir.PadAttr{Low: lo, High: hi, Interior: inner}, x, init)
	pd := xp.Type.Dims()
	rows, row := int64(1), int64(1)
	for d := range n {
		if d < keep {
			rows *= pd[d]
		} else {
			row *= pd[d]
		}
	}
	if rows > math.MaxInt32 {
		return nil
	}
	flat := reshape(b, xp, []int64{rows, row})
	w := &ir.ConvAttr{Stride: a.Stride[:keep], RhsDilation: a.WindowDilation[:keep]}
	idx := convRows(w, pd[:keep], od[:keep], a.Size[:keep])
	nwin := int64(1)
	for _, s := range a.Size[:keep] {
		nwin *= s
	}
	g := b.Op1(ir.OpTake, &ir.AxisAttr{Axis: 0}, flat, b.Const(ir.Tensor(ir.I32, int64(len(idx))), idx...))
	// [windows, window positions, row] -> reduced over the positions.
	nout := int64(len(idx)) / nwin
	g = reshape(b, g, []int64{nout, nwin, row})
	r := b.Op1(ops.reduce, &ir.AxesAttr{Axes: []int64{1}}, g)
	r = reshape(b, r, od)
	t := r.Type
	iv := b.Typed(ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, &t, init)
	return b.Op1(ops.combine, nil, r, iv)
}
