package padding

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestU64PaddingValues: padding values of u64 are read, saturated and
// compared with reductions' identities as unsigned numbers, though ir holds
// them as int64 bit patterns.
func TestU64PaddingValues(t *testing.T) {
	two64 := math.Ldexp(1, 64)
	for _, c := range []struct {
		v    float64
		want int64
	}{{-3, 0}, {5.7, 5}, {math.Ldexp(1, 63), math.MinInt64}, {1e30, -1}} {
		if got := scalarLiteral(ir.U64, c.v).Int(0); got != c.want {
			t.Errorf("scalarLiteral(u64, %g) = %d, want %d", c.v, got, c.want)
		}
	}
	if got := litValue(ir.NewIntLiteral(ir.Scalar(ir.U64), []int64{-1}), ir.U64); got != two64 {
		t.Errorf("litValue of u64 2^64-1 = %g, want %g", got, two64)
	}
	if got := identity(ir.ReduceMin, ir.U64); got != two64 {
		t.Errorf("reduce_min's identity on u64 = %g, want %g", got, two64)
	}
	if got := identity(ir.ReduceMax, ir.U64); got != 0 {
		t.Errorf("reduce_max's identity on u64 = %g, want 0", got)
	}
}
