package cpu

import (
	"fmt"
	"math"
	"sort"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Indexing kernels. Out-of-range indices never fail: take clamps them,
// scatter_add drops their updates, one_hot gives a row of zeros, and the
// dynamic slices clamp their starts so the window fits (StableHLO semantics).

// copyRow copies n elements from src at s to dst at d.
func copyRow(dst, src *backend.Buffer, d, s, n int) {
	z := dst.Type().DType.Size()
	copy(dst.Bytes()[d*z:(d+n)*z], src.Bytes()[s*z:(s+n)*z])
}

func takeKernel(in *ir.Instr, x, idx *backend.Buffer) (*backend.Buffer, error) {
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	out := backend.New(in.Results[0].Type)
	outer, n, inner := splitAxis(x.Type().Dims(), axis)
	nj := idx.Len()
	if n == 0 && out.Len() > 0 {
		return nil, fmt.Errorf("take from %s: axis %d is empty, so there is nothing to take", x.Type(), axis)
	}
	for o := 0; o < outer; o++ {
		for j := 0; j < nj; j++ {
			r := min(max(indexAt(idx, j), 0), int64(n-1))
			copyRow(out, x, (o*nj+j)*inner, (o*n+int(r))*inner, inner)
		}
	}
	return out, nil
}

// scatterAddKernel adds update rows in row-major order of upd, rounding (or
// wrapping) after every addition, as a sequential scatter does; duplicates
// therefore accumulate in index order.
func scatterAddKernel(in *ir.Instr, x, idx, upd *backend.Buffer) *backend.Buffer {
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	out := retype(x, in.Results[0].Type)
	dt := x.Type().DType
	outer, n, inner := splitAxis(x.Type().Dims(), axis)
	nj := idx.Len()
	for o := 0; o < outer; o++ {
		for j := 0; j < nj; j++ {
			r := indexAt(idx, j)
			if r < 0 || r >= int64(n) {
				continue
			}
			d, s := (o*n+int(r))*inner, (o*nj+j)*inner
			for k := 0; k < inner; k++ {
				if dt.IsFloat() {
					out.SetFloat64(d+k, out.Float64At(d+k)+upd.Float64At(s+k))
				} else {
					out.SetInt64(d+k, out.Int64At(d+k)+upd.Int64At(s+k))
				}
			}
		}
	}
	return out
}

// indexAt reads element i of an index tensor; a u64 index of 2^63 or more,
// whose bit pattern is negative, is past any dimension: it reads as MaxInt64.
func indexAt(idx *backend.Buffer, i int) int64 {
	v := idx.Int64At(i)
	if v < 0 && idx.Type().DType == ir.U64 {
		return math.MaxInt64
	}
	return v
}

// clampedStarts reads the scalar start indices and clamps each into
// [0, dim - size].
func clampedStarts(starts []*backend.Buffer, dims, sizes []int64) int64 {
	xs := rowMajorStrides(dims)
	off := int64(0)
	for d, s := range starts {
		v := min(max(indexAt(s, 0), 0), dims[d]-sizes[d])
		off += v * xs[d]
	}
	return off
}

func dynamicSliceKernel(in *ir.Instr, x *backend.Buffer, starts []*backend.Buffer) *backend.Buffer {
	t := in.Results[0].Type
	off := clampedStarts(starts, x.Type().Dims(), t.Dims())
	return gatherTensor(t, x, rowMajorStrides(x.Type().Dims()), off)
}

func dynamicUpdateSliceKernel(in *ir.Instr, x, upd *backend.Buffer, starts []*backend.Buffer) *backend.Buffer {
	out := retype(x, in.Results[0].Type)
	dims, ud := x.Type().Dims(), upd.Type().Dims()
	off := clampedStarts(starts, dims, ud)
	st := rowMajorStrides(dims)
	switch out.Type().DType.Size() {
	case 1:
		scatter(out.Bytes(), upd.Bytes(), ud, st, off)
	case 2:
		scatter(backend.Words[uint16](out), backend.Words[uint16](upd), ud, st, off)
	case 4:
		scatter(backend.Words[uint32](out), backend.Words[uint32](upd), ud, st, off)
	case 8:
		scatter(backend.Words[uint64](out), backend.Words[uint64](upd), ud, st, off)
	default:
		scatter(backend.Words[[2]uint64](out), backend.Words[[2]uint64](upd), ud, st, off)
	}
	return out
}

func oneHotKernel(in *ir.Instr, idx *backend.Buffer) *backend.Buffer {
	depth := in.Attr.(*ir.DepthAttr).Depth
	out := backend.New(in.Results[0].Type)
	for j := range idx.Len() {
		v := indexAt(idx, j)
		if v < 0 || v >= depth {
			continue
		}
		out.SetInt64(int(int64(j)*depth+v), 1)
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

// lineKeys sets keys[i] to the key by which element at(i) of x is
// ordered. One line at a time: keys for all of x took 8 bytes an element
// (issue 29: argsort of an i8[2^26] held 1.39 GB for 320 MiB of tensors).
func lineKeys(x *backend.Buffer, keys []int64, at func(i int) int) {
	float := x.Type().DType.IsFloat()
	u64 := x.Type().DType == ir.U64
	for i := range keys {
		switch {
		case float:
			keys[i] = totalKey(x.Float64At(at(i)))
		case u64: // flipping the top bit makes signed order the unsigned one
			keys[i] = x.Int64At(at(i)) ^ math.MinInt64
		default:
			keys[i] = x.Int64At(at(i))
		}
	}
}

// lineOrder sorts the positions of a line by their keys, ascending or
// descending; sort.Stable on it allocates nothing per line (a closure for
// sort.SliceStable did, tens of bytes a line).
type lineOrder struct {
	order []int32
	keys  []int64
	desc  bool
}

func (l *lineOrder) Len() int      { return len(l.order) }
func (l *lineOrder) Swap(i, j int) { l.order[i], l.order[j] = l.order[j], l.order[i] }
func (l *lineOrder) Less(i, j int) bool {
	if l.desc {
		return l.keys[l.order[i]] > l.keys[l.order[j]]
	}
	return l.keys[l.order[i]] < l.keys[l.order[j]]
}

// topKKernel takes, along the last axis, the k largest elements in descending
// total order, equal elements in ascending index order, and their i32 indices.
func topKKernel(in *ir.Instr, x *backend.Buffer) []*backend.Buffer {
	k := int(in.Attr.(*ir.TopKAttr).K)
	vals := backend.New(in.Results[0].Type)
	inds := backend.New(in.Results[1].Type)
	dims := x.Type().Dims()
	n := int(dims[len(dims)-1])
	rows := 0
	if n > 0 {
		rows = x.Len() / n
	}
	order, row := make([]int32, n), make([]int64, n) // i32 results: n fits
	byKey := &lineOrder{order, row, true}
	for r := 0; r < rows; r++ {
		lineKeys(x, row, func(i int) int { return r*n + i })
		for i := range order {
			order[i] = int32(i)
		}
		sort.Stable(byKey)
		for i := 0; i < k; i++ {
			copyRow(vals, x, r*k+i, r*n+int(order[i]), 1)
			inds.SetInt64(r*k+i, int64(order[i]))
		}
	}
	return []*backend.Buffer{vals, inds}
}

// argsortKernel gives, along axis, the i32 indices that sort x ascending in
// total order; the sort is stable.
func argsortKernel(in *ir.Instr, x *backend.Buffer) *backend.Buffer {
	axis := int(in.Attr.(*ir.AxisAttr).Axis)
	out := backend.New(in.Results[0].Type)
	outer, n, inner := splitAxis(x.Type().Dims(), axis)
	order, keys := make([]int32, n), make([]int64, n) // i32 results: n fits
	byKey := &lineOrder{order, keys, false}
	for o := 0; o < outer; o++ {
		for j := 0; j < inner; j++ {
			lineKeys(x, keys, func(i int) int { return (o*n+i)*inner + j })
			for i := range order {
				order[i] = int32(i)
			}
			sort.Stable(byKey)
			for i, v := range order {
				out.SetInt64((o*n+i)*inner+j, int64(v))
			}
		}
	}
	return out
}
