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
	c := cpu.NewTensor(t)
	g := splitMix(uint64(seed))
	g.next() // decorrelate nearby seeds
	for k := range c.Len() {
		switch {
		case dt.IsFloat():
			for {
				v := dt.RoundFloat(-1 + 2*g.float())
				if v < 1 {
					c.F[k] = v
					break
				}
			}
		case dt.IsSigned():
			c.I[k] = int64(g.next()%17) - 8
		case dt.IsUnsigned():
			c.I[k] = int64(g.next() % 17)
		default: // i1
			c.I[k] = int64(g.next() >> 63)
		}
	}
	return &Tensor{c: c}
}

type splitMix uint64

func (s *splitMix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// float is uniform in [0, 1) with 53 random bits.
func (s *splitMix) float() float64 { return float64(s.next()>>11) / (1 << 53) }
