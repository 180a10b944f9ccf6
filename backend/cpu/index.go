package cpu

import (
	"fmt"
	"math"
	"sort"

	"github.com/tpucc/tpucc/ir"
)

// Indexing kernels. Out-of-range indices never fail: take clamps them,
// scatter_add drops their updates, one_hot gives a row of zeros, and the
// dynamic slices clamp their starts so the window fits (StableHLO semantics).

// copyRow copies n elements from src at s to dst at d.
func copyRow(dst, src *Tensor, d, s, n int) {
	if dst.Type.DType.IsFloat() {
		copy(dst.F[d:d+n], src.F[s:s+n])
	} else {
		copy(dst.I[d:d+n], src.I[s:s+n])
	}
}

func takeKernel(in *ir.Instr, x, idx *Tensor) (*Tensor, error) {
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	out := NewTensor(in.Results[0].Type)
	outer, n, inner := splitAxis(x.Type.Dims(), axis)
	nj := idx.Len()
	if n == 0 && out.Len() > 0 {
		return nil, fmt.Errorf("take from %s: axis %d is empty, so there is nothing to take", x.Type, axis)
	}
	for o := 0; o < outer; o++ {
		for j := 0; j < nj; j++ {
			r := min(max(idx.I[j], 0), int64(n-1))
			copyRow(out, x, (o*nj+j)*inner, (o*n+int(r))*inner, inner)
		}
	}
	return out, nil
}

// scatterAddKernel adds update rows in row-major order of upd, rounding (or
// wrapping) after every addition, as a sequential scatter does; duplicates
// therefore accumulate in index order.
func scatterAddKernel(in *ir.Instr, x, idx, upd *Tensor) *Tensor {
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	out := x.clone()
	out.Type = in.Results[0].Type
	dt := x.Type.DType
	outer, n, inner := splitAxis(x.Type.Dims(), axis)
	nj := idx.Len()
	for o := 0; o < outer; o++ {
		for j := 0; j < nj; j++ {
			r := idx.I[j]
			if r < 0 || r >= int64(n) {
				continue
			}
			d, s := (o*n+int(r))*inner, (o*nj+j)*inner
			for k := 0; k < inner; k++ {
				if dt.IsFloat() {
					out.F[d+k] = dt.RoundFloat(out.F[d+k] + upd.F[s+k])
				} else {
					out.I[d+k] = dt.WrapInt(out.I[d+k] + upd.I[s+k])
				}
			}
		}
	}
	return out
}

// clampedStarts reads the scalar start indices and clamps each into
// [0, dim - size].
func clampedStarts(starts []*Tensor, dims, sizes []int64) int64 {
	xs := rowMajorStrides(dims)
	off := int64(0)
	for d, s := range starts {
		v := min(max(s.I[0], 0), dims[d]-sizes[d])
		off += v * xs[d]
	}
	return off
}

func dynamicSliceKernel(in *ir.Instr, x *Tensor, starts []*Tensor) *Tensor {
	t := in.Results[0].Type
	off := clampedStarts(starts, x.Type.Dims(), t.Dims())
	return gatherTensor(t, x, rowMajorStrides(x.Type.Dims()), off)
}

func dynamicUpdateSliceKernel(in *ir.Instr, x, upd *Tensor, starts []*Tensor) *Tensor {
	out := x.clone()
	out.Type = in.Results[0].Type
	dims, ud := x.Type.Dims(), upd.Type.Dims()
	off := clampedStarts(starts, dims, ud)
	st := rowMajorStrides(dims)
	if out.Type.DType.IsFloat() {
		scatter(out.F, upd.F, ud, st, off)
	} else {
		scatter(out.I, upd.I, ud, st, off)
	}
	return out
}

func oneHotKernel(in *ir.Instr, idx *Tensor) *Tensor {
	depth := in.Attr.(*ir.DepthAttr).Depth
	out := NewTensor(in.Results[0].Type)
	for j, v := range idx.I {
		if v < 0 || v >= depth {
			continue
		}
		p := int64(j)*depth + v
		if out.Type.DType.IsFloat() {
			out.F[p] = 1
		} else {
			out.I[p] = 1
		}
	}
	return out
}

// totalKey maps a float to an integer key whose signed order is IEEE 754
// totalOrder: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN. Embedding f32,
// f16 and bf16 values in float64 keeps their order, payloads included.
func totalKey(v float64) int64 {
	b := int64(math.Float64bits(v))
	if b < 0 {
		b ^= math.MaxInt64 // negative: reverse the magnitude order
	}
	return b
}

// sortKeys returns the keys by which x's elements are ordered.
func sortKeys(x *Tensor) []int64 {
	if !x.Type.DType.IsFloat() {
		return x.I
	}
	keys := make([]int64, len(x.F))
	for i, v := range x.F {
		keys[i] = totalKey(v)
	}
	return keys
}

// topKKernel takes, along the last axis, the k largest elements in descending
// total order, equal elements in ascending index order, and their i32 indices.
func topKKernel(in *ir.Instr, x *Tensor) []*Tensor {
	k := int(in.Attr.(*ir.TopKAttr).K)
	vals := NewTensor(in.Results[0].Type)
	inds := NewTensor(in.Results[1].Type)
	dims := x.Type.Dims()
	n := int(dims[len(dims)-1])
	keys := sortKeys(x)
	rows := 0
	if n > 0 {
		rows = x.Len() / n
	}
	order := make([]int, n)
	for r := 0; r < rows; r++ {
		row := keys[r*n : (r+1)*n]
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return row[order[a]] > row[order[b]] })
		for i := 0; i < k; i++ {
			copyRow(vals, x, r*k+i, r*n+order[i], 1)
			inds.I[r*k+i] = int64(order[i])
		}
	}
	return []*Tensor{vals, inds}
}

// argsortKernel gives, along axis, the i32 indices that sort x ascending in
// total order; the sort is stable.
func argsortKernel(in *ir.Instr, x *Tensor) *Tensor {
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	out := NewTensor(in.Results[0].Type)
	outer, n, inner := splitAxis(x.Type.Dims(), axis)
	keys := sortKeys(x)
	order := make([]int, n)
	for o := 0; o < outer; o++ {
		for j := 0; j < inner; j++ {
			at := func(i int) int64 { return keys[(o*n+i)*inner+j] }
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return at(order[a]) < at(order[b]) })
			for i, v := range order {
				out.I[(o*n+i)*inner+j] = int64(v)
			}
		}
	}
	return out
}
