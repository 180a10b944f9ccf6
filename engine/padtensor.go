package engine

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// padTo returns t grown to dims (each at least t's), the new elements zero
// (false for i1). The real elements keep their indices.
func padTo(t *backend.Buffer, dims []int64) *backend.Buffer {
	out := backend.New(ir.Tensor(t.Type().DType, dims...))
	copyCorner(out, t, t.Type().Dims())
	return out
}

// sliceTo returns the leading dims corner of t.
func sliceTo(t *backend.Buffer, dims []int64) *backend.Buffer {
	out := backend.New(ir.Tensor(t.Type().DType, dims...))
	copyCorner(out, t, dims)
	return out
}

// copyCorner copies the elements with index < region (in every dimension)
// from src to dst, both row-major, keeping their indices.
func copyCorner(dst, src *backend.Buffer, region []int64) {
	for _, n := range region {
		if n == 0 {
			return
		}
	}
	dd, sd := dst.Type().Dims(), src.Type().Dims()
	z := int64(dst.Type().DType.Size())
	db, sb := dst.Bytes(), src.Bytes()
	rank := len(region)
	if rank == 0 {
		copy(db, sb)
		return
	}
	// Rows along the last dimension are contiguous in both.
	run := region[rank-1]
	idx := make([]int64, rank-1)
	for {
		so, do := int64(0), int64(0)
		for d := 0; d < rank-1; d++ {
			so = so*sd[d] + idx[d]
			do = do*dd[d] + idx[d]
		}
		so *= sd[rank-1]
		do *= dd[rank-1]
		copy(db[do*z:(do+run)*z], sb[so*z:(so+run)*z])
		d := rank - 2
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < region[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}
