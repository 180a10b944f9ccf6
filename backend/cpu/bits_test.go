package cpu

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestBitOps: the shifts, popcnt and clz on bit patterns, with the values
// XLA:CPU gives (jax's lax.shift_*, population_count, clz): amounts read as
// unsigned, past the width saturating; arithmetic shifts of unsigned types
// fill with the top bit too.
func TestBitOps(t *testing.T) {
	sl, srl, sra := ir.OpShiftLeft, ir.OpShiftRightLogical, ir.OpShiftRightArithmetic
	u8a, u8b := I(u8(5), 200, 1, 128, 255, 7), I(u8(5), 1, 8, 200, 7, 0)
	i64a, i64b := I(i64(4), math.MinInt64, 1, 0, -1), I(i64(4), 63, 64, -5, 1)
	i32a, i32b := I(i32(6), -8, 1, 5, -1, 7, 3), I(i32(6), 33, 32, -1, 31, 0, 40)
	u32a, u32b := I(u32(3), 0x80000000, 3, 0), I(u32(3), 31, 4294967295, 32)
	runCases(t, []opCase{
		{name: "shl u8", op: sl, args: ts(u8a, u8b), want: ts(I(u8(5), 144, 0, 0, 128, 7))},
		{name: "shr u8", op: srl, args: ts(u8a, u8b), want: ts(I(u8(5), 100, 0, 0, 1, 7))},
		{name: "sar u8", op: sra, args: ts(u8a, u8b), want: ts(I(u8(5), 228, 0, 255, 255, 7))},
		{name: "shl i64", op: sl, args: ts(i64a, i64b), want: ts(I(i64(4), 0, 0, 0, -2))},
		{name: "shr i64", op: srl, args: ts(i64a, i64b), want: ts(I(i64(4), 1, 0, 0, math.MaxInt64))},
		{name: "sar i64", op: sra, args: ts(i64a, i64b), want: ts(I(i64(4), -1, 0, 0, -1))},
		{name: "shl i32", op: sl, args: ts(i32a, i32b), want: ts(I(i32(6), 0, 0, 0, math.MinInt32, 7, 0))},
		{name: "shr i32", op: srl, args: ts(i32a, i32b), want: ts(I(i32(6), 0, 0, 0, 1, 7, 0))},
		{name: "sar i32", op: sra, args: ts(i32a, i32b), want: ts(I(i32(6), -1, 0, 0, -1, 7, 0))},
		{name: "shl u32", op: sl, args: ts(u32a, u32b), want: ts(I(u32(3), 0, 0, 0))},
		{name: "shr u32", op: srl, args: ts(u32a, u32b), want: ts(I(u32(3), 1, 0, 0))},
		{name: "sar u32", op: sra, args: ts(u32a, u32b), want: ts(I(u32(3), 4294967295, 0, 0))},
		{name: "popcnt u8", op: ir.OpPopcnt, args: ts(u8a), want: ts(I(u8(5), 3, 1, 1, 8, 3))},
		{name: "popcnt i64", op: ir.OpPopcnt, args: ts(i64a), want: ts(I(i64(4), 1, 1, 0, 64))},
		{name: "popcnt i16", op: ir.OpPopcnt, args: ts(I(i16(2), -1, 0x0f0f)), want: ts(I(i16(2), 16, 8))},
		{name: "clz u8", op: ir.OpClz, args: ts(u8a), want: ts(I(u8(5), 0, 7, 0, 0, 5))},
		{name: "clz i64", op: ir.OpClz, args: ts(i64a), want: ts(I(i64(4), 0, 63, 64, 0))},
		{name: "clz u32", op: ir.OpClz, args: ts(u32a), want: ts(I(u32(3), 0, 30, 32))},
		{name: "clz i8", op: ir.OpClz, args: ts(I(i8(3), -1, 1, 0)), want: ts(I(i8(3), 0, 7, 8))},
	})
}

// TestRoundAFZAndTan: round_afz rounds halves away from zero (XLA gives
// [-3 -1 1 2 3 -0 0] for these), tan is the f32-rounded tangent.
func TestRoundAFZAndTan(t *testing.T) {
	runCases(t, []opCase{
		{name: "round_afz", op: ir.OpRoundAFZ, args: ts(F(f32(7), -2.5, -0.5, 0.5, 1.5, 2.5, -0.4, r32(0.49999997))),
			want: ts(F(f32(7), -3, -1, 1, 2, 3, negZero, 0))},
		{name: "round_afz bf16", op: ir.OpRoundAFZ, args: ts(F(bf16(3), 0.5, -1.5, inf)), want: ts(F(bf16(3), 1, -2, inf))},
		{name: "tan", op: ir.OpTan, args: ts(F(f32(4), 0, negZero, 1, inf)), want: ts(F(f32(4), 0, negZero, r32(math.Tan(1)), nan))},
	})
}

// TestReducePrecision: the StableHLO interpreter suite's values (f64 to
// e5m10 and e5m0), and rounding on the dtype's own bit pattern: an f16
// subnormal's mantissa rounds like any other, a carry into the exponent,
// ties to even.
func TestReducePrecision(t *testing.T) {
	rp := func(e, m int64) *ir.ReducePrecisionAttr {
		return &ir.ReducePrecisionAttr{ExponentBits: e, MantissaBits: m}
	}
	nanBits := math.Float64frombits(0x7FFFFFFFFFFFFFFF)
	runCases(t, []opCase{
		{name: "f64 e5m10", op: ir.OpReducePrecision, attr: rp(5, 10),
			args: ts(F(f64(6), inf, nanBits, math.Float64frombits(1), 0, 65505, 65520)),
			want: ts(F(f64(6), inf, nan, 0, 0, 65504, inf))},
		{name: "f64 e5m0 NaN", op: ir.OpReducePrecision, attr: rp(5, 0), args: ts(F(f64(2), nanBits, -nan)), want: ts(F(f64(2), inf, -inf))},
		{name: "f16 e5m2", op: ir.OpReducePrecision, attr: rp(5, 2),
			args: ts(F(f16(4), 6e-8, 1.125, 1.375, 1.875)), want: ts(F(f16(4), 0, 1, 1.5, 2))}, // the subnormal rounds too
		{name: "f32 e8m0", op: ir.OpReducePrecision, attr: rp(8, 0), args: ts(F(f32(3), 1.5, 2.5, -3)), want: ts(F(f32(3), 2, 2, -2))}, // 1.5·2: a tie, to the even exponent
	})
}
