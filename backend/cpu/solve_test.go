package cpu

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestTriangularSolve: each flag on a 3x3 system with an exact solution;
// only a's named triangle is read (the other holds 100s), and a batch
// solves each matrix against its own b.
func TestTriangularSolve(t *testing.T) {
	ts3 := func(left, lower, trans, unit bool) *ir.TriangularSolveAttr {
		return &ir.TriangularSolveAttr{LeftSide: left, Lower: lower, TransposeA: trans, UnitDiagonal: unit}
	}
	a := F(f32(3, 3), 2, 100, 100, 1, 4, 100, 3, 5, 5) // lower triangle; 100s are never read
	runCases(t, []opCase{
		{name: "left lower", op: ir.OpTriangularSolve, attr: ts3(true, true, false, false),
			args: ts(a, F(f32(3, 1), 2, 5, 18)), want: ts(F(f32(3, 1), 1, 1, 2))},
		{name: "left lower transposed", op: ir.OpTriangularSolve, attr: ts3(true, true, true, false),
			args: ts(a, F(f32(3, 1), 13, 14, 10)), want: ts(F(f32(3, 1), 3, 1, 2))},
		{name: "right lower", op: ir.OpTriangularSolve, attr: ts3(false, true, false, false),
			args: ts(a, F(f32(1, 3), 6, 9, 5)), want: ts(F(f32(1, 3), 1, 1, 1))},
		{name: "left lower unit", op: ir.OpTriangularSolve, attr: ts3(true, true, false, true),
			args: ts(a, F(f32(3, 1), 1, 2, 9)), want: ts(F(f32(3, 1), 1, 1, 1))},
		{name: "left upper", op: ir.OpTriangularSolve, attr: ts3(true, false, false, false),
			args: ts(F(f64(2, 2), 2, 2, 100, 4), F(f64(2, 1), 6, 8)), want: ts(F(f64(2, 1), 1, 2))},
		{name: "batched", op: ir.OpTriangularSolve, attr: ts3(true, true, false, false),
			args: ts(F(f32(2, 1, 1), 2, 4), F(f32(2, 1, 2), 2, 4, 8, 12)), want: ts(F(f32(2, 1, 2), 1, 2, 2, 3))},
		{name: "empty", op: ir.OpTriangularSolve, attr: ts3(true, true, false, false),
			args: ts(F(f32(0, 0)), F(f32(0, 3))), want: ts(F(f32(0, 3)))},
	})
}
