package cpu

import (
	"math/bits"

	"github.com/tpucc/tpucc/ir"
)

// The bit ops see an element as its w-bit pattern, whatever the dtype's
// signedness; the caller wraps each result back into the dtype.

// pattern is x's low w bits, zero extended.
func pattern(x int64, w int) uint64 {
	if w == 64 {
		return uint64(x)
	}
	return uint64(x) & (1<<w - 1)
}

// patternSigned is x's w-bit pattern read as a signed number.
func patternSigned(x int64, w int) int64 { return int64(pattern(x, w)<<(64-w)) >> (64 - w) }

// shift is shift_left, shift_right_logical or shift_right_arithmetic on
// w-bit elements. The amount is read as unsigned (a negative one is huge);
// from w on, the left and logical shifts give 0 and the arithmetic one
// fills with the top bit, as XLA defines it.
func shift(op ir.Op, w int) func(a, b int64) int64 {
	return func(a, b int64) int64 {
		n := pattern(b, w)
		switch op {
		case ir.OpShiftLeft:
			if n >= uint64(w) {
				return 0
			}
			return int64(pattern(a, w) << n)
		case ir.OpShiftRightLogical:
			if n >= uint64(w) {
				return 0
			}
			return int64(pattern(a, w) >> n)
		}
		return patternSigned(a, w) >> min(n, uint64(w-1))
	}
}

// bitCount is popcnt or clz on w-bit elements.
func bitCount(op ir.Op, w int) func(int64) int64 {
	if op == ir.OpPopcnt {
		return func(x int64) int64 { return int64(bits.OnesCount64(pattern(x, w))) }
	}
	return func(x int64) int64 { return int64(bits.LeadingZeros64(pattern(x, w)) - (64 - w)) }
}
