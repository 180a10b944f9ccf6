package cpu

import (
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

func TestShapeOps(t *testing.T) {
	x23 := F(f32(2, 3), 1, 2, 3, 4, 5, 6)
	runCases(t, []opCase{
		{name: "reshape", op: ir.OpReshape, hint: tys(f32(3, 2)), args: ts(x23), want: ts(F(f32(3, 2), 1, 2, 3, 4, 5, 6))},
		{name: "reshape scalar", op: ir.OpReshape, hint: tys(i32(1, 1)), args: ts(I(i32(), 7)), want: ts(I(i32(1, 1), 7))},
		{name: "reshape to scalar", op: ir.OpReshape, hint: tys(i1()), args: ts(I(i1(1), 1)), want: ts(I(i1(), 1))},
		{name: "reshape zero-size", op: ir.OpReshape, hint: tys(f32(3, 0)), args: ts(F(f32(0, 2))), want: ts(F(f32(3, 0)))},

		{name: "broadcast scalar", op: ir.OpBroadcast, attr: &ir.DimsAttr{Dims: []int64{}}, hint: tys(f32(2, 3)),
			args: ts(F(f32(), 5)), want: ts(F(f32(2, 3), 5))},
		{name: "broadcast row", op: ir.OpBroadcast, attr: &ir.DimsAttr{Dims: []int64{1}}, hint: tys(i32(2, 3)),
			args: ts(I(i32(3), 1, 2, 3)), want: ts(I(i32(2, 3), 1, 2, 3, 1, 2, 3))},
		{name: "broadcast column", op: ir.OpBroadcast, attr: &ir.DimsAttr{Dims: []int64{0}}, hint: tys(i32(2, 3)),
			args: ts(I(i32(2), 1, 2)), want: ts(I(i32(2, 3), 1, 1, 1, 2, 2, 2))},
		{name: "broadcast size-1 dims", op: ir.OpBroadcast, attr: &ir.DimsAttr{Dims: []int64{0, 2}}, hint: tys(f32(2, 2, 3)),
			args: ts(F(f32(2, 1), 1, 2)), want: ts(F(f32(2, 2, 3), 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2))},
		{name: "broadcast transposing", op: ir.OpBroadcast, attr: &ir.DimsAttr{Dims: []int64{1, 0}}, hint: tys(f32(3, 2)),
			args: ts(x23), want: ts(F(f32(3, 2), 1, 4, 2, 5, 3, 6))},
		{name: "broadcast to zero-size", op: ir.OpBroadcast, attr: &ir.DimsAttr{Dims: []int64{1}}, hint: tys(f32(0, 3)),
			args: ts(F(f32(3), 1, 2, 3)), want: ts(F(f32(0, 3)))},

		{name: "transpose 2d", op: ir.OpTranspose, attr: &ir.PermAttr{Perm: []int64{1, 0}},
			args: ts(x23), want: ts(F(f32(3, 2), 1, 4, 2, 5, 3, 6))},
		{name: "transpose 3d", op: ir.OpTranspose, attr: &ir.PermAttr{Perm: []int64{2, 0, 1}},
			args: ts(I(i8(2, 2, 3), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)),
			want: ts(I(i8(3, 2, 2), 0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11))},
		{name: "transpose scalar", op: ir.OpTranspose, attr: &ir.PermAttr{Perm: []int64{}},
			args: ts(F(bf16(), 1.5)), want: ts(F(bf16(), 1.5))},

		{name: "slice strided", op: ir.OpSlice, attr: &ir.SliceAttr{Start: []int64{1}, Limit: []int64{8}, Stride: []int64{3}},
			args: ts(I(i32(10), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)), want: ts(I(i32(3), 1, 4, 7))},
		{name: "slice 2d", op: ir.OpSlice, attr: &ir.SliceAttr{Start: []int64{0, 1}, Limit: []int64{2, 3}, Stride: []int64{1, 1}},
			args: ts(x23), want: ts(F(f32(2, 2), 2, 3, 5, 6))},
		{name: "slice 2d strides", op: ir.OpSlice, attr: &ir.SliceAttr{Start: []int64{1, 0}, Limit: []int64{2, 3}, Stride: []int64{5, 2}},
			args: ts(x23), want: ts(F(f32(1, 2), 4, 6))},
		{name: "slice default stride", op: ir.OpSlice, attr: &ir.SliceAttr{Start: []int64{2}, Limit: []int64{4}},
			args: ts(I(u8(5), 1, 2, 3, 4, 5)), want: ts(I(u8(2), 3, 4))},
		{name: "slice empty", op: ir.OpSlice, attr: &ir.SliceAttr{Start: []int64{1, 1}, Limit: []int64{1, 3}},
			args: ts(x23), want: ts(F(f32(0, 2)))},

		{name: "concat axis 0", op: ir.OpConcat, attr: &ir.AxisAttr{Axis: 0},
			args: ts(I(i32(1, 2), 1, 2), I(i32(2, 2), 3, 4, 5, 6)), want: ts(I(i32(3, 2), 1, 2, 3, 4, 5, 6))},
		{name: "concat axis 1", op: ir.OpConcat, attr: &ir.AxisAttr{Axis: 1},
			args: ts(F(f32(2, 1), 1, 2), F(f32(2, 0)), F(f32(2, 2), 3, 4, 5, 6)), want: ts(F(f32(2, 3), 1, 3, 4, 2, 5, 6))},
		{name: "concat one", op: ir.OpConcat, attr: &ir.AxisAttr{Axis: 0},
			args: ts(I(i1(2), 1, 0)), want: ts(I(i1(2), 1, 0))},

		{name: "pad low high interior", op: ir.OpPad, attr: &ir.PadAttr{Low: []int64{1}, High: []int64{2}, Interior: []int64{1}},
			args: ts(F(f32(3), 1, 2, 3), F(f32(), 0)), want: ts(F(f32(8), 0, 1, 0, 2, 0, 3, 0, 0))},
		{name: "pad negative", op: ir.OpPad, attr: &ir.PadAttr{Low: []int64{-1}, High: []int64{-2}, Interior: []int64{0}},
			args: ts(I(i32(5), 1, 2, 3, 4, 5), I(i32(), 9)), want: ts(I(i32(2), 2, 3))},
		{name: "pad negative into interior", op: ir.OpPad, attr: &ir.PadAttr{Low: []int64{-2}, High: []int64{1}, Interior: []int64{2}},
			args: ts(I(i32(3), 1, 2, 3), I(i32(), 0)), want: ts(I(i32(6), 0, 2, 0, 0, 3, 0))},
		{name: "pad 2d", op: ir.OpPad, attr: &ir.PadAttr{Low: []int64{0, 1}, High: []int64{1, -1}, Interior: []int64{0, 0}},
			args: ts(x23, F(f32(), -1)), want: ts(F(f32(3, 3), -1, 1, 2, -1, 4, 5, -1, -1, -1))},
		{name: "pad empty operand", op: ir.OpPad, attr: &ir.PadAttr{Low: []int64{1}, High: []int64{1}},
			args: ts(F(bf16(0)), F(bf16(), 7)), want: ts(F(bf16(2), 7, 7))},

		{name: "iota axis 1", op: ir.OpIota, attr: &ir.AxisAttr{Axis: 1}, hint: tys(i32(2, 3)),
			want: ts(I(i32(2, 3), 0, 1, 2, 0, 1, 2))},
		{name: "iota axis 0", op: ir.OpIota, attr: &ir.AxisAttr{Axis: 0}, hint: tys(f32(2, 3)),
			want: ts(F(f32(2, 3), 0, 0, 0, 1, 1, 1))},
		{name: "iota zero-size", op: ir.OpIota, attr: &ir.AxisAttr{Axis: 0}, hint: tys(i32(0)), want: ts(I(i32(0)))},
	})
}

// TestIotaRounding: iota converts its index like convert does, rounding bf16
// (257 -> 256, a tie to even) and wrapping u8 (256 -> 0).
func TestIotaRounding(t *testing.T) {
	for _, c := range []struct {
		t     ir.Type
		check func(x *backend.Buffer) bool
	}{
		{bf16(300), func(x *backend.Buffer) bool {
			return x.Float64At(257) == 256 && x.Float64At(259) == 260 && x.Float64At(255) == 255
		}},
		{u8(300), func(x *backend.Buffer) bool {
			return x.Int64At(255) == 255 && x.Int64At(256) == 0 && x.Int64At(299) == 43
		}},
	} {
		got, err := runOp(ir.OpIota, &ir.AxisAttr{Axis: 0}, tys(c.t))
		if err != nil {
			t.Fatal(err)
		}
		if !c.check(got[0]) {
			t.Errorf("iota %s: %s", c.t, show(got[0]))
		}
	}
}
