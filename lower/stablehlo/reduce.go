package stablehlo

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// reduction lowers reduce_*, argmax, argmin, cumsum, reduce_window and select_and_scatter.
func (e *emitter) reduction(in *ir.Instr, args []hv) hv {
	x, t := args[0], in.Results[0].Type
	switch in.Op {
	case ir.OpArgmax, ir.OpArgmin:
		return e.argReduce(x, in.Attr.(*ir.AxisAttr).Axis, in.Op == ir.OpArgmax)
	case ir.OpCumsum:
		return e.cumsum(x, in.Attr.(*ir.AxisAttr).Axis)
	case ir.OpReduceWindow:
		return e.reduceWindow(in.Attr.(*ir.ReduceWindowAttr), x, args[1], t)
	case ir.OpSelectAndScatter:
		return e.selectScatter(in.Attr.(*ir.SelectScatterAttr), x, args[1], args[2], t)
	}
	a := in.Attr.(*ir.AxesAttr)
	if len(a.Axes) == 0 {
		return x // reducing over no axes is the identity
	}
	var r hv
	switch k := in.Op.Info().Reduce; k {
	case ir.ReduceSum, ir.ReduceProd:
		// Half types accumulate in f32 and round once.
		w := x
		if isHalf(x.t.DType) {
			w = e.convert(x, ir.F32)
		}
		if k == ir.ReduceSum {
			r = e.reduce(w, "stablehlo.add", e.fconst(ir.Scalar(w.t.DType), 0), a.Axes)
		} else {
			r = e.reduce(w, "stablehlo.multiply", e.fconst(ir.Scalar(w.t.DType), 1), a.Axes)
		}
		r = e.convert(r, x.t.DType)
	case ir.ReduceMax:
		// maximum propagates NaN in XLA, and -inf (or the dtype's minimum) is
		// the result over an empty extent. Sub-byte values are ordered in
		// eight bits (exactByte), from the dtype's own extreme.
		w := e.exactByte(x)
		r = e.convert(e.reduce(w, "stablehlo.maximum", e.extreme(x.t.DType, w.t.DType, true), a.Axes), x.t.DType)
	case ir.ReduceMin:
		w := e.exactByte(x)
		r = e.convert(e.reduce(w, "stablehlo.minimum", e.extreme(x.t.DType, w.t.DType, false), a.Axes), x.t.DType)
	}
	return e.reshape(r, t) // keepdims
}

// extreme is dtype d's lowest (or, not low, highest) value as a scalar of
// w, the dtype its reduction runs in: d's own, or its byteWide.
func (e *emitter) extreme(d, w ir.DType, low bool) hv {
	if d == w {
		if low {
			return e.lowest(ir.Scalar(d))
		}
		return e.highest(ir.Scalar(d))
	}
	lo, hi := d.IntRange()
	if low {
		return e.iconst(ir.Scalar(w), lo)
	}
	return e.iconst(ir.Scalar(w), hi)
}

// reduce writes a single-op reduce over axes in the compact "applies" form.
func (e *emitter) reduce(x hv, op string, init hv, axes []int64) hv {
	dims := append([]int64(nil), axes...)
	sort.Slice(dims, func(i, j int) bool { return dims[i] < dims[j] })
	t := x.t.WithShape(dropDims(x.t.Shape, dims))
	return e.def(t, "stablehlo.reduce(", x.ref, " init: ", init.ref, ") applies ", op, " across dimensions = ", ints(dims),
		" : ", funcType([]hv{x, init}, []ir.Type{t}))
}

// dropDims returns shape without the listed dimensions.
func dropDims(shape []ir.Dim, dims []int64) []ir.Dim {
	out := []ir.Dim{}
	for i, d := range shape {
		drop := false
		for _, k := range dims {
			drop = drop || int64(i) == k
		}
		if !drop {
			out = append(out, d)
		}
	}
	return out
}

// keptDims lists the dimensions of a rank-r shape other than axis, which is
// how a value reduced over axis broadcasts back.
func keptDims(rank int, axis int64) []int64 {
	out := []int64{}
	for i := 0; i < rank; i++ {
		if int64(i) != axis {
			out = append(out, int64(i))
		}
	}
	return out
}

