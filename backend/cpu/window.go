package cpu

import (
	"fmt"
	"math"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// reduce_window and select_and_scatter walk each window's positions in
// row-major order. A position of reduce_window's window that falls in the
// padding or between dilated elements holds init; select_and_scatter only
// considers positions inside x. Both read their operands whole into
// float64 (int64) copies: the scratch of ir.ScratchConv.

// windowPos maps position k of window i along dimension d to x's index,
// false when it falls in the padding or a hole.
func windowPos(w *ir.Window, dims []int64, d int, i, k int64) (int64, bool) {
	p := i*w.Stride[d] + k*w.WindowDilation[d] - w.PadLow[d]
	bd := w.BaseDilation[d]
	if p < 0 || p%bd != 0 || p/bd >= dims[d] {
		return 0, false
	}
	return p / bd, true
}

// eachWindow calls f with each window's index (row-major over the windows'
// shape out) and, for each of its positions, x's flat index or -1.
func eachWindow(w *ir.Window, dims, out []int64, f func(win int, pos []int)) {
	n := len(dims)
	strides := make([]int64, n)
	s := int64(1)
	for d := n - 1; d >= 0; d-- {
		strides[d] = s
		s *= dims[d]
	}
	for _, o := range out {
		if o == 0 {
			return
		}
	}
	i, k := make([]int64, n), make([]int64, n)
	var pos []int
	for win := 0; ; win++ {
		pos = pos[:0]
		clear(k)
		for {
			flat, in := int64(0), true
			for d := 0; d < n && in; d++ {
				var p int64
				p, in = windowPos(w, dims, d, i[d], k[d])
				flat += p * strides[d]
			}
			if !in {
				flat = -1
			}
			pos = append(pos, int(flat))
			if !nextIndex64(k, w.Size) {
				break
			}
		}
		f(win, pos)
		if !nextIndex64(i, out) {
			return
		}
	}
}

func nextIndex64(idx, sizes []int64) bool {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < sizes[d] {
			return true
		}
		idx[d] = 0
	}
	return false
}

func reduceWindowKernel(in *ir.Instr, x, init *backend.Buffer) *backend.Buffer {
	a := in.Attr.(*ir.ReduceWindowAttr)
	out := backend.New(in.Results[0].Type)
	dims, od := x.Type().Dims(), out.Type().Dims()
	if x.Type().DType.IsFloat() {
		xs := make([]float64, x.Len())
		x.ReadFloat64s(0, xs)
		reduceWindows(a, dims, od, xs, init.Float64At(0), combineFloat, out.SetFloat64)
		return out
	}
	xs := make([]int64, x.Len())
	x.ReadInt64s(0, xs)
	reduceWindows(a, dims, od, xs, init.Int64At(0), combineInt, out.SetInt64)
	return out
}

// reduceWindows combines each window of xs from iv, a position in the
// padding (p < 0) counting as iv, and sets the window's result.
func reduceWindows[T float64 | int64](a *ir.ReduceWindowAttr, dims, od []int64, xs []T, iv T,
	combine func(ir.ReduceKind, T, T) T, set func(int, T)) {
	eachWindow(&a.Window, dims, od, func(win int, pos []int) {
		acc := iv
		for _, p := range pos {
			v := iv
			if p >= 0 {
				v = xs[p]
			}
			acc = combine(a.Kind, acc, v)
		}
		set(win, acc)
	})
}

// combineFloat is one step of a float reduction; max and min propagate NaN.
func combineFloat(k ir.ReduceKind, a, b float64) float64 {
	switch k {
	case ir.ReduceSum:
		return a + b
	case ir.ReduceProd:
		return a * b
	case ir.ReduceMax, ir.ReduceMin:
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		if k == ir.ReduceMax {
			return math.Max(a, b)
		}
		return math.Min(a, b)
	}
	panic(fmt.Sprintf("cpu: reduce_window of kind %d", k))
}

func combineInt(k ir.ReduceKind, a, b int64) int64 {
	switch k {
	case ir.ReduceSum:
		return a + b
	case ir.ReduceProd:
		return a * b
	case ir.ReduceMax:
		return max(a, b)
	case ir.ReduceMin:
		return min(a, b)
	}
	panic(fmt.Sprintf("cpu: reduce_window of kind %d", k))
}

func selectScatterKernel(in *ir.Instr, x, src, init *backend.Buffer) *backend.Buffer {
	a := in.Attr.(*ir.SelectScatterAttr)
	out := backend.New(in.Results[0].Type)
	dims := x.Type().Dims()
	sd := src.Type().Dims()
	float := x.Type().DType.IsFloat()
	var xs, ss, acc []float64
	var xi, si, acci []int64
	if float {
		xs, ss, acc = make([]float64, x.Len()), make([]float64, src.Len()), make([]float64, out.Len())
		x.ReadFloat64s(0, xs)
		src.ReadFloat64s(0, ss)
	} else {
		xi, si, acci = make([]int64, x.Len()), make([]int64, src.Len()), make([]int64, out.Len())
		x.ReadInt64s(0, xi)
		src.ReadInt64s(0, si)
	}
	keep := func(p, q int) bool { // select(x[p], x[q]): keep p
		if float {
			return compareFloat(a.Select, xs[p], xs[q])
		}
		return compareInt(a.Select, xi[p], xi[q])
	}
	eachWindow(&a.Window, dims, sd, func(win int, pos []int) {
		sel := -1
		for _, p := range pos {
			if p >= 0 && (sel < 0 || !keep(sel, p)) {
				sel = p
			}
		}
		switch {
		case sel < 0:
		case float:
			acc[sel] += ss[win]
		default:
			acci[sel] += si[win]
		}
	})
	for i := range out.Len() {
		if float {
			out.SetFloat64(i, init.Float64At(0)+acc[i])
		} else {
			out.SetInt64(i, init.Int64At(0)+acci[i])
		}
	}
	return out
}

// compareFloat is select's comparison; NaN compares false, as StableHLO's
// FLOAT comparisons do.
func compareFloat(d ir.CmpDir, a, b float64) bool {
	switch d {
	case ir.CmpGE:
		return a >= b
	case ir.CmpGT:
		return a > b
	case ir.CmpLE:
		return a <= b
	}
	return a < b
}

func compareInt(d ir.CmpDir, a, b int64) bool {
	switch d {
	case ir.CmpGE:
		return a >= b
	case ir.CmpGT:
		return a > b
	case ir.CmpLE:
		return a <= b
	}
	return a < b
}
