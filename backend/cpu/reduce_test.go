package cpu

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

func axes(keep bool, a ...int64) *ir.AxesAttr { return &ir.AxesAttr{Axes: a, KeepDims: keep} }

func TestReduce(t *testing.T) {
	x := F(f32(2, 3), 1, 2, 3, 4, 5, 6)
	e := F(f32(2, 0))
	runCases(t, []opCase{
		{name: "sum axis 0", op: ir.OpReduceSum, attr: axes(false, 0), args: ts(x), want: ts(F(f32(3), 5, 7, 9))},
		{name: "sum axis 1", op: ir.OpReduceSum, attr: axes(false, 1), args: ts(x), want: ts(F(f32(2), 6, 15))},
		{name: "sum all", op: ir.OpReduceSum, attr: axes(false, 0, 1), args: ts(x), want: ts(F(f32(), 21))},
		{name: "sum keepdims", op: ir.OpReduceSum, attr: axes(true, 1), args: ts(x), want: ts(F(f32(2, 1), 6, 15))},
		{name: "sum no axes", op: ir.OpReduceSum, attr: axes(false), args: ts(x), want: ts(x)},
		{name: "prod", op: ir.OpReduceProd, attr: axes(false, 1), args: ts(x), want: ts(F(f32(2), 6, 120))},
		{name: "max", op: ir.OpReduceMax, attr: axes(false, 0), args: ts(F(f32(2, 3), 1, nan, -inf, 0, 2, -inf)),
			want: ts(F(f32(3), 1, nan, -inf))},
		{name: "min", op: ir.OpReduceMin, attr: axes(false, 1), args: ts(F(f32(2, 3), 1, nan, -1, 0, 2, negZero)),
			want: ts(F(f32(2), nan, negZero))},
		{name: "max 3d middle axis", op: ir.OpReduceMax, attr: axes(false, 1),
			args: ts(I(i32(2, 2, 2), 1, 8, 3, 4, 5, 6, 7, -2)), want: ts(I(i32(2, 2), 3, 8, 7, 6))},

		// Empty extents give the identity.
		{name: "sum empty", op: ir.OpReduceSum, attr: axes(false, 1), args: ts(e), want: ts(F(f32(2), 0))},
		{name: "prod empty", op: ir.OpReduceProd, attr: axes(false, 1), args: ts(e), want: ts(F(f32(2), 1))},
		{name: "max empty", op: ir.OpReduceMax, attr: axes(false, 1), args: ts(e), want: ts(F(f32(2), -inf))},
		{name: "min empty", op: ir.OpReduceMin, attr: axes(false, 1), args: ts(e), want: ts(F(f32(2), inf))},
		{name: "max empty i32", op: ir.OpReduceMax, attr: axes(false, 0), args: ts(I(i32(0))), want: ts(I(i32(), math.MinInt32))},
		{name: "min empty u8", op: ir.OpReduceMin, attr: axes(false, 0), args: ts(I(u8(0))), want: ts(I(u8(), 255))},
		{name: "max empty u32", op: ir.OpReduceMax, attr: axes(false, 0), args: ts(I(u32(0))), want: ts(I(u32(), 0))},
		{name: "min empty i64", op: ir.OpReduceMin, attr: axes(false, 0), args: ts(I(i64(0))), want: ts(I(i64(), math.MaxInt64))},
		{name: "sum of empty result", op: ir.OpReduceSum, attr: axes(false, 1), args: ts(F(f32(0, 3))), want: ts(F(f32(0)))},

		// Integers wrap; bf16 sums round once; f32 products overflow as in f32.
		{name: "sum i8 wraps", op: ir.OpReduceSum, attr: axes(false, 0), args: ts(I(i8(3), 100, 100, -1)), want: ts(I(i8(), -57))},
		{name: "prod u8 wraps", op: ir.OpReduceProd, attr: axes(false, 0), args: ts(I(u8(2), 16, 17)), want: ts(I(u8(), 16))},
		{name: "sum bf16 rounds once", op: ir.OpReduceSum, attr: axes(false, 0),
			args: ts(F(bf16(3), 1, 1.0/256, 1.0/256)), want: ts(F(bf16(), 1+1.0/128))},
		{name: "prod f32 overflows", op: ir.OpReduceProd, attr: axes(false, 0),
			args: ts(F(f32(3), 1e30, 1e30, 1e-30)), want: ts(F(f32(), inf))},
		{name: "prod f64", op: ir.OpReduceProd, attr: axes(false, 0),
			args: ts(F(f64(3), 1e30, 1e30, 1e-30)), want: ts(F(f64(), 1.0000000000000002e+30))}, // f64 rounding at each step
	})
}