// argReduce lowers argmax (max true) and argmin: a two-operand reduce over the
// values and an i32 iota along axis, as jnp.argmax does. The reducer keeps the
// pair that is larger (smaller) in the order "NaN above every number, then by
// value, -0 == +0, then the lower index first". That order is total on
// (value, index) pairs, so the reducer is associative and commutative whatever
// order XLA combines elements in, and it gives the first index of the maximum,
// a NaN counting as the maximum. The init (-inf or the dtype's minimum, index 0)
// is an identity for every non-empty extent: it can only win a tie against a
// -inf, and then index 0 holds a -inf too. Over an empty extent the result is 0.
//
// Sub-byte values are compared in eight bits (exactByte): XLA:CPU rejects a
// variadic reduce whose operands' layouts differ, and a sub-byte layout
// always does.
func (e *emitter) argReduce(x hv, axis int64, isMax bool) hv {
	x = e.exactByte(x)
	d := x.t.DType
	s, si := ir.Scalar(d), ir.Scalar(ir.I32)
	idx := e.iota(x.t.WithDType(ir.I32), axis)
	var initV hv
	if isMax {
		initV = e.lowest(s)
	} else {
		initV = e.highest(s)
	}
	initI := e.iconst(si, 0)
	shape := dropDims(x.t.Shape, []int64{axis})
	res := e.defN([]ir.Type{x.t.WithShape(shape), {DType: ir.I32, Shape: shape}},
		"stablehlo.reduce(", x.ref, " init: ", initV.ref, "), (", idx.ref, " init: ", initI.ref, ") across dimensions = ",
		ints([]int64{axis}), " : ", funcType([]hv{x, idx, initV, initI}, []ir.Type{x.t.WithShape(shape), {DType: ir.I32, Shape: shape}}))
	// Block arguments are (acc value, acc index, next value, next index); the
	// pretty form prints them as pairs per operand.
	args := e.regionArgs([]ir.Type{s, si, s, si})
	av, ai, bv, bi := args[0], args[1], args[2], args[3]
	e.line(" reducer(", av.ref, ": ", tensorType(s), ", ", bv.ref, ": ", tensorType(s), ") (",
		ai.ref, ": ", tensorType(si), ", ", bi.ref, ": ", tensorType(si), ") {")
	e.push()
	dir := "GT"
	if !isMax {
		dir = "LT"
	}
	better := e.compare(dir, bv, av)
	tie := e.compare("EQ", bv, av)
	if d.IsFloat() {
		bNaN := e.compare("NE", bv, bv)
		aNaN := e.compare("NE", av, av)
		aNum := e.op1("stablehlo.not", aNaN)
		better = e.op2("stablehlo.or", better, e.op2("stablehlo.and", bNaN, aNum))
		tie = e.op2("stablehlo.or", tie, e.op2("stablehlo.and", bNaN, aNaN))
	}
	first := e.op2("stablehlo.and", tie, e.compare("LT", bi, ai))
	pick := e.op2("stablehlo.or", better, first)
	e.ret(e.selectOp(pick, bv, av), e.selectOp(pick, bi, ai))
	e.pop()
	e.line("}")
	return res[1]
}

// cumsum lowers an inclusive prefix sum as JAX does on TPU: a reduce_window
// whose window spans the whole axis, padded with n-1 zeros in front, so output
// i sums inputs 0..i. Half types accumulate in f32 and round once.
func (e *emitter) cumsum(x hv, axis int64) hv {
	n := x.t.Shape[axis].Size
	if n == 0 {
		return x
	}
	w := x
	if isHalf(x.t.DType) {
		w = e.convert(x, ir.F32)
	}
	zero := e.fconst(ir.Scalar(w.t.DType), 0)
	rank := x.t.Rank()
	window := make([]int64, rank)
	pads := make([]string, rank)
	for i := range window {
		window[i], pads[i] = 1, "[0, 0]"
	}
	window[axis] = n
	pads[axis] = fmt.Sprintf("[%d, 0]", n-1)
	r := e.def(w.t, `"stablehlo.reduce_window"(`, w.ref, ", ", zero.ref, ") <{padding = dense<[", strings.Join(pads, ", "),
		fmt.Sprintf("]> : tensor<%dx2xi64>, window_dimensions = ", rank), denseArray(window), "}> ({")
	e.binaryBody("stablehlo.add", w.t.DType)
	e.line("}) : ", funcType([]hv{w, zero}, []ir.Type{w.t}))
	return e.convert(r, x.t.DType)
}
