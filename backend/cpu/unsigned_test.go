package cpu

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

func u16(d ...int64) ir.Type { return ir.Tensor(ir.U16, d...) }
func u64(d ...int64) ir.Type { return ir.Tensor(ir.U64, d...) }
func i2(d ...int64) ir.Type  { return ir.Tensor(ir.I2, d...) }
func i4(d ...int64) ir.Type  { return ir.Tensor(ir.I4, d...) }
func u2(d ...int64) ir.Type  { return ir.Tensor(ir.U2, d...) }
func u4(d ...int64) ir.Type  { return ir.Tensor(ir.U4, d...) }

// u64 values are held as their bit patterns: 2^64-1 is -1, 2^63 is MinInt64.
const (
	maxU64 = -1
	top64  = math.MinInt64
)

// TestUnsignedWide: u16 and u64 wrap, and u64 divides, compares, orders and
// reduces as unsigned even where its bit pattern is negative.
func TestUnsignedWide(t *testing.T) {
	cmp := func(dir ir.CmpDir) *ir.CompareAttr { return &ir.CompareAttr{Dir: dir} }
	runCases(t, []opCase{
		{name: "add u16 wraps", op: ir.OpAdd, args: ts(I(u16(2), 65535, 7), I(u16(2), 1, 65535)), want: ts(I(u16(2), 0, 6))},
		{name: "sub u64 wraps", op: ir.OpSub, args: ts(I(u64(2), 0, 5), I(u64(2), 1, 7)), want: ts(I(u64(2), maxU64, -2))},
		{name: "mul u64 wraps", op: ir.OpMul, args: ts(I(u64(2), top64, maxU64), I(u64(2), 2, maxU64)), want: ts(I(u64(2), 0, 1))},
		{name: "div u64", op: ir.OpDiv, args: ts(I(u64(3), maxU64, top64, 5), I(u64(3), 2, 3, 0)),
			want: ts(I(u64(3), math.MaxInt64, 3074457345618258602, maxU64))},
		{name: "rem u64", op: ir.OpRem, args: ts(I(u64(3), maxU64, top64, 7), I(u64(3), 10, 3, 0)), want: ts(I(u64(3), 5, 2, 7))},
		{name: "div u16 by 0", op: ir.OpDiv, args: ts(I(u16(2), 9, 65535), I(u16(2), 0, 2)), want: ts(I(u16(2), 65535, 32767))},
		{name: "max u64", op: ir.OpMax, args: ts(I(u64(2), 1, top64), I(u64(2), maxU64, 5)), want: ts(I(u64(2), maxU64, top64))},
		{name: "min u64", op: ir.OpMin, args: ts(I(u64(2), 1, top64), I(u64(2), maxU64, 5)), want: ts(I(u64(2), 1, 5))},
		{name: "pow u64", op: ir.OpPow, args: ts(I(u64(3), 2, 2, 3), I(u64(3), 63, 64, maxU64)),
			want: ts(I(u64(3), top64, 0, -6148914691236517205))}, // 3^(2^64-1) mod 2^64
		{name: "abs u64", op: ir.OpAbs, args: ts(I(u64(2), maxU64, 3)), want: ts(I(u64(2), maxU64, 3))},
		{name: "sign u64", op: ir.OpSign, args: ts(I(u64(3), maxU64, 0, 3)), want: ts(I(u64(3), 1, 0, 1))},
		{name: "neg u16", op: ir.OpNeg, args: ts(I(u16(2), 1, 0)), want: ts(I(u16(2), 65535, 0))},
		{name: "lt u64", op: ir.OpCompare, attr: cmp(ir.CmpLT), args: ts(I(u64(3), 1, maxU64, top64), I(u64(3), maxU64, 0, 1)),
			want: ts(I(i1(3), 1, 0, 0))},
		{name: "ge u32 0xFFFFFFFF", op: ir.OpCompare, attr: cmp(ir.CmpGE), args: ts(I(u32(2), 4294967295, 0), I(u32(2), 1, 4294967295)),
			want: ts(I(i1(2), 1, 0))},
		{name: "clamp u64", op: ir.OpClamp, args: ts(I(u64(), 2), I(u64(3), maxU64, 0, 5), I(u64(), top64)), want: ts(I(u64(3), top64, 2, 5))},
		{name: "reduce_max u64", op: ir.OpReduceMax, attr: &ir.AxesAttr{Axes: []int64{0}}, args: ts(I(u64(3), 5, maxU64, 7)), want: ts(I(u64(), maxU64))},
		{name: "reduce_min u64", op: ir.OpReduceMin, attr: &ir.AxesAttr{Axes: []int64{0}}, args: ts(I(u64(3), top64, maxU64, 7)), want: ts(I(u64(), 7))},
		// progen seed 20343: argmin compared u64 as int64.
		{name: "argmin u64", op: ir.OpArgmin, attr: &ir.AxisAttr{Axis: 0}, args: ts(I(u64(4), maxU64, top64, 7, 9)), want: ts(I(i32(), 2))},
		{name: "argmax u64", op: ir.OpArgmax, attr: &ir.AxisAttr{Axis: 0}, args: ts(I(u64(4), 7, top64, maxU64, 9)), want: ts(I(i32(), 2))},
		{name: "argsort u64", op: ir.OpArgsort, attr: &ir.AxisAttr{Axis: 0}, args: ts(I(u64(3), maxU64, 0, top64)), want: ts(I(i32(3), 1, 2, 0))},
	})
}

