package tensor

import (
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// Random makes a tensor of dtype dt and the given shape drawn
// deterministically from seed: floats uniform in [-1, 1) rounded to the dtype
// (a draw that rounds up to 1 is drawn again), signed integers uniform in
// [-8, 8], unsigned ones in [0, 16], i1 uniform in {false, true}. The
// generator is SplitMix64, fixed here so that the values never change with
// the Go version: the same seed, dtype and shape always give the same tensor.
func Random(seed int64, dt ir.DType, shape ...int64) *Tensor {
	t := shapeType("random", dt, shape)
	c := cpu.RandomTensor(t, uint64(seed), 1)
	return &Tensor{c: c}
}
