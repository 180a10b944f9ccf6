package cpu

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// Reductions. Sums accumulate in float64 (floats) or int64 (integers, which
// wrap once at the end: the same result as wrapping at every step) and round
// once into the dtype. Products round into f32 after every step for f32, f16
// and bf16 (f64 for f64), so that they overflow to inf where an f32 product
// would. Max and min propagate NaN. An empty extent gives the identity: 0 for
// sums, 1 for products, -inf (or the dtype's minimum) for max, +inf (or the
// maximum) for min.

// reduceOffsets calls fn(i, o) for every element i of x (row-major) with o the
// flat index, in the result, of the position it reduces into.
func reduceOffsets(dims []int64, drop []bool, fn func(i, o int)) {
	kept := []int64{}
	for d, n := range dims {
		if !drop[d] {
			kept = append(kept, n)
		}
	}
	ks := rowMajorStrides(kept)
	st := make([]int64, len(dims)) // result stride of each operand dimension, 0 if dropped
	k := 0
	for d := range dims {
		if !drop[d] {
			st[d] = ks[k]
			k++
		}
	}
	total := int64(1)
	for _, n := range dims {
		total *= n
	}
	if total == 0 {
		return
	}
	idx := make([]int64, len(dims))
	o := int64(0)
	for i := 0; i < int(total); i++ {
		fn(i, int(o))
		for d := len(dims) - 1; d >= 0; d-- {
			idx[d]++
			o += st[d]
			if idx[d] < dims[d] {
				break
			}
			o -= st[d] * dims[d]
			idx[d] = 0
		}
	}
}

func reduceKernel(in *ir.Instr, x *Tensor) *Tensor {
	a := in.Attr.(*ir.AxesAttr)
	out := NewTensor(in.Results[0].Type)
	dt := x.Type.DType
	dims := x.Type.Dims()
	drop := make([]bool, len(dims))
	for _, ax := range a.Axes {
		drop[ax] = true
	}
	if dt.IsFloat() {
		acc := dt
		if acc != ir.F64 {
			acc = ir.F32
		}
		var init float64
		var step func(s, v float64) float64
		switch in.Op {
		case ir.OpReduceSum:
			init, step = 0, func(s, v float64) float64 { return s + v }
		case ir.OpReduceProd:
			init, step = 1, func(s, v float64) float64 { return acc.RoundFloat(s * v) }
		case ir.OpReduceMax:
			init, step = math.Inf(-1), fmax
		default:
			init, step = math.Inf(1), fmin
		}
		fill(out.F, init)
		reduceOffsets(dims, drop, func(i, o int) { out.F[o] = step(out.F[o], x.F[i]) })
		for i, v := range out.F {
			out.F[i] = dt.RoundFloat(v)
		}
		return out
	}
	lo, hi := dt.IntRange()
	var init int64
	var step func(s, v int64) int64
	switch in.Op {
	case ir.OpReduceSum:
		init, step = 0, func(s, v int64) int64 { return s + v }
	case ir.OpReduceProd:
		init, step = 1, func(s, v int64) int64 { return s * v }
	case ir.OpReduceMax:
		init, step = lo, func(s, v int64) int64 { return max(s, v) }
	default:
		init, step = hi, func(s, v int64) int64 { return min(s, v) }
	}
	fill(out.I, init)
	reduceOffsets(dims, drop, func(i, o int) { out.I[o] = step(out.I[o], x.I[i]) })
	for i, v := range out.I {
		out.I[i] = dt.WrapInt(v)
	}
	return out
}

// splitAxis returns the sizes before, along and after axis: element (o, i, j)
// of x is at flat index (o*n + i)*inner + j.
func splitAxis(dims []int64, axis int) (outer, n, inner int) {
	outer, inner = 1, 1
	for _, d := range dims[:axis] {
		outer *= int(d)
	}
	for _, d := range dims[axis+1:] {
		inner *= int(d)
	}
	return outer, int(dims[axis]), inner
}

// argKernel finds the first maximum (argmax) or minimum (argmin) along axis. A
// NaN counts as both the largest and the smallest value, so the first NaN wins
// (as jnp.argmax and jnp.argmin). An empty axis gives index 0.
func argKernel(in *ir.Instr, x *Tensor) *Tensor {
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	out := NewTensor(in.Results[0].Type)
	outer, n, inner := splitAxis(x.Type.Dims(), axis)
	isMax := in.Op == ir.OpArgmax
	float := x.Type.DType.IsFloat()
	better := func(p, q int) bool { // is element p strictly better than the best so far, q?
		if float {
			v, b := x.F[p], x.F[q]
			if math.IsNaN(b) {
				return false
			}
			if math.IsNaN(v) {
				return true
			}
			if isMax {
				return v > b
			}
			return v < b
		}
		if isMax {
			return x.I[p] > x.I[q]
		}
		return x.I[p] < x.I[q]
	}
	for o := 0; o < outer; o++ {
		for j := 0; j < inner; j++ {
			best := 0
			for i := 1; i < n; i++ {
				if better((o*n+i)*inner+j, (o*n+best)*inner+j) {
					best = i
				}
			}
			out.I[o*inner+j] = int64(best)
		}
	}
	return out
}

// cumsumKernel is the inclusive prefix sum along axis, accumulated in float64
// or int64 and rounded (or wrapped) for each output element.
func cumsumKernel(in *ir.Instr, x *Tensor) *Tensor {
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	out := NewTensor(in.Results[0].Type)
	dt := x.Type.DType
	outer, n, inner := splitAxis(x.Type.Dims(), axis)
	for o := 0; o < outer; o++ {
		for j := 0; j < inner; j++ {
			var fs float64
			var is int64
			for i := 0; i < n; i++ {
				p := (o*n+i)*inner + j
				if dt.IsFloat() {
					fs += x.F[p]
					out.F[p] = dt.RoundFloat(fs)
				} else {
					is += x.I[p]
					out.I[p] = dt.WrapInt(is)
				}
			}
		}
	}
	return out
}
