package cpu

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
)

func TestTake(t *testing.T) {
	x := F(f32(3, 2), 1, 2, 3, 4, 5, 6)
	runCases(t, []opCase{
		{name: "take rows, clamped", op: ir.OpTake, attr: &ir.AxisAttr{Axis: 0},
			args: ts(x, I(i32(4), 2, -1, 7, 1)), want: ts(F(f32(4, 2), 5, 6, 1, 2, 5, 6, 3, 4))},
		{name: "take axis 1 with 2d indices", op: ir.OpTake, attr: &ir.AxisAttr{Axis: 1},
			args: ts(x, I(i64(2, 2), 1, 0, 0, 9)), want: ts(F(f32(3, 2, 2), 2, 1, 1, 2, 4, 3, 3, 4, 6, 5, 5, 6))},
		{name: "take scalar index", op: ir.OpTake, attr: &ir.AxisAttr{Axis: 0},
			args: ts(I(i1(3), 0, 1, 0), I(u8(), 1)), want: ts(I(i1(), 1))},
		{name: "take u32 index saturates high", op: ir.OpTake, attr: &ir.AxisAttr{Axis: 0},
			args: ts(I(i32(3), 10, 20, 30), I(u32(1), 4294967295)), want: ts(I(i32(1), 30))},
		{name: "take no indices", op: ir.OpTake, attr: &ir.AxisAttr{Axis: 0},
			args: ts(I(i32(3), 10, 20, 30), I(i32(0))), want: ts(I(i32(0)))},
		{name: "take nothing from empty axis", op: ir.OpTake, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(f32(0, 2)), I(i32(0))), want: ts(F(f32(0, 2)))},
	})
	_, err := runOp(ir.OpTake, &ir.AxisAttr{Axis: 0}, nil, F(f32(0)), I(i32(1), 0))
	want := "t.tir:2:3: error: take from f32[0]: axis 0 is empty, so there is nothing to take"
	if err == nil || err.Error() != want {
		t.Errorf("take from empty axis: got %v, want %s", err, want)
	}
}

func TestScatterAdd(t *testing.T) {
	runCases(t, []opCase{
		{name: "duplicates accumulate, out of range dropped", op: ir.OpScatterAdd, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(f32(3), 1, 1, 1), I(i32(5), 0, 2, 0, -1, 3), F(f32(5), 10, 20, 30, 40, 50)),
			want: ts(F(f32(3), 41, 1, 21))},
		{name: "rows of a matrix", op: ir.OpScatterAdd, attr: &ir.AxisAttr{Axis: 0},
			args: ts(I(i32(2, 2), 0, 0, 0, 0), I(i32(3), 1, 1, 0), I(i32(3, 2), 1, 2, 3, 4, 5, 6)),
			want: ts(I(i32(2, 2), 5, 6, 4, 6))},
		{name: "axis 1", op: ir.OpScatterAdd, attr: &ir.AxisAttr{Axis: 1},
			args: ts(F(f32(2, 3), 0, 0, 0, 0, 0, 0), I(i32(2), 2, 2), F(f32(2, 2), 1, 2, 3, 4)),
			want: ts(F(f32(2, 3), 0, 0, 3, 0, 0, 7))},
		{name: "i8 wraps", op: ir.OpScatterAdd, attr: &ir.AxisAttr{Axis: 0},
			args: ts(I(i8(1), 100), I(i32(2), 0, 0), I(i8(2), 20, 10)), want: ts(I(i8(1), -126))},
		// Sequential bf16 adds round each time: 1 + 2^-8 = 1 twice.
		{name: "bf16 rounds per add", op: ir.OpScatterAdd, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(bf16(1), 1), I(i32(2), 0, 0), F(bf16(2), 1.0/256, 1.0/256)), want: ts(F(bf16(1), 1))},
		{name: "scalar index", op: ir.OpScatterAdd, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(f32(2), 1, 2), I(i32(), 1), F(f32(), 5)), want: ts(F(f32(2), 1, 7))},
	})
}

