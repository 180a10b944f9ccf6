package stablehlo

import (
	"math"

	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
)

func unaryCase(name string, o ir.Op, in *npy.Array, want *npy.Array, tol float64) xc {
	return xc{name: name, in: []*npy.Array{in}, want: []*npy.Array{want}, tol: tol,
		f: func(b *ir.Builder, p []*ir.Value) []*ir.Value { return vals(op(b, o, nil, p[0])) }}
}

func binaryCase(name string, o ir.Op, x, y, want *npy.Array, tol float64) xc {
	return xc{name: name, in: []*npy.Array{x, y}, want: []*npy.Array{want}, tol: tol,
		f: func(b *ir.Builder, p []*ir.Value) []*ir.Value { return vals(op(b, o, nil, p[0], p[1])) }}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func elementwiseCases() []xc {
	general := []float64{-1.5, -0.25, 0.5, 2.25}
	positive := []float64{0.5, 1.25, 2, 3.75}
	transcendental := []struct {
		op  ir.Op
		f   func(float64) float64
		pos bool
	}{
		{ir.OpExp, math.Exp, false},
		{ir.OpLog, math.Log, true},
		{ir.OpLog1p, math.Log1p, true},
		{ir.OpExpm1, math.Expm1, false},
		{ir.OpSqrt, math.Sqrt, true},
		{ir.OpRsqrt, func(x float64) float64 { return 1 / math.Sqrt(x) }, true},
		{ir.OpTanh, math.Tanh, false},
		{ir.OpSigmoid, sigmoid, false},
		{ir.OpSin, math.Sin, false},
		{ir.OpCos, math.Cos, false},
		{ir.OpErf, math.Erf, false},
		{ir.OpCbrt, math.Cbrt, false},
	}
	var cs []xc
	for _, u := range transcendental {
		x := general
		if u.pos {
			x = positive
		}
		cs = append(cs, unaryCase(u.op.String()+"_f32", u.op, arr(ir.F32, sh(4), x...), arr(ir.F32, sh(4), apply(ir.F32, x, u.f)...), 1e-6))
		// On half types the result must be the f32 value rounded once: bit exact.
		for _, d := range []ir.DType{ir.BF16, ir.F16} {
			hx := apply(d, x, func(v float64) float64 { return v })
			cs = append(cs, unaryCase(u.op.String()+"_"+d.String(), u.op, arr(d, sh(4), hx...), arr(d, sh(4), apply(d, hx, u.f)...), 0))
		}
	}
	f32 := func(v ...float64) *npy.Array { return arr(ir.F32, sh(int64(len(v))), v...) }
	i32 := func(v ...float64) *npy.Array { return arr(ir.I32, sh(int64(len(v))), v...) }
	u32 := func(v ...float64) *npy.Array { return arr(ir.U32, sh(int64(len(v))), v...) }
	u8 := func(v ...float64) *npy.Array { return arr(ir.U8, sh(int64(len(v))), v...) }
	i1 := func(v ...float64) *npy.Array { return arr(ir.I1, sh(int64(len(v))), v...) }
	const imin, imax, umax = math.MinInt32, math.MaxInt32, math.MaxUint32
	cs = append(cs,
		unaryCase("neg_f32", ir.OpNeg, f32(1, negZ, nan), f32(-1, 0, nan), 0),
		unaryCase("abs_f32", ir.OpAbs, f32(-1.5, negZ, -inf), f32(1.5, 0, inf), 0),
		unaryCase("round_f32", ir.OpRound, f32(0.5, 1.5, 2.5, -0.5, -2.5, 3.7), f32(0, 2, 2, negZ, -2, 4), 0),
		unaryCase("floor_f32", ir.OpFloor, f32(-1.5, 1.5, negZ), f32(-2, 1, negZ), 0),
		unaryCase("ceil_f32", ir.OpCeil, f32(-1.5, 1.5, negZ), f32(-1, 2, negZ), 0),
		unaryCase("sign_f32", ir.OpSign, f32(nan, negZ, 0, -3, 2, -inf), f32(nan, negZ, 0, -1, 1, -1), 0),
		unaryCase("neg_i32", ir.OpNeg, i32(imin, 5, 0), i32(imin, -5, 0), 0),
		unaryCase("neg_u32", ir.OpNeg, u32(1, 0), u32(umax, 0), 0),
		unaryCase("abs_i32", ir.OpAbs, i32(imin, -5, 3), i32(imin, 5, 3), 0),
		unaryCase("abs_u8", ir.OpAbs, u8(0, 200), u8(0, 200), 0),
		unaryCase("sign_i32", ir.OpSign, i32(-7, 0, 9), i32(-1, 0, 1), 0),
		unaryCase("sign_u32", ir.OpSign, u32(0, 1, umax), u32(0, 1, 1), 0),
		unaryCase("not_i1", ir.OpNot, i1(1, 0), i1(0, 1), 0),
		unaryCase("not_u8", ir.OpNot, u8(0, 15), u8(255, 240), 0),
		unaryCase("not_i32", ir.OpNot, i32(0, -1), i32(-1, 0), 0),

		binaryCase("add_f32", ir.OpAdd, f32(7, -7, 1.5), f32(2, 2, 0.25), f32(9, -5, 1.75), 0),
		binaryCase("sub_f32", ir.OpSub, f32(7, -7, 1.5), f32(2, 2, 0.25), f32(5, -9, 1.25), 0),
		binaryCase("mul_f32", ir.OpMul, f32(7, -7, 1.5), f32(2, 2, 0.25), f32(14, -14, 0.375), 0),
		binaryCase("div_f32", ir.OpDiv, f32(7, -7, 1, -1), f32(2, 2, 0, 0), f32(3.5, -3.5, inf, -inf), 0),
		binaryCase("rem_f32", ir.OpRem, f32(7, -7, 7, 5.5, 1), f32(2, 2, -2, 2, 0), f32(1, -1, 1, 1.5, nan), 0),
		binaryCase("pow_f32", ir.OpPow, f32(-7, 7, 1.5, 1, nan), f32(2, -2, 0.5, nan, 0), f32(49, 1.0/49, math.Sqrt(1.5), 1, 1), 1e-6),
		binaryCase("max_f32", ir.OpMax, f32(nan, 1, negZ, 0, 2), f32(1, nan, 0, negZ, 3), f32(nan, nan, 0, 0, 3), 0),
		binaryCase("min_f32", ir.OpMin, f32(nan, 1, negZ, 0, 2), f32(1, nan, 0, negZ, 3), f32(nan, nan, negZ, negZ, 2), 0),
		binaryCase("atan2_f32", ir.OpAtan2, f32(1, 1, -1, -1, 0), f32(1, -1, 1, -1, -1),
			f32(math.Pi/4, 3*math.Pi/4, -math.Pi/4, -3*math.Pi/4, math.Pi), 1e-6),
		binaryCase("div_i32", ir.OpDiv, i32(7, -7, 7, -7, 5, imin, imin), i32(2, 2, -2, -2, 0, -1, 0), i32(3, -3, -3, 3, -1, imin, -1), 0),
		binaryCase("rem_i32", ir.OpRem, i32(7, -7, 7, -7, 5, imin, imin), i32(2, 2, -2, -2, 0, -1, 0), i32(1, -1, 1, -1, 5, 0, imin), 0),
		binaryCase("div_u32", ir.OpDiv, u32(7, 5, umax, 0), u32(2, 0, 2, 0), u32(3, umax, 2147483647, umax), 0),
		binaryCase("rem_u32", ir.OpRem, u32(7, 5, umax, 0), u32(2, 0, 2, 0), u32(1, 5, 1, 0), 0),
		// XLA's integer pow: a negative exponent gives 0 unless the base is 1 or -1.
		binaryCase("pow_i32", ir.OpPow, i32(2, 1, -1, -1, 0, 0, 3, -2, 7, -3), i32(-1, -5, -1, -2, -1, 0, 0, -3, 2, 3),
			i32(0, 1, -1, 1, 0, 1, 1, 0, 49, -27), 0),
		binaryCase("pow_u8", ir.OpPow, u8(2, 3, 0), u8(9, 2, 0), u8(0, 9, 1), 0),
		// Exponents of 64 and more: the exact power, wrapped (XLA's runtime alone would keep 6 bits).
		binaryCase("pow_i32_large_exponent", ir.OpPow, i32(3, 3, 79, 2), i32(64, 100, 79, 40), i32(2038349057, -818408495, -1640306769, 0), 0),
		binaryCase("pow_u8_large_exponent", ir.OpPow, u8(3, 219, 200, 255), u8(200, 182, 3, 255), u8(161, 9, 0, 255), 0),
		binaryCase("add_i8", ir.OpAdd, arr(ir.I8, sh(2), 127, -128), arr(ir.I8, sh(2), 1, -1), arr(ir.I8, sh(2), -128, 127), 0),
		binaryCase("mul_u8", ir.OpMul, u8(16, 255), u8(16, 2), u8(0, 254), 0),
		binaryCase("max_i32", ir.OpMax, i32(-1, 5), i32(1, 2), i32(1, 5), 0),
		binaryCase("min_u32", ir.OpMin, u32(umax, 5), u32(1, 7), u32(1, 5), 0),
		binaryCase("and_i1", ir.OpAnd, i1(1, 1, 0, 0), i1(1, 0, 1, 0), i1(1, 0, 0, 0), 0),
		binaryCase("or_i1", ir.OpOr, i1(1, 1, 0, 0), i1(1, 0, 1, 0), i1(1, 1, 1, 0), 0),
		binaryCase("xor_i1", ir.OpXor, i1(1, 1, 0, 0), i1(1, 0, 1, 0), i1(0, 1, 1, 0), 0),
		binaryCase("and_i32", ir.OpAnd, i32(12, -1), i32(10, 5), i32(8, 5), 0),
		binaryCase("or_i32", ir.OpOr, i32(12, -1), i32(10, 5), i32(14, -1), 0),
		binaryCase("xor_u8", ir.OpXor, u8(12, 255), u8(10, 5), u8(6, 250), 0),
		// Half-type binaries: pow and atan2 computed in f32 and rounded once; add native.
		binaryCase("pow_bf16", ir.OpPow, arr(ir.BF16, sh(3), 1.5, 3, 0.75), arr(ir.BF16, sh(3), 2.5, 0.5, -3),
			arr(ir.BF16, sh(3), apply(ir.BF16, []float64{math.Pow(1.5, 2.5), math.Sqrt(3), math.Pow(0.75, -3)}, func(v float64) float64 { return v })...), 0),
		binaryCase("atan2_f16", ir.OpAtan2, arr(ir.F16, sh(2), 1, -0.5), arr(ir.F16, sh(2), 3, -2),
			arr(ir.F16, sh(2), apply(ir.F16, []float64{math.Atan2(1, 3), math.Atan2(-0.5, -2)}, func(v float64) float64 { return v })...), 0),
		binaryCase("add_bf16", ir.OpAdd, arr(ir.BF16, sh(2), 256, 1), arr(ir.BF16, sh(2), 1, 0.00390625), arr(ir.BF16, sh(2), 256, 1), 0),
	)
	cs = append(cs, compareCases()...)
	cs = append(cs, convertCases()...)
	cs = append(cs, foldedDivCases()...)
	cs = append(cs, simplifierCases()...)
	return cs
}

func compareCase(name string, x, y *npy.Array, want [6]*npy.Array) xc {
	return xc{name: name, in: []*npy.Array{x, y}, want: want[:],
		f: func(b *ir.Builder, p []*ir.Value) []*ir.Value {
			var out []*ir.Value
			for _, d := range []ir.CmpDir{ir.CmpEQ, ir.CmpNE, ir.CmpLT, ir.CmpLE, ir.CmpGT, ir.CmpGE} {
				out = append(out, op(b, ir.OpCompare, &ir.CompareAttr{Dir: d}, p[0], p[1]))
			}
			return out
		}}
}

func compareCases() []xc {
	i1 := func(v ...float64) *npy.Array { return arr(ir.I1, sh(int64(len(v))), v...) }
	f32 := func(v ...float64) *npy.Array { return arr(ir.F32, sh(int64(len(v))), v...) }
	return []xc{
		// NaN compares unequal to everything, itself included; -0 == +0.
		compareCase("compare_f32", f32(nan, 1, 2, negZ, nan), f32(nan, 1, 3, 0, 1),
			[6]*npy.Array{i1(0, 1, 0, 1, 0), i1(1, 0, 1, 0, 1), i1(0, 0, 1, 0, 0), i1(0, 1, 1, 1, 0), i1(0, 0, 0, 0, 0), i1(0, 1, 0, 1, 0)}),
		compareCase("compare_u32", arr(ir.U32, sh(3), math.MaxUint32, 1, 2), arr(ir.U32, sh(3), 1, 2, 2),
			[6]*npy.Array{i1(0, 0, 1), i1(1, 1, 0), i1(0, 1, 0), i1(0, 1, 1), i1(1, 0, 0), i1(1, 0, 1)}),
		compareCase("compare_i8", arr(ir.I8, sh(2), -1, 1), arr(ir.I8, sh(2), 1, -1),
			[6]*npy.Array{i1(0, 0), i1(1, 1), i1(1, 0), i1(1, 0), i1(0, 1), i1(0, 1)}),
		compareCase("compare_i1", i1(1, 0, 1), i1(0, 1, 1),
			[6]*npy.Array{i1(0, 0, 1), i1(1, 1, 0), i1(0, 1, 0), i1(0, 1, 1), i1(1, 0, 0), i1(1, 0, 1)}),
		{name: "select", in: []*npy.Array{i1(1, 0, 1), f32(1, 2, 3), f32(4, 5, 6), arr(ir.I1, nil, 0)},
			want: []*npy.Array{f32(1, 5, 3), f32(4, 5, 6)},
			f: func(b *ir.Builder, p []*ir.Value) []*ir.Value {
				return vals(op(b, ir.OpSelect, nil, p[0], p[1], p[2]), op(b, ir.OpSelect, nil, p[3], p[1], p[2]))
			}},
		// clamp is min(max(x, lo), hi): lo > hi gives hi, NaN anywhere gives NaN.
		{name: "clamp_f32", in: []*npy.Array{f32(0, 0, 1, 0, nan), f32(0.5, nan, 5, -5, 1), f32(1, 1, nan, 2, 1)},
			want: []*npy.Array{f32(0.5, nan, nan, 0, nan)},
			f: func(b *ir.Builder, p []*ir.Value) []*ir.Value {
				return vals(op(b, ir.OpClamp, nil, p[0], p[1], p[2]))
			}},
		{name: "clamp_scalar_bounds", in: []*npy.Array{arr(ir.I32, nil, 5), arr(ir.I32, sh(4), -3, 5, 7, 11), arr(ir.I32, nil, 2)},
			want: []*npy.Array{arr(ir.I32, sh(4), 2, 2, 2, 2), arr(ir.I32, sh(4), 5, 5, 7, 7)},
			f: func(b *ir.Builder, p []*ir.Value) []*ir.Value {
				seven := b.Const(ir.Scalar(ir.I32), 7)
				return vals(op(b, ir.OpClamp, nil, p[0], p[1], p[2]), op(b, ir.OpClamp, nil, p[0], p[1], seven))
			}},
	}
}

func convertCase(name string, in *npy.Array, to ir.DType, want *npy.Array) xc {
	return xc{name: name, in: []*npy.Array{in}, want: []*npy.Array{want},
		f: func(b *ir.Builder, p []*ir.Value) []*ir.Value {
			return vals(typed(b, ir.OpConvert, nil, p[0].Type.WithDType(to), p[0]))
		}}
}

func convertCases() []xc {
	edge := []float64{nan, inf, -inf, 3.9, -3.9, 300.5, -0.5, 0, 1e10}
	n := int64(len(edge))
	const imin, imax = math.MinInt32, math.MaxInt32
	return []xc{
		// Truncation toward zero, saturation, NaN -> 0.
		convertCase("convert_f32_i32", arr(ir.F32, sh(n), edge...), ir.I32, arr(ir.I32, sh(n), 0, imax, imin, 3, -3, 300, 0, 0, imax)),
		convertCase("convert_f32_u8", arr(ir.F32, sh(n), edge...), ir.U8, arr(ir.U8, sh(n), 0, 255, 0, 3, 0, 255, 0, 0, 255)),
		convertCase("convert_f32_i8", arr(ir.F32, sh(n), edge...), ir.I8, arr(ir.I8, sh(n), 0, 127, -128, 3, -3, 127, 0, 0, 127)),
		convertCase("convert_f32_u32", arr(ir.F32, sh(n), edge...), ir.U32, arr(ir.U32, sh(n), 0, math.MaxUint32, 0, 3, 0, 300, 0, 0, math.MaxUint32)),
		convertCase("convert_f32_i1", arr(ir.F32, sh(n), edge...), ir.I1, arr(ir.I1, sh(n), 1, 1, 1, 1, 1, 1, 1, 0, 1)),
		convertCase("convert_i32_i8", arr(ir.I32, sh(4), 300, -1, -129, 65535), ir.I8, arr(ir.I8, sh(4), 44, -1, 127, -1)),
		convertCase("convert_i32_u32", arr(ir.I32, sh(2), -1, 5), ir.U32, arr(ir.U32, sh(2), math.MaxUint32, 5)),
		convertCase("convert_u32_f32", arr(ir.U32, sh(2), math.MaxUint32, 16777217), ir.F32, arr(ir.F32, sh(2), 4294967296, 16777216)),
		convertCase("convert_i1_f32", arr(ir.I1, sh(2), 1, 0), ir.F32, arr(ir.F32, sh(2), 1, 0)),
		convertCase("convert_i1_i32", arr(ir.I1, sh(2), 1, 0), ir.I32, arr(ir.I32, sh(2), 1, 0)),
		convertCase("convert_i32_i1", arr(ir.I32, sh(3), 0, -4, 1), ir.I1, arr(ir.I1, sh(3), 0, 1, 1)),
		// Round to nearest even: 1+2^-8 is a tie that goes to 1, 1+3*2^-8 one that goes to 1+2^-6.
		convertCase("convert_f32_bf16", arr(ir.F32, sh(3), 1+1.0/256, 1+3.0/256, nan), ir.BF16, arr(ir.BF16, sh(3), 1, 1+1.0/64, nan)),
		convertCase("convert_bf16_f32", arr(ir.BF16, sh(2), 1+1.0/128, -inf), ir.F32, arr(ir.F32, sh(2), 1+1.0/128, -inf)),
		convertCase("convert_bf16_i32", arr(ir.BF16, sh(3), -2.5, 3e10, nan), ir.I32, arr(ir.I32, sh(3), -2, imax, 0)),
		convertCase("convert_f16_bf16", arr(ir.F16, sh(2), 1+1.0/1024, 65504), ir.BF16, arr(ir.BF16, sh(2), 1, 65536)),
		// f64 to bf16 rounds through f32 in XLA: 1+2^-8+2^-30 becomes 1, not 1+2^-7.
		convertCase("convert_f64_bf16", arr(ir.F64, sh(1), 1+1.0/256+1.0/(1<<30)), ir.BF16, arr(ir.BF16, sh(1), 1)),
		convertCase("convert_f32_f64", arr(ir.F32, sh(1), 0.1), ir.F64, arr(ir.F64, sh(1), float64(float32(0.1)))),
	}
}

// foldedDivCases divide constants by constants holding zeros: XLA folds them
// on the host, which must not crash and must give the contract's values.
func foldedDivCases() []xc {
	var cs []xc
	for _, d := range []ir.DType{ir.I8, ir.I16, ir.I32, ir.I64, ir.U8, ir.U32} {
		lo, _ := d.IntRange()
		t := ir.Tensor(d, 3)
		wantDiv := []float64{-1, 2, float64(lo)}
		wantRem := []float64{7, 1, 0}
		y := []float64{0, 3, -1}
		if d.IsUnsigned() {
			_, hi := d.IntRange()
			wantDiv, wantRem, y = []float64{float64(hi), 2, float64(lo)}, []float64{7, 1, 0}, []float64{0, 3, 1}
		}
		cs = append(cs, xc{name: "folded_div_rem_" + d.String(),
			want: []*npy.Array{arr(d, sh(3), wantDiv...), arr(d, sh(3), wantRem...), arr(d, sh(3), 3, 3, float64(lo)/2)},
			f: func(b *ir.Builder, p []*ir.Value) []*ir.Value {
				x := b.Const(t, 7, 7, float64(lo))
				z := b.Const(t, y...)
				two := b.Const(t, 2) // a divisor with no zero: no guard
				return vals(op(b, ir.OpDiv, nil, x, z), op(b, ir.OpRem, nil, x, z), op(b, ir.OpDiv, nil, x, two))
			}})
	}
	return cs
}

// simplifierCases are patterns XLA's algebraic simplifier rewrites: each must
// still give the contract's values.
func simplifierCases() []xc {
	i32 := func(v ...float64) *npy.Array { return arr(ir.I32, sh(int64(len(v))), v...) }
	return []xc{
		// pow(x, -1) must not become 1/x: 0^-1 is 0.
		one("pow_const_minus_one", ins(i32(0, 1, -1, 2, -2)), i32(0, 1, -1, 0, 0), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpPow, nil, p[0], b.Const(ir.Tensor(ir.I32, 5), -1))
		}),
		one("pow_folded", nil, i32(0, 1, -1, 1, 0, 9), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			x := b.Const(ir.Tensor(ir.I32, 6), 0, 1, -1, -1, 3, 3)
			y := b.Const(ir.Tensor(ir.I32, 6), -1, -7, -3, -4, -1, 2)
			return op(b, ir.OpPow, nil, x, y)
		}),
		one("pow_const_exponent", ins(arr(ir.I8, sh(3), 2, -3, 5)), arr(ir.I8, sh(3), 8, -27, 125), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpPow, nil, p[0], b.Const(ir.Tensor(ir.I8, 3), 3))
		}),
		// max(lo, clamp(lo, x, hi)) with lo > hi: XLA rewrites it to the clamp when clamp is stablehlo.clamp.
		one("max_of_clamp_lo_above_hi", ins(arr(ir.I32, nil, 2), i32(1, 0, 1, 3), i32(0, 0, 5, 1)), i32(2, 2, 2, 2), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			c := op(b, ir.OpClamp, nil, p[0], p[1], p[2])
			lo := typed(b, ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, ir.Tensor(ir.I32, 4), p[0])
			return op(b, ir.OpMax, nil, lo, c)
		}),
		one("max_of_clamp_self", ins(arr(ir.U32, sh(4), 1, 0, 1, 3), arr(ir.U32, sh(4), 0, 0, 5, 1)), arr(ir.U32, sh(4), 1, 0, 1, 3), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpMax, nil, p[0], op(b, ir.OpClamp, nil, p[0], p[0], p[1]))
		}),
		// Constant unsigned starts beyond the signed range are clamped as unsigned.
		one("dynamic_slice_const_u32_start", ins(arr(ir.F32, sh(4), 0, 1, 2, 3)), arr(ir.F32, sh(2), 2, 3), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpDynamicSlice, &ir.SizesAttr{Sizes: []int64{2}}, p[0], b.Const(ir.Scalar(ir.U32), math.MaxUint32))
		}),
		one("dynamic_slice_const_u8_start", ins(arr(ir.F32, sh(2, 4), seq(8, 0, 1)...)), arr(ir.F32, sh(1, 3), 5, 6, 7), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpDynamicSlice, &ir.SizesAttr{Sizes: []int64{1, 3}}, p[0], b.Const(ir.Scalar(ir.U8), 200), b.Const(ir.Scalar(ir.U8), 255))
		}),
		one("take_const_u32_scalar_index", ins(arr(ir.F16, sh(8), seq(8, 0, 1)...)), arr(ir.F16, nil, 7), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpTake, &ir.AxisAttr{Axis: 0}, p[0], b.Const(ir.Scalar(ir.U32), 4294967210))
		}),
		one("scatter_const_u8_scalar_index", ins(arr(ir.F32, sh(3), 0, 0, 0), arr(ir.F32, nil, 5)), arr(ir.F32, sh(3), 0, 0, 0), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpScatterAdd, &ir.AxisAttr{Axis: 0}, p[0], b.Const(ir.Scalar(ir.U8), 255), p[1])
		}),
		// Patterns that crashed XLA:CPU when lowered the obvious way.
		one("take_one_row_constant_cumsum", ins(arr(ir.U32, sh(3, 3), 0, 1, 2, 3, 4, 5, 6, 7, 8)), arr(ir.F16, sh(3, 3), -0.875, -1.75, -2.625, -0.875, -1.75, -2.625, -0.875, -1.75, -2.625),
			func(b *ir.Builder, p []*ir.Value) *ir.Value {
				g := op(b, ir.OpTake, &ir.AxisAttr{Axis: 0}, b.Const(ir.Tensor(ir.F16, 1), -0.875), p[0])
				return op(b, ir.OpCumsum, &ir.AxisAttr{Axis: 1}, g)
			}),
		one("convert_bf16_i1_fused", ins(arr(ir.BF16, sh(4, 3), 1, 0, -2, 3, 0, 0, 1, 1, nan, 0, -1, 5)), arr(ir.I16, sh(4, 3), 1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1),
			func(b *ir.Builder, p []*ir.Value) *ir.Value {
				t := ir.Tensor(ir.I16, 4, 3)
				nz := typed(b, ir.OpConvert, nil, t, typed(b, ir.OpConvert, nil, ir.Tensor(ir.I1, 4, 3), p[0]))
				r := op(b, ir.OpRem, nil, nz, b.Const(t, 32767))
				lt := op(b, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLT}, r, typed(b, ir.OpConvert, nil, t, p[0]))
				return op(b, ir.OpSelect, nil, lt, r, r)
			}),
		// x * convert(pred) must stay IEEE: NaN * 0 and inf * 0 are NaN.
		one("mul_by_converted_pred", ins(arr(ir.F32, sh(3), 0, 1, -5), arr(ir.F32, sh(3), 1, 0, 0), arr(ir.F32, sh(3), nan, inf, inf)), arr(ir.F32, sh(3), nan, inf, nan),
			func(b *ir.Builder, p []*ir.Value) *ir.Value {
				lt := op(b, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLT}, p[1], p[0])
				return op(b, ir.OpMul, nil, p[2], typed(b, ir.OpConvert, nil, ir.Tensor(ir.F32, 3), lt))
			}),
		one("dynamic_update_slice_const_u32_start", ins(arr(ir.F32, sh(4), 0, 1, 2, 3), arr(ir.F32, sh(2), 9, 9)), arr(ir.F32, sh(4), 0, 1, 9, 9), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpDynamicUpdateSlice, nil, p[0], p[1], b.Const(ir.Scalar(ir.U32), 2147483648))
		}),
	}
}
