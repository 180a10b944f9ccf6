package cpu

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

func TestUnaryFloat(t *testing.T) {
	un := func(op ir.Op, in []float64, want []float64) opCase {
		n := int64(len(in))
		return opCase{op: op, args: ts(F(f32(n), in...)), want: ts(F(f32(n), want...))}
	}
	runCases(t, []opCase{
		un(ir.OpNeg, []float64{1, negZero, 0, inf, nan}, []float64{-1, 0, negZero, -inf, nan}),
		un(ir.OpAbs, []float64{-2, negZero, -inf}, []float64{2, 0, inf}),
		un(ir.OpExp, []float64{0, 1, -inf, inf, 100}, []float64{1, 2.7182817459106445, 0, inf, inf}),
		un(ir.OpLog, []float64{1, 0, -1, inf}, []float64{0, -inf, nan, inf}),
		un(ir.OpLog1p, []float64{0, -1, 1e-7}, []float64{0, -inf, r32(math.Log1p(r32(1e-7)))}),
		un(ir.OpExpm1, []float64{0, negZero, -inf}, []float64{0, negZero, -1}),
		un(ir.OpSqrt, []float64{4, 2, -1, negZero, inf}, []float64{2, 1.4142135381698608, nan, negZero, inf}),
		un(ir.OpRsqrt, []float64{4, 0, negZero, -1, inf}, []float64{0.5, inf, -inf, nan, 0}),
		un(ir.OpTanh, []float64{0, 20, -inf}, []float64{0, 1, -1}),
		un(ir.OpSigmoid, []float64{0, inf, -inf, nan}, []float64{0.5, 1, 0, nan}),
		un(ir.OpSin, []float64{0, negZero}, []float64{0, negZero}),
		un(ir.OpCos, []float64{0, inf}, []float64{1, nan}),
		un(ir.OpFloor, []float64{-0.5, 0.5, 2, negZero, -inf}, []float64{-1, 0, 2, negZero, -inf}),
		un(ir.OpCeil, []float64{-0.5, 0.5, 2}, []float64{negZero, 1, 2}),
		un(ir.OpRound, []float64{0.5, 1.5, 2.5, -0.5, -2.5, -1.5, 2.4999998}, []float64{0, 2, 2, negZero, -2, -2, 2}),
		un(ir.OpSign, []float64{-3, 5, 0, negZero, nan, inf}, []float64{-1, 1, 0, negZero, nan, 1}),
		un(ir.OpErf, []float64{0, inf, -inf, 1}, []float64{0, 1, -1, 0.8427007794380188}),
		un(ir.OpCbrt, []float64{-8, 27, negZero, -inf, nan, 2}, []float64{-2, 3, negZero, -inf, nan, r32(math.Cbrt(2))}),
		// Scalars, size-1 and zero-size shapes.
		{name: "exp scalar", op: ir.OpExp, args: ts(F(f32(), 0)), want: ts(F(f32(), 1))},
		{name: "neg [1,1]", op: ir.OpNeg, args: ts(F(f32(1, 1), 3)), want: ts(F(f32(1, 1), -3))},
		{name: "neg [0,3]", op: ir.OpNeg, args: ts(F(f32(0, 3))), want: ts(F(f32(0, 3)))},
		// f64 is not rounded to f32.
		{name: "exp f64", op: ir.OpExp, args: ts(F(f64(1), 1)), want: ts(F(f64(1), math.E))},
		// bf16 and f16 round the f32 result.
		{name: "exp bf16", op: ir.OpExp, args: ts(F(bf16(1), 1)), want: ts(F(bf16(1), 2.71875))},
		{name: "exp f16", op: ir.OpExp, args: ts(F(f16(2), 1, 12)), want: ts(F(f16(2), 2.71875, inf))},
	})
}