func TestDynamicSlice(t *testing.T) {
	x := I(i32(3, 4), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	sizes := &ir.SizesAttr{Sizes: []int64{2, 2}}
	runCases(t, []opCase{
		{name: "in range", op: ir.OpDynamicSlice, attr: sizes, args: ts(x, I(i32(), 1), I(i32(), 1)),
			want: ts(I(i32(2, 2), 5, 6, 9, 10))},
		{name: "clamped", op: ir.OpDynamicSlice, attr: sizes, args: ts(x, I(i32(), -5), I(i32(), 3)),
			want: ts(I(i32(2, 2), 2, 3, 6, 7))},
		{name: "clamped high, u32 starts", op: ir.OpDynamicSlice, attr: sizes, args: ts(x, I(u32(), 4294967295), I(u32(), 0)),
			want: ts(I(i32(2, 2), 4, 5, 8, 9))},
		{name: "whole", op: ir.OpDynamicSlice, attr: &ir.SizesAttr{Sizes: []int64{1}}, args: ts(F(f32(1), 7), I(i8(), 100)),
			want: ts(F(f32(1), 7))},
		{name: "scalar operand", op: ir.OpDynamicSlice, attr: &ir.SizesAttr{Sizes: []int64{}}, args: ts(F(f32(), 3)),
			want: ts(F(f32(), 3))},
		{name: "update in range", op: ir.OpDynamicUpdateSlice,
			args: ts(x, I(i32(1, 2), -1, -2), I(i64(), 2), I(i64(), 1)),
			want: ts(I(i32(3, 4), 0, 1, 2, 3, 4, 5, 6, 7, 8, -1, -2, 11))},
		{name: "update clamped", op: ir.OpDynamicUpdateSlice,
			args: ts(x, I(i32(2, 2), -1, -2, -3, -4), I(i32(), 5), I(i32(), -1)),
			want: ts(I(i32(3, 4), 0, 1, 2, 3, -1, -2, 6, 7, -3, -4, 10, 11))},
		{name: "update empty", op: ir.OpDynamicUpdateSlice,
			args: ts(F(f32(2), 1, 2), F(f32(0)), I(i32(), 9)), want: ts(F(f32(2), 1, 2))},
	})
}

func TestOneHot(t *testing.T) {
	runCases(t, []opCase{
		{name: "f32 with out of range", op: ir.OpOneHot, attr: &ir.DepthAttr{Depth: 3}, hint: tys(f32(4, 3)),
			args: ts(I(i32(4), 0, 2, 3, -1)), want: ts(F(f32(4, 3), 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0))},
		{name: "i1 from scalar", op: ir.OpOneHot, attr: &ir.DepthAttr{Depth: 2}, hint: tys(i1(2)),
			args: ts(I(u8(), 1)), want: ts(I(i1(2), 0, 1))},
		{name: "i32 2d", op: ir.OpOneHot, attr: &ir.DepthAttr{Depth: 2}, hint: tys(i32(2, 1, 2)),
			args: ts(I(i64(2, 1), 1, 0)), want: ts(I(i32(2, 1, 2), 0, 1, 1, 0))},
		{name: "depth 0", op: ir.OpOneHot, attr: &ir.DepthAttr{Depth: 0}, hint: tys(bf16(2, 0)),
			args: ts(I(i32(2), 0, 1)), want: ts(F(bf16(2, 0)))},
	})
}

func TestTopK(t *testing.T) {
	topk := func(k int64) *ir.TopKAttr { return &ir.TopKAttr{K: k} }
	negNaN := -nan
	runCases(t, []opCase{
		{name: "ties lower index first", op: ir.OpTopK, attr: topk(3),
			args: ts(F(f32(5), 1, 3, 2, 3, 3)), want: ts(F(f32(3), 3, 3, 3), I(i32(3), 1, 3, 4))},
		{name: "NaN largest, -NaN smallest, +0 above -0", op: ir.OpTopK, attr: topk(6),
			args: ts(F(f32(6), negZero, negNaN, 0, inf, nan, -inf)),
			want: ts(F(f32(6), nan, inf, 0, negZero, -inf, negNaN), I(i32(6), 4, 3, 2, 0, 5, 1))},
		{name: "rows", op: ir.OpTopK, attr: topk(2),
			args: ts(I(i32(2, 3), 5, 1, 9, -1, -3, -2)), want: ts(I(i32(2, 2), 9, 5, -1, -2), I(i32(2, 2), 2, 0, 0, 2))},
		{name: "k=0", op: ir.OpTopK, attr: topk(0),
			args: ts(F(f32(3), 1, 2, 3)), want: ts(F(f32(0)), I(i32(0)))},
		{name: "u8", op: ir.OpTopK, attr: topk(1),
			args: ts(I(u8(3), 200, 255, 1)), want: ts(I(u8(1), 255), I(i32(1), 1))},
	})
}

func TestArgsort(t *testing.T) {
	negNaN := -nan
	runCases(t, []opCase{
		{name: "stable", op: ir.OpArgsort, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(f32(6), 2, 1, 2, 1, 0, 2)), want: ts(I(i32(6), 4, 1, 3, 0, 2, 5))},
		{name: "total order", op: ir.OpArgsort, attr: &ir.AxisAttr{Axis: 0},
			args: ts(F(f32(7), nan, 0, negZero, -inf, negNaN, 1, inf)), want: ts(I(i32(7), 4, 3, 2, 1, 5, 6, 0))},
		{name: "axis 0 of a matrix", op: ir.OpArgsort, attr: &ir.AxisAttr{Axis: 0},
			args: ts(I(i8(3, 2), 3, -1, 1, -1, 2, -5)), want: ts(I(i32(3, 2), 1, 2, 2, 0, 0, 1))},
		{name: "axis 1", op: ir.OpArgsort, attr: &ir.AxisAttr{Axis: 1},
			args: ts(I(u32(2, 2), 4294967295, 0, 1, 1)), want: ts(I(i32(2, 2), 1, 0, 0, 1))},
		{name: "empty", op: ir.OpArgsort, attr: &ir.AxisAttr{Axis: 0}, args: ts(F(f32(0))), want: ts(I(i32(0)))},
	})
}