func TestArgmaxArgmin(t *testing.T) {
	runCases(t, []opCase{
		{name: "argmax first of ties", op: ir.OpArgmax, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(f32(4), 1, 3, 3, 2)), want: ts(I(i32(), 1))},
		{name: "argmax NaN wins", op: ir.OpArgmax, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(f32(5), 1, inf, nan, 3, nan)), want: ts(I(i32(), 2))},
		{name: "argmin NaN wins", op: ir.OpArgmin, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(f32(4), 1, -inf, nan, -5)), want: ts(I(i32(), 2))},
		{name: "argmin signed zeros tie", op: ir.OpArgmin, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(f32(3), 0, negZero, 1)), want: ts(I(i32(), 0))},
		{name: "argmax axis 0", op: ir.OpArgmax, attr: &ir.AxisAttr{Axis: 0},
			args: ts(I(i32(2, 3), 1, 5, 3, 4, 2, 3)), want: ts(I(i32(3), 1, 0, 0))},
		{name: "argmin axis 1", op: ir.OpArgmin, attr: &ir.AxisAttr{Axis: 1},
			args: ts(I(u8(2, 3), 9, 0, 0, 7, 8, 6)), want: ts(I(i32(2), 1, 2))},
		{name: "argmax empty axis", op: ir.OpArgmax, attr: &ir.AxisAttr{Axis: 1},
			args: ts(F(f32(2, 0))), want: ts(I(i32(2), 0, 0))},
		{name: "argmax bf16", op: ir.OpArgmax, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(bf16(3), -1, -0.5, -2)), want: ts(I(i32(), 1))},
	})
}

func TestCumsum(t *testing.T) {
	runCases(t, []opCase{
		{name: "cumsum axis 1", op: ir.OpCumsum, attr: &ir.AxisAttr{Axis: 1},
			args: ts(F(f32(2, 3), 1, 2, 3, 4, 5, 6)), want: ts(F(f32(2, 3), 1, 3, 6, 4, 9, 15))},
		{name: "cumsum axis 0", op: ir.OpCumsum, attr: &ir.AxisAttr{Axis: 0},
			args: ts(I(i32(2, 3), 1, 2, 3, 4, 5, 6)), want: ts(I(i32(2, 3), 1, 2, 3, 5, 7, 9))},
		{name: "cumsum i8 wraps", op: ir.OpCumsum, attr: &ir.AxisAttr{Axis: 0},
			args: ts(I(i8(3), 100, 100, 100)), want: ts(I(i8(3), 100, -56, 44))},
		{name: "cumsum bf16 rounds each once", op: ir.OpCumsum, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(bf16(3), 1, 1.0/256, 1.0/256)), want: ts(F(bf16(3), 1, 1, 1+1.0/128))},
		{name: "cumsum empty", op: ir.OpCumsum, attr: &ir.AxisAttr{Axis: 0}, args: ts(F(f32(0))), want: ts(F(f32(0)))},
		{name: "cumsum NaN", op: ir.OpCumsum, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(f32(3), 1, nan, 1)), want: ts(F(f32(3), 1, nan, nan))},
	})
}
