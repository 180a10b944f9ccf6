package cpu

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestRaggedDot: rows go to groups in order; negative sizes count as 0; rows
// past the last group are 0; groups past m are cut; NaN and inf in a group
// that owns no row do not reach any row.
func TestRaggedDot(t *testing.T) {
	// lhs rows are [r, 1]; rhs[i] = [[i+1], [10]] so row r in group i gives r*(i+1) + 10.
	lhs := F(f32(4, 2), 0, 1, 1, 1, 2, 1, 3, 1)
	rhs := F(f32(3, 2, 1), 1, 10, 2, 10, 3, 10)
	poisoned := F(f32(3, 2, 1), 1, 10, nan, inf, 3, 10)
	runCases(t, []opCase{
		{name: "groups in order", op: ir.OpRaggedDot, args: ts(lhs, rhs, I(i32(3), 1, 2, 1)),
			want: ts(F(f32(4, 1), 10, 12, 14, 19))},
		{name: "rows past the groups are zero", op: ir.OpRaggedDot, args: ts(lhs, rhs, I(i32(3), 1, 0, 1)),
			want: ts(F(f32(4, 1), 10, 13, 0, 0))},
		{name: "negative sizes count as zero", op: ir.OpRaggedDot, args: ts(lhs, rhs, I(i32(3), 2, -5, 2)),
			want: ts(F(f32(4, 1), 10, 11, 16, 19))},
		{name: "groups past m are cut", op: ir.OpRaggedDot, args: ts(lhs, rhs, I(i32(3), 3, 9, 9)),
			want: ts(F(f32(4, 1), 10, 11, 12, 16))},
		{name: "an empty group's NaN stays out", op: ir.OpRaggedDot, args: ts(lhs, poisoned, I(i32(3), 2, 0, 2)),
			want: ts(F(f32(4, 1), 10, 11, 16, 19))},
		{name: "integers wrap", op: ir.OpRaggedDot, args: ts(I(i8(1, 2), 100, 100), I(i8(1, 2, 1), 1, 1), I(i32(1), 1)),
			want: ts(I(i8(1, 1), -56))},
		{name: "wider accumulation", op: ir.OpRaggedDot, hint: []ir.Type{i32(1, 1)},
			args: ts(I(i8(1, 2), 100, 100), I(i8(1, 2, 1), 1, 1), I(i32(1), 1)), want: ts(I(i32(1, 1), 200))},
	})
}

// TestRaggedContract: result[i] is lhsᵀ·rhs over group i's rows; a group with
// no rows is 0, rows past the groups add nothing, negative sizes count as 0 and
// groups past m are cut, as ragged_dot's rows.
func TestRaggedContract(t *testing.T) {
	// lhs rows are [r, 1] and rhs rows [1, r]: group rows R give [[ΣR, Σr²], [|R|, ΣR]].
	lhs := F(f32(4, 2), 0, 1, 1, 1, 2, 1, 3, 1)
	rhs := F(f32(4, 2), 1, 0, 1, 1, 1, 2, 1, 3)
	runCases(t, []opCase{
		{name: "groups in order", op: ir.OpRaggedContract, args: ts(lhs, rhs, I(i32(3), 1, 2, 1)),
			want: ts(F(f32(3, 2, 2), 0, 0, 1, 0, 3, 5, 2, 3, 3, 9, 1, 3))},
		{name: "rows past the groups add nothing", op: ir.OpRaggedContract, args: ts(lhs, rhs, I(i32(3), 1, 0, 1)),
			want: ts(F(f32(3, 2, 2), 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1))},
		{name: "negative sizes count as zero", op: ir.OpRaggedContract, args: ts(lhs, rhs, I(i32(3), 2, -5, 2)),
			want: ts(F(f32(3, 2, 2), 1, 1, 2, 1, 0, 0, 0, 0, 5, 13, 2, 5))},
		{name: "groups past m are cut", op: ir.OpRaggedContract, args: ts(lhs, rhs, I(i32(3), 3, 9, 9)),
			want: ts(F(f32(3, 2, 2), 3, 5, 3, 3, 3, 9, 1, 3, 0, 0, 0, 0))},
		{name: "integers wrap", op: ir.OpRaggedContract, args: ts(I(i8(2, 1), 100, 100), I(i8(2, 1), 1, 1), I(i32(1), 2)),
			want: ts(I(i8(1, 1, 1), -56))},
		{name: "wider accumulation", op: ir.OpRaggedContract, hint: []ir.Type{i32(1, 1, 1)},
			args: ts(I(i8(2, 1), 100, 100), I(i8(2, 1), 1, 1), I(i32(1), 2)), want: ts(I(i32(1, 1, 1), 200))},
	})
}
