package cpu

import (
	"math"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Reductions. Sums accumulate in float64 (floats) or int64 (integers, which
// wrap once at the end: the same result as wrapping at every step) and round
// once into the dtype. Products round into f32 after every step for f32, f16
// and bf16 (f64 for f64), so that they overflow to inf where an f32 product
// would. Max and min propagate NaN. An empty extent gives the identity: 0 for
// sums, 1 for products, -inf (or the dtype's minimum) for max, +inf (or the
// maximum) for min.

// reduceRows walks x (of shape dims, row-major) one innermost row at a time:
// fn(i, o, step, n) gets the row's first element i, the flat index o in the
// result of the position its first element reduces into, the result stride
// between consecutive elements of the row (0 when the last axis is dropped),
// and the row's length n. A rank-0 x is one row of one element.
func reduceRows(dims []int64, drop []bool, fn func(i, o, step, n int)) {
	kept := []int64{}
	for d, n := range dims {
		if !drop[d] {
			kept = append(kept, n)
		}
	}
	ks := rowMajorStrides(kept)
	st := make([]int64, len(dims)) // result stride of each operand dimension, 0 if dropped
	k := 0
	total := int64(1)
	for d, n := range dims {
		if !drop[d] {
			st[d] = ks[k]
			k++
		}
		total *= n
	}
	if total == 0 {
		return
	}
	rank := len(dims)
	if rank == 0 {
		fn(0, 0, 0, 1)
		return
	}
	last := int(dims[rank-1])
	idx := make([]int64, rank)
	o := int64(0)
	for i := 0; i < int(total); i += last {
		fn(i, int(o), int(st[rank-1]), last)
		for d := rank - 2; d >= 0; d-- {
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

func reduceKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	a := in.Attr.(*ir.AxesAttr)
	out := backend.New(in.Results[0].Type)
	dt := x.Type().DType
	dims := x.Type().Dims()
	drop := make([]bool, len(dims))
	for _, ax := range a.Axes {
		drop[ax] = true
	}
	if dt.IsComplex() {
		return complexReduce(in, x, drop)
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
		sums := make([]float64, out.Len())
		fill(sums, init)
		var row []float64
		reduceRows(dims, drop, func(i, o, st, n int) {
			row = grow(row, n)
			x.ReadFloat64s(i, row)
			for k, v := range row {
				sums[o+k*st] = step(sums[o+k*st], v)
			}
		})
		out.WriteFloat64s(0, sums)
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
	if dt == ir.U64 && (in.Op == ir.OpReduceMax || in.Op == ir.OpReduceMin) {
		step = u64Binary(map[ir.Op]ir.Op{ir.OpReduceMax: ir.OpMax, ir.OpReduceMin: ir.OpMin}[in.Op])
	}
	sums := make([]int64, out.Len())
	fill(sums, init)
	var row []int64
	reduceRows(dims, drop, func(i, o, st, n int) {
		row = grow(row, n)
		x.ReadInt64s(i, row)
		for k, v := range row {
			sums[o+k*st] = step(sums[o+k*st], v)
		}
	})
	out.WriteInt64s(0, sums)
	return out
}

// grow returns s resized to n elements, reusing its storage when it can.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
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
func argKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	out := backend.New(in.Results[0].Type)
	outer, n, inner := splitAxis(x.Type().Dims(), axis)
	isMax := in.Op == ir.OpArgmax
	float, u64 := x.Type().DType.IsFloat(), x.Type().DType == ir.U64
	better := func(p, q int) bool { // is element p strictly better than the best so far, q?
		if float {
			v, b := x.Float64At(p), x.Float64At(q)
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
		v, b := x.Int64At(p), x.Int64At(q)
		if u64 { // ordered as unsigned: flipping the top bit maps that order to int64's
			v, b = v^math.MinInt64, b^math.MinInt64
		}
		if isMax {
			return v > b
		}
		return v < b
	}
	for o := 0; o < outer; o++ {
		for j := 0; j < inner; j++ {
			best := 0
			for i := 1; i < n; i++ {
				if better((o*n+i)*inner+j, (o*n+best)*inner+j) {
					best = i
				}
			}
			out.SetInt64(o*inner+j, int64(best))
		}
	}
	return out
}

// cumsumKernel is the inclusive prefix sum along axis, accumulated in float64
// or int64 and rounded (or wrapped) for each output element.
func cumsumKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	out := backend.New(in.Results[0].Type)
	dt := x.Type().DType
	outer, n, inner := splitAxis(x.Type().Dims(), axis)
	for o := 0; o < outer; o++ {
		for j := 0; j < inner; j++ {
			var fs float64
			var is int64
			for i := 0; i < n; i++ {
				p := (o*n+i)*inner + j
				if dt.IsFloat() {
					fs += x.Float64At(p)
					out.SetFloat64(p, fs)
				} else {
					is += x.Int64At(p)
					out.SetInt64(p, is)
				}
			}
		}
	}
	return out
}