func TestUnaryInt(t *testing.T) {
	runCases(t, []opCase{
		{name: "neg i8 wraps", op: ir.OpNeg, args: ts(I(i8(3), -128, 5, 0)), want: ts(I(i8(3), -128, -5, 0))},
		{name: "neg u8 wraps", op: ir.OpNeg, args: ts(I(u8(3), 0, 1, 255)), want: ts(I(u8(3), 0, 255, 1))},
		{name: "abs i8", op: ir.OpAbs, args: ts(I(i8(3), -128, -5, 5)), want: ts(I(i8(3), -128, 5, 5))},
		{name: "abs i64", op: ir.OpAbs, args: ts(I(i64(2), math.MinInt64, -7)), want: ts(I(i64(2), math.MinInt64, 7))},
		{name: "abs u32", op: ir.OpAbs, args: ts(I(u32(1), 4294967295)), want: ts(I(u32(1), 4294967295))},
		{name: "sign i32", op: ir.OpSign, args: ts(I(i32(4), -5, 0, 7, math.MinInt32)), want: ts(I(i32(4), -1, 0, 1, -1))},
		{name: "sign u8", op: ir.OpSign, args: ts(I(u8(2), 0, 200)), want: ts(I(u8(2), 0, 1))},
		{name: "not i1", op: ir.OpNot, args: ts(I(i1(2), 1, 0)), want: ts(I(i1(2), 0, 1))},
		{name: "not i8", op: ir.OpNot, args: ts(I(i8(2), 5, -1)), want: ts(I(i8(2), -6, 0))},
		{name: "not u8", op: ir.OpNot, args: ts(I(u8(2), 0, 5)), want: ts(I(u8(2), 255, 250))},
		{name: "not u32", op: ir.OpNot, args: ts(I(u32(1), 5)), want: ts(I(u32(1), 4294967290))},
		{name: "not i16", op: ir.OpNot, args: ts(I(i16(1), 0)), want: ts(I(i16(1), -1))},
	})
}

func TestBinaryFloat(t *testing.T) {
	bin := func(op ir.Op, x, y, want []float64) opCase {
		n := int64(len(x))
		return opCase{op: op, args: ts(F(f32(n), x...), F(f32(n), y...)), want: ts(F(f32(n), want...))}
	}
	runCases(t, []opCase{
		bin(ir.OpAdd, []float64{0.1, inf, inf, negZero}, []float64{0.2, -inf, 1, negZero},
			[]float64{0.30000001192092896, nan, inf, negZero}),
		bin(ir.OpSub, []float64{1, 0}, []float64{3, 0}, []float64{-2, 0}),
		bin(ir.OpMul, []float64{3e38, 2, negZero}, []float64{10, 1.5, 5}, []float64{inf, 3, negZero}),
		bin(ir.OpDiv, []float64{1, -1, 0, 1}, []float64{0, 0, 0, 3}, []float64{inf, -inf, nan, 0.3333333432674408}),
		bin(ir.OpRem, []float64{5.5, -5.5, 5.5, -5.5, 1, inf, 3, negZero},
			[]float64{2, 2, -2, -2, 0, 2, inf, 1},
			[]float64{1.5, -1.5, 1.5, -1.5, nan, nan, 3, negZero}),
		bin(ir.OpPow, []float64{0, 0, -2, -8, nan, 1, 2, negZero, 2},
			[]float64{-1, 0, 0.5, 1.0 / 3, 0, nan, -inf, -1, 10},
			[]float64{inf, 1, nan, nan, 1, 1, 0, -inf, 1024}),
		bin(ir.OpMax, []float64{negZero, 0, nan, 1, 2}, []float64{0, negZero, 1, nan, -3},
			[]float64{0, 0, nan, nan, 2}),
		bin(ir.OpMin, []float64{negZero, 0, nan, 1, 2}, []float64{0, negZero, 1, nan, -3},
			[]float64{negZero, negZero, nan, nan, -3}),
		bin(ir.OpAtan2, []float64{1, 1, -1, 0, negZero}, []float64{0, -1, -1, -1, -1},
			[]float64{1.5707963705062866, 2.356194496154785, -2.356194496154785, 3.1415927410125732, -3.1415927410125732}),
		// bf16: 1 + 2^-8 is a tie, rounds to even (1); 1+2^-7 + 2^-8 rounds up to 1+2^-6.
		{name: "add bf16", op: ir.OpAdd,
			args: ts(F(bf16(2), 1, 1+1.0/128), F(bf16(2), 1.0/256, 1.0/256)),
			want: ts(F(bf16(2), 1, 1+1.0/64))},
		// f16: 65504+16 is halfway to 65536, rounds to even, which overflows to inf.
		{name: "add f16", op: ir.OpAdd,
			args: ts(F(f16(2), 65504, 2048), F(f16(2), 16, 1)),
			want: ts(F(f16(2), inf, 2048))},
		{name: "add f64", op: ir.OpAdd, args: ts(F(f64(1), 0.1), F(f64(1), 0.2)), want: ts(F(f64(1), 0.30000000000000004))},
	})
}

