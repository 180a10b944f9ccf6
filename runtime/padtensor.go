package runtime

import (
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// padTo returns t grown to dims (each at least t's), the new elements zero
// (false for i1). The real elements keep their indices.
func padTo(t *cpu.Tensor, dims []int64) *cpu.Tensor {
	out := cpu.NewTensor(ir.Tensor(t.Type.DType, dims...))
	copyCorner(out, t, t.Type.Dims())
	return out
}

// sliceTo returns the leading dims corner of t.
func sliceTo(t *cpu.Tensor, dims []int64) *cpu.Tensor {
	out := cpu.NewTensor(ir.Tensor(t.Type.DType, dims...))
	copyCorner(out, t, dims)
	return out
}

// copyCorner copies the elements with index < region (in every dimension)
// from src to dst, both row-major, keeping their indices.
func copyCorner(dst, src *cpu.Tensor, region []int64) {
	for _, n := range region {
		if n == 0 {
			return
		}
	}
	dd, sd := dst.Type.Dims(), src.Type.Dims()
	rank := len(region)
	if rank == 0 {
		copy(dst.F, src.F)
		copy(dst.I, src.I)
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
		if dst.Type.DType.IsFloat() {
			copy(dst.F[do:do+run], src.F[so:so+run])
		} else {
			copy(dst.I[do:do+run], src.I[so:so+run])
		}
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