// TestSubByte: i2, i4, u2 and u4 wrap to their width after every op.
func TestSubByte(t *testing.T) {
	runCases(t, []opCase{
		{name: "add i4 wraps", op: ir.OpAdd, args: ts(I(i4(3), 7, -8, 3), I(i4(3), 1, -1, 2)), want: ts(I(i4(3), -8, 7, 5))},
		{name: "add u4 wraps", op: ir.OpAdd, args: ts(I(u4(2), 15, 2), I(u4(2), 1, 3)), want: ts(I(u4(2), 0, 5))},
		{name: "add i2 wraps", op: ir.OpAdd, args: ts(I(i2(4), 1, 0, -1, -2), I(i2(4), 1, 1, 1, -1)), want: ts(I(i2(4), -2, 1, 0, 1))},
		{name: "neg u2", op: ir.OpNeg, args: ts(I(u2(3), 0, 1, 3)), want: ts(I(u2(3), 0, 3, 1))},
		{name: "neg i4 min", op: ir.OpNeg, args: ts(I(i4(2), -8, 7)), want: ts(I(i4(2), -8, -7))},
		{name: "div i4", op: ir.OpDiv, args: ts(I(i4(3), -8, 7, 5), I(i4(3), -1, -2, 0)), want: ts(I(i4(3), -8, -3, -1))},
		{name: "rem i4", op: ir.OpRem, args: ts(I(i4(2), -7, 5), I(i4(2), 2, 0)), want: ts(I(i4(2), -1, 5))},
		{name: "mul u4", op: ir.OpMul, args: ts(I(u4(2), 15, 4), I(u4(2), 15, 4)), want: ts(I(u4(2), 1, 0))},
		{name: "not i4", op: ir.OpNot, args: ts(I(i4(2), 0, -8)), want: ts(I(i4(2), -1, 7))},
		{name: "not u4", op: ir.OpNot, args: ts(I(u4(2), 0, 5)), want: ts(I(u4(2), 15, 10))},
		{name: "max i4", op: ir.OpMax, args: ts(I(i4(2), -8, 3), I(i4(2), -1, 7)), want: ts(I(i4(2), -1, 7))},
		{name: "lt u4", op: ir.OpCompare, attr: &ir.CompareAttr{Dir: ir.CmpLT}, args: ts(I(u4(2), 15, 0), I(u4(2), 1, 15)), want: ts(I(i1(2), 0, 1))},
	})
}

// TestConvertUnsigned: floats truncate and saturate into unsigned and
// sub-byte ranges (a negative float gives 0), integers wrap, and u64
// converts to floats as an unsigned number.
func TestConvertUnsigned(t *testing.T) {
	conv := func(name string, from *backend.Buffer, to ir.Type, want *backend.Buffer) opCase {
		return opCase{name: name, op: ir.OpConvert, hint: tys(to), args: ts(from), want: ts(want)}
	}
	runCases(t, []opCase{
		conv("f32->u64", F(f32(5), -1.5, 1e30, 2.9, nan, -inf), u64(5), I(u64(5), 0, maxU64, 2, 0, 0)),
		conv("f64->u64 2^63", F(f64(1), 9223372036854775808), u64(1), I(u64(1), top64)),
		conv("f32->u16", F(f32(3), -3, 70000, 65535.5), u16(3), I(u16(3), 0, 65535, 65535)),
		conv("f32->i4", F(f32(4), -9.7, 7.9, -0.5, 3.5), i4(4), I(i4(4), -8, 7, 0, 3)),
		conv("f32->u2", F(f32(3), -1, 9, 2.5), u2(3), I(u2(3), 0, 3, 2)),
		conv("u64->f32", I(u64(3), maxU64, top64, 3), f32(3), F(f32(3), 18446744073709551616, 9223372036854775808, 3)),
		conv("u64->f64", I(u64(2), maxU64, 1<<53+1), f64(2), F(f64(2), 18446744073709551616, 1<<53)),
		conv("u64->i64", I(u64(2), maxU64, 5), i64(2), I(i64(2), -1, 5)),
		conv("i64->u64", I(i64(2), -1, -2), u64(2), I(u64(2), maxU64, -2)),
		conv("i32->i4", I(i32(3), 9, -9, 16), i4(3), I(i4(3), -7, 7, 0)),
		conv("i4->i32", I(i4(2), -8, 7), i32(2), I(i32(2), -8, 7)),
		conv("i4->u16", I(i4(1), -1), u16(1), I(u16(1), 65535)),
		conv("u4->f32", I(u4(1), 15), f32(1), F(f32(1), 15)),
	})
}