func TestBinaryInt(t *testing.T) {
	runCases(t, []opCase{
		{name: "add i8 wraps", op: ir.OpAdd, args: ts(I(i8(2), 127, -128), I(i8(2), 1, -1)), want: ts(I(i8(2), -128, 127))},
		{name: "sub u8 wraps", op: ir.OpSub, args: ts(I(u8(1), 0), I(u8(1), 1)), want: ts(I(u8(1), 255))},
		{name: "mul i32 wraps", op: ir.OpMul, args: ts(I(i32(2), 65536, 3), I(i32(2), 65536, -4)), want: ts(I(i32(2), 0, -12))},
		{name: "mul i16 wraps", op: ir.OpMul, args: ts(I(i16(1), 300), I(i16(1), 300)), want: ts(I(i16(1), 24464))},
		{name: "mul u32 wraps", op: ir.OpMul, args: ts(I(u32(1), 4294967295), I(u32(1), 4294967295)), want: ts(I(u32(1), 1))},
		{name: "mul i64 wraps", op: ir.OpMul, args: ts(I(i64(1), math.MaxInt64), I(i64(1), 2)), want: ts(I(i64(1), -2))},
		{name: "div i8", op: ir.OpDiv,
			args: ts(I(i8(9), 7, -7, 7, -7, 5, -5, -128, -128, -128), I(i8(9), 2, 2, -2, -2, 0, 0, -1, 0, 1)),
			want: ts(I(i8(9), 3, -3, -3, 3, -1, -1, -128, -1, -128))},
		{name: "div i64", op: ir.OpDiv,
			args: ts(I(i64(2), math.MinInt64, 9), I(i64(2), -1, 0)),
			want: ts(I(i64(2), math.MinInt64, -1))},
		{name: "div u8", op: ir.OpDiv, args: ts(I(u8(4), 7, 5, 0, 255), I(u8(4), 2, 0, 0, 3)), want: ts(I(u8(4), 3, 255, 255, 85))},
		{name: "div u32", op: ir.OpDiv, args: ts(I(u32(2), 5, 4294967295), I(u32(2), 0, 2)), want: ts(I(u32(2), 4294967295, 2147483647))},
		{name: "rem i8", op: ir.OpRem,
			args: ts(I(i8(9), 7, -7, 7, -7, 5, -5, -128, -128, -128), I(i8(9), 2, 2, -2, -2, 0, 0, -1, 0, 1)),
			want: ts(I(i8(9), 1, -1, 1, -1, 5, -5, 0, -128, 0))},
		{name: "rem i32", op: ir.OpRem, args: ts(I(i32(2), math.MinInt32, 9), I(i32(2), -1, 0)), want: ts(I(i32(2), 0, 9))},
		{name: "rem u8", op: ir.OpRem, args: ts(I(u8(4), 7, 5, 0, 255), I(u8(4), 2, 0, 0, 3)), want: ts(I(u8(4), 1, 5, 0, 0))},
		// Values XLA:CPU returned for stablehlo.power.
		{name: "pow i8", op: ir.OpPow,
			args: ts(I(i8(14), 2, -2, 1, -1, 0, 3, 0, -2, 0, 5, -1, 3, 3, -3), I(i8(14), -1, -1, -1, -1, -1, -2, 0, -3, -5, -7, -4, 40, 7, 7)),
			want: ts(I(i8(14), 0, 0, 1, -1, 0, 0, 1, 0, 0, 0, 1, 33, -117, 117))},
		{name: "pow i16", op: ir.OpPow, args: ts(I(i16(3), 3, 3, -3), I(i16(3), 40, 7, 7)), want: ts(I(i16(3), -6111, 2187, -2187))},
		{name: "pow i32", op: ir.OpPow, args: ts(I(i32(2), 3, -1), I(i32(2), 40, -3)), want: ts(I(i32(2), 689956897, -1))},
		{name: "pow i64", op: ir.OpPow, args: ts(I(i64(1), 3), I(i64(1), 40)), want: ts(I(i64(1), -6289078614652622815))},
		{name: "pow i32 exact power, wrapped", op: ir.OpPow,
			args: ts(I(i32(9), 3, 3, 3, -1, -1, 2, 7, 5, -3), I(i32(9), 100, 64, 65, 65, -3, 31, 63, math.MinInt32, 127)),
			want: ts(I(i32(9), -818408495, 2038349057, 1820079875, -1, -1, -2147483648, 1075496887, 0, 2088621909))},
		{name: "pow i64 exact power, wrapped", op: ir.OpPow, args: ts(I(i64(3), 3, 3, -1), I(i64(3), 64, 65, -7)), want: ts(I(i64(3), 8733086111712066817, 7752514261426648835, -1))},
		{name: "pow u8", op: ir.OpPow,
			args: ts(I(u8(15), 2, 1, 0, 3, 3, 0, 255, 1, 255, 2, 255, 3, 7, 1, 0), I(u8(15), 0, 5, 0, 20, 200, 255, 255, 200, 254, 255, 128, 127, 64, 0, 128)),
			want: ts(I(u8(15), 1, 1, 1, 145, 161, 0, 255, 1, 1, 0, 1, 171, 1, 1, 0))},
		{name: "pow u32", op: ir.OpPow,
			args: ts(I(u32(8), 3, 3, 255, 3, 3, 255, 1, 2), I(u32(8), 20, 200, 255, 1<<31, 1<<31-1, 255, 1<<32-1, 1<<31+1)),
			want: ts(I(u32(8), 3486784401, 2868424865, 8388351, 1, 2863311531, 8388351, 1, 0))},
		{name: "max f64 NaN beats inf", op: ir.OpMax, args: ts(F(f64(4), inf, nan, -inf, 1), F(f64(4), nan, inf, nan, 2)), want: ts(F(f64(4), nan, nan, nan, 2))},
		{name: "min f64 NaN beats inf", op: ir.OpMin, args: ts(F(f64(4), -inf, nan, inf, 1), F(f64(4), nan, -inf, nan, 2)), want: ts(F(f64(4), nan, nan, nan, 1))},
		{name: "max i32", op: ir.OpMax, args: ts(I(i32(2), -5, 3), I(i32(2), -7, 9)), want: ts(I(i32(2), -5, 9))},
		{name: "min u32", op: ir.OpMin, args: ts(I(u32(2), 4294967295, 3), I(u32(2), 1, 9)), want: ts(I(u32(2), 1, 3))},
		{name: "and i8", op: ir.OpAnd, args: ts(I(i8(2), -1, 12), I(i8(2), 5, 10)), want: ts(I(i8(2), 5, 8))},
		{name: "or u8", op: ir.OpOr, args: ts(I(u8(2), 240, 1), I(u8(2), 15, 2)), want: ts(I(u8(2), 255, 3))},
		{name: "xor i32", op: ir.OpXor, args: ts(I(i32(2), -1, 6), I(i32(2), 1, 3)), want: ts(I(i32(2), -2, 5))},
		{name: "and i1", op: ir.OpAnd, args: ts(I(i1(4), 0, 0, 1, 1), I(i1(4), 0, 1, 0, 1)), want: ts(I(i1(4), 0, 0, 0, 1))},
		{name: "or i1", op: ir.OpOr, args: ts(I(i1(4), 0, 0, 1, 1), I(i1(4), 0, 1, 0, 1)), want: ts(I(i1(4), 0, 1, 1, 1))},
		{name: "xor i1", op: ir.OpXor, args: ts(I(i1(4), 0, 0, 1, 1), I(i1(4), 0, 1, 0, 1)), want: ts(I(i1(4), 0, 1, 1, 0))},
		{name: "add i32 scalar", op: ir.OpAdd, args: ts(I(i32(), 2), I(i32(), 3)), want: ts(I(i32(), 5))},
		{name: "add i32 [0]", op: ir.OpAdd, args: ts(I(i32(0)), I(i32(0))), want: ts(I(i32(0)))},
	})
}

