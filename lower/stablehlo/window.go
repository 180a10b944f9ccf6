package stablehlo

import (
	"fmt"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// reduceWindow lowers reduce_window as JAX prints lax.reduce_window. Half
// types sum (and multiply) in f32 and round once, as reduce_sum does.
func (e *emitter) reduceWindow(a *ir.ReduceWindowAttr, x, init hv, t ir.Type) hv {
	op := map[ir.ReduceKind]string{ir.ReduceSum: "stablehlo.add", ir.ReduceProd: "stablehlo.multiply",
		ir.ReduceMax: "stablehlo.maximum", ir.ReduceMin: "stablehlo.minimum"}[a.Kind]
	wide := isHalf(x.t.DType) && (a.Kind == ir.ReduceSum || a.Kind == ir.ReduceProd)
	if wide {
		x, init = e.convert(x, ir.F32), e.convert(init, ir.F32)
	}
	rt := t.WithDType(x.t.DType)
	r := e.def(rt, `"stablehlo.reduce_window"(`, x.ref, ", ", init.ref, ") <{base_dilations = ", denseArray(a.BaseDilation),
		", padding = ", padding(a.PadLow, a.PadHigh), ", window_dilations = ", denseArray(a.WindowDilation),
		", window_dimensions = ", denseArray(a.Size), ", window_strides = ", denseArray(a.Stride), "}> ({")
	e.binaryBody(op, x.t.DType)
	e.line("}) : ", funcType([]hv{x, init}, []ir.Type{rt}))
	return e.convert(r, t.DType)
}

// selectScatter lowers select_and_scatter as JAX prints max pooling's
// gradient: a compare body and an add body. Half types add in f32 and
// round once.
func (e *emitter) selectScatter(a *ir.SelectScatterAttr, x, src, init hv, t ir.Type) hv {
	if isHalf(x.t.DType) {
		x, src, init = e.convert(x, ir.F32), e.convert(src, ir.F32), e.convert(init, ir.F32)
	}
	rt := t.WithDType(x.t.DType)
	r := e.def(rt, `"stablehlo.select_and_scatter"(`, x.ref, ", ", src.ref, ", ", init.ref, ") <{padding = ", padding(a.PadLow, a.PadHigh),
		", window_dimensions = ", denseArray(a.Size), ", window_strides = ", denseArray(a.Stride), "}> ({")
	s := ir.Scalar(x.t.DType)
	args := e.regionArgs([]ir.Type{s, s})
	e.blockHeader(args)
	e.push()
	e.ret(e.compare(strings.ToUpper(a.Select.String()), args[0], args[1]))
	e.pop()
	e.line("}, {")
	e.binaryBody("stablehlo.add", x.t.DType)
	e.line("}) : ", funcType([]hv{x, src, init}, []ir.Type{rt}))
	return e.convert(r, t.DType)
}

// padding spells [low, high] pairs as the dense attribute JAX writes: a
// splat when every entry is 0.
func padding(lo, hi []int64) string {
	n := len(lo)
	zero := true
	pairs := make([]string, n)
	for i := range lo {
		zero = zero && lo[i] == 0 && hi[i] == 0
		pairs[i] = fmt.Sprintf("[%d, %d]", lo[i], hi[i])
	}
	if zero {
		return fmt.Sprintf("dense<0> : tensor<%dx2xi64>", n)
	}
	return fmt.Sprintf("dense<[%s]> : tensor<%dx2xi64>", strings.Join(pairs, ", "), n)
}
