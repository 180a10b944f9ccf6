package llvm

import (
	"fmt"
	"math"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// TestBitOps: the shifts, popcnt and clz are generated (no reference
// fallback) and agree exactly with the reference executor on every pair of
// extremes and on amounts around the bit width (LLVM's shifts are poison
// from the width on; the op saturates).
func TestBitOps(t *testing.T) {
	b := testBackend(t)
	for _, d := range intDTypes {
		t.Run(d, func(t *testing.T) {
			dt, _ := ir.ParseDType(d)
			w := int64(dt.Bits())
			xs := append(extremes(dt), w-1, w, w+1, 2*w)
			n := len(xs) * len(xs)
			src := fmt.Sprintf("func @f(%%a: %[1]s[%[2]d], %%b: %[1]s[%[2]d]) -> (%[1]s[%[2]d], %[1]s[%[2]d], %[1]s[%[2]d], %[1]s[%[2]d], %[1]s[%[2]d]) {\n"+
				"  %%l = shift_left %%a, %%b : %[1]s[%[2]d]\n  %%r = shift_right_logical %%a, %%b : %[1]s[%[2]d]\n"+
				"  %%s = shift_right_arithmetic %%a, %%b : %[1]s[%[2]d]\n  %%p = popcnt %%a : %[1]s[%[2]d]\n"+
				"  %%c = clz %%a : %[1]s[%[2]d]\n  return %%l, %%r, %%s, %%p, %%c\n}\n", d, n)
			m, f, x := compileSrc(t, b, src)
			for _, op := range []ir.Op{ir.OpShiftLeft, ir.OpShiftRightLogical, ir.OpShiftRightArithmetic, ir.OpPopcnt, ir.OpClz} {
				if x.plan.generated[op] != 1 {
					t.Fatalf("%s not generated: generated %v, fallback %v", op, x.plan.generated, x.plan.fallback)
				}
			}
			var as, bs []int64
			for _, a := range xs {
				for _, v := range xs {
					as, bs = append(as, a), append(bs, v)
				}
			}
			agree(t, x, m, f, []*backend.Buffer{backend.FromInts(f.Params[0].Type, as...), backend.FromInts(f.Params[1].Type, bs...)})
		})
	}
}

// TestTanRoundAFZ: tan and round_afz are generated for f32 and agree with
// the reference executor (the oracle's f32 tolerance): round_afz on
// halves, signed zeros, infinities and NaN, tan near 0, 1, 3 and at inf.
func TestTanRoundAFZ(t *testing.T) {
	b := testBackend(t)
	xs := []float64{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, -0.4, 0, math.Copysign(0, -1), 1, -1.2, 3, math.Inf(1), math.NaN()}
	src := fmt.Sprintf("func @f(%%x: f32[%[1]d]) -> (f32[%[1]d], f32[%[1]d]) {\n"+
		"  %%t = tan %%x : f32[%[1]d]\n  %%r = round_afz %%x : f32[%[1]d]\n  return %%t, %%r\n}\n", len(xs))
	m, f, x := compileSrc(t, b, src)
	if x.plan.generated[ir.OpTan] != 1 || x.plan.generated[ir.OpRoundAFZ] != 1 {
		t.Fatalf("generated %v, fallback %v", x.plan.generated, x.plan.fallback)
	}
	agree(t, x, m, f, []*backend.Buffer{backend.FromFloats(f.Params[0].Type, xs...)})
}