func TestCompare(t *testing.T) {
	x := F(f32(5), 1, 2, nan, 0, 3)
	y := F(f32(5), 2, 2, nan, negZero, nan)
	cmp := func(dir ir.CmpDir, want ...int64) opCase {
		return opCase{name: "compare " + dir.String(), op: ir.OpCompare, attr: &ir.CompareAttr{Dir: dir},
			args: ts(x, y), want: ts(I(i1(5), want...))}
	}
	runCases(t, []opCase{
		cmp(ir.CmpEQ, 0, 1, 0, 1, 0),
		cmp(ir.CmpNE, 1, 0, 1, 0, 1),
		cmp(ir.CmpLT, 1, 0, 0, 0, 0),
		cmp(ir.CmpLE, 1, 1, 0, 1, 0),
		cmp(ir.CmpGT, 0, 0, 0, 0, 0),
		cmp(ir.CmpGE, 0, 1, 0, 1, 0),
		{name: "compare u32", op: ir.OpCompare, attr: &ir.CompareAttr{Dir: ir.CmpGT},
			args: ts(I(u32(2), 4294967295, 0), I(u32(2), 1, 0)), want: ts(I(i1(2), 1, 0))},
		{name: "compare i8", op: ir.OpCompare, attr: &ir.CompareAttr{Dir: ir.CmpLT},
			args: ts(I(i8(2), -128, 5), I(i8(2), 127, 5)), want: ts(I(i1(2), 1, 0))},
		{name: "compare i1", op: ir.OpCompare, attr: &ir.CompareAttr{Dir: ir.CmpLT},
			args: ts(I(i1(2), 0, 1), I(i1(2), 1, 1)), want: ts(I(i1(2), 1, 0))},
		{name: "compare bf16 scalar", op: ir.OpCompare, attr: &ir.CompareAttr{Dir: ir.CmpGE},
			args: ts(F(bf16(), 1), F(bf16(), 1)), want: ts(I(i1(), 1))},
	})
}

func TestSelectClamp(t *testing.T) {
	runCases(t, []opCase{
		{name: "select", op: ir.OpSelect, args: ts(I(i1(3), 1, 0, 1), F(f32(3), 1, 2, 3), F(f32(3), 4, 5, 6)),
			want: ts(F(f32(3), 1, 5, 3))},
		{name: "select scalar pred", op: ir.OpSelect, args: ts(I(i1(), 0), I(i32(2), 1, 2), I(i32(2), 3, 4)),
			want: ts(I(i32(2), 3, 4))},
		{name: "select i1", op: ir.OpSelect, args: ts(I(i1(2), 1, 0), I(i1(2), 1, 1), I(i1(2), 0, 0)),
			want: ts(I(i1(2), 1, 0))},
		{name: "clamp scalar bounds", op: ir.OpClamp, args: ts(F(f32(), 0), F(f32(4), -1, 0.5, 2, nan), F(f32(), 1)),
			want: ts(F(f32(4), 0, 0.5, 1, nan))},
		{name: "clamp full bounds", op: ir.OpClamp,
			args: ts(F(f32(3), 0, nan, 5), F(f32(3), 1, 1, 1), F(f32(3), nan, 1, 0)),
			want: ts(F(f32(3), nan, nan, 0))},
		{name: "clamp i32 lo>hi", op: ir.OpClamp, args: ts(I(i32(3), 5, 0, 0), I(i32(3), 1, 9, -3), I(i32(3), 0, 3, 3)),
			want: ts(I(i32(3), 0, 3, 0))},
		{name: "clamp u8", op: ir.OpClamp, args: ts(I(u8(), 10), I(u8(3), 0, 100, 255), I(u8(), 200)),
			want: ts(I(u8(3), 10, 100, 200))},
	})
}

func TestConvert(t *testing.T) {
	src := []float64{3e10, -3e10, nan, inf, -inf, 2.9, -2.9, -0.5, 127.5, 128, -129, 255.9, 256, -1, 4294967296, 9.3e18, -9.3e18}
	n := int64(len(src))
	conv := func(name string, from *backend.Buffer, to ir.Type, want *backend.Buffer) opCase {
		return opCase{name: name, op: ir.OpConvert, hint: tys(to), args: ts(from), want: ts(want)}
	}
	runCases(t, []opCase{
		conv("f32->i8", F(f32(n), src...), i8(n),
			I(i8(n), 127, -128, 0, 127, -128, 2, -2, 0, 127, 127, -128, 127, 127, -1, 127, 127, -128)),
		conv("f32->i16", F(f32(n), src...), i16(n),
			I(i16(n), 32767, -32768, 0, 32767, -32768, 2, -2, 0, 127, 128, -129, 255, 256, -1, 32767, 32767, -32768)),
		conv("f32->i32", F(f32(n), src...), i32(n),
			I(i32(n), 2147483647, -2147483648, 0, 2147483647, -2147483648, 2, -2, 0, 127, 128, -129, 255, 256, -1, 2147483647, 2147483647, -2147483648)),
		conv("f32->i64", F(f32(n), src...), i64(n),
			I(i64(n), 30000001024, -30000001024, 0, math.MaxInt64, math.MinInt64, 2, -2, 0, 127, 128, -129, 255, 256, -1, 4294967296, math.MaxInt64, math.MinInt64)),
		conv("f32->u8", F(f32(n), src...), u8(n),
			I(u8(n), 255, 0, 0, 255, 0, 2, 0, 0, 127, 128, 0, 255, 255, 0, 255, 255, 0)),
		conv("f32->u32", F(f32(n), src...), u32(n),
			I(u32(n), 4294967295, 0, 0, 4294967295, 0, 2, 0, 0, 127, 128, 0, 255, 256, 0, 4294967295, 4294967295, 0)),
		conv("f32->i1", F(f32(6), 0, negZero, 0.5, -0.5, nan, inf), i1(6), I(i1(6), 0, 0, 1, 1, 1, 1)),
		conv("f64->i32", F(f64(4), 2147483647.9, -2147483648.9, 1e300, nan), i32(4), I(i32(4), 2147483647, -2147483648, 2147483647, 0)),
		conv("f64->i64 2^63", F(f64(1), 9223372036854775808), i64(1), I(i64(1), math.MaxInt64)),
		conv("bf16->i8", F(bf16(3), 300, -300, nan), i8(3), I(i8(3), 127, -128, 0)),
		conv("f16->u8", F(f16(3), 300, -300, inf), u8(3), I(u8(3), 255, 0, 255)),
		// Floats between float types round through f32, as XLA does.
		conv("f64->bf16", F(f64(3), 1+1.0/256+1.0/(1<<30), -(1+1.0/256+1.0/(1<<30)), 1.0/3), bf16(3),
			F(bf16(3), 1, -1, 0.333984375)),
		conv("f64->f16", F(f64(2), 1+1.0/2048+1.0/(1<<40), 1e-8), f16(2), F(f16(2), 1, 0)),
		conv("f32->f16", F(f32(5), 65504, 65519, 65520, 3e-8, -1e10), f16(5),
			F(f16(5), 65504, 65504, inf, 5.960464477539063e-08, -inf)),
		conv("f32->bf16", F(f32(4), 3.4e38, 3.3961e38, nan, 1e-40), bf16(4),
			F(bf16(4), inf, 3.3895313892515355e+38, nan, 9.183549615799121e-41)),
		conv("bf16->f32", F(bf16(2), 0.1, -inf), f32(2), F(f32(2), 0.10009765625, -inf)),
		conv("f32->f64", F(f32(1), 0.1), f64(1), F(f64(1), 0.10000000149011612)),
		// Integers to floats: through f32 first.
		conv("i32->bf16", I(i32(3), 16842753, -16842753, 3), bf16(3), F(bf16(3), 16777216, -16777216, 3)),
		conv("i64->f32", I(i64(3), 1<<62+1<<39+1, 1<<53+1<<29+1, 16777217), f32(3),
			F(f32(3), 4.611686568183202e+18, 9007200328482816, 16777216)),
		conv("i64->f64", I(i64(1), 1<<53+1), f64(1), F(f64(1), 9007199254740992)),
		conv("u32->f32", I(u32(1), 4294967295), f32(1), F(f32(1), 4294967296)),
		conv("i1->f32", I(i1(2), 1, 0), f32(2), F(f32(2), 1, 0)),
		conv("i1->i32", I(i1(2), 1, 0), i32(2), I(i32(2), 1, 0)),
		// Integers to integers wrap; to i1 means != 0.
		conv("i64->i8", I(i64(4), 300, -1, 1<<31, -(1<<31)-1), i8(4), I(i8(4), 44, -1, 0, -1)),
		conv("i64->u8", I(i64(4), 300, -1, 1<<31, -(1<<31)-1), u8(4), I(u8(4), 44, 255, 0, 255)),
		conv("i64->u32", I(i64(4), 300, -1, 1<<31, -(1<<31)-1), u32(4), I(u32(4), 300, 4294967295, 2147483648, 2147483647)),
		conv("u8->i8", I(u8(3), 200, 255, 128), i8(3), I(i8(3), -56, -1, -128)),
		conv("i8->i1", I(i8(4), 0, 1, -128, 127), i1(4), I(i1(4), 0, 1, 1, 1)),
		conv("scalar", F(f32(), 2.5), i32(), I(i32(), 2)),
	})
}

// TestCopy: a copy changes only the layout, which the executor ignores: the
// same values come back, bit for bit, with the result type's layout.
func TestCopy(t *testing.T) {
	colMajor := f32(2, 3)
	colMajor.Layout = &ir.Layout{MinorToMajor: []int{0, 1}}
	rowMajor := i32(2, 2)
	rowMajor.Layout = &ir.Layout{MinorToMajor: []int{1, 0}, Tiles: [][]int64{{8, 128}}}
	runCases(t, []opCase{
		{name: "f32", op: ir.OpCopy, hint: tys(colMajor), args: ts(F(f32(2, 3), 1, negZero, nan, -inf, 0.5, 6)),
			want: ts(F(colMajor, 1, negZero, nan, -inf, 0.5, 6))},
		{name: "i32", op: ir.OpCopy, hint: tys(rowMajor), args: ts(I(i32(2, 2), -2147483648, 7, 0, 2147483647)),
			want: ts(I(rowMajor, -2147483648, 7, 0, 2147483647))},
	})
}
