package stablehlo

import (
	"math"

	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
)

func seq(n int, from, step float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = from + float64(i)*step
	}
	return out
}

func one(name string, in []*npy.Array, want *npy.Array, f func(b *ir.Builder, p []*ir.Value) *ir.Value) xc {
	return xc{name: name, in: in, want: []*npy.Array{want},
		f: func(b *ir.Builder, p []*ir.Value) []*ir.Value { return vals(f(b, p)) }}
}

func ins(as ...*npy.Array) []*npy.Array { return as }

func shapeCases() []xc {
	x23 := arr(ir.F32, sh(2, 3), 1, 2, 3, 4, 5, 6)
	iotaBF := make([]float64, 300)
	for i := range iotaBF {
		iotaBF[i] = ir.BF16.RoundFloat(float64(i))
	}
	iotaU8 := make([]float64, 300)
	for i := range iotaU8 {
		iotaU8[i] = float64(i % 256)
	}
	return []xc{
		one("reshape", ins(x23), arr(ir.F32, sh(3, 2), 1, 2, 3, 4, 5, 6), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpReshape, nil, ir.Tensor(ir.F32, 3, 2), p[0])
		}),
		one("reshape_scalar", ins(arr(ir.I32, nil, 7)), arr(ir.I32, sh(1, 1), 7), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpReshape, nil, ir.Tensor(ir.I32, 1, 1), p[0])
		}),
		one("broadcast_row", ins(arr(ir.F32, sh(3), 1, 2, 3)), arr(ir.F32, sh(2, 3), 1, 2, 3, 1, 2, 3), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{1}}, ir.Tensor(ir.F32, 2, 3), p[0])
		}),
		one("broadcast_expand", ins(arr(ir.I32, sh(2, 1), 1, 2)), arr(ir.I32, sh(3, 2, 2), 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{1, 2}}, ir.Tensor(ir.I32, 3, 2, 2), p[0])
		}),
		one("broadcast_scalar", ins(arr(ir.I1, nil, 1)), arr(ir.I1, sh(2), 1, 1), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, ir.Tensor(ir.I1, 2), p[0])
		}),
		one("transpose", ins(x23), arr(ir.F32, sh(3, 2), 1, 4, 2, 5, 3, 6), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpTranspose, &ir.PermAttr{Perm: []int64{1, 0}}, p[0])
		}),
		one("transpose_3d", ins(arr(ir.I32, sh(2, 1, 3), seq(6, 0, 1)...)), arr(ir.I32, sh(3, 2, 1), 0, 3, 1, 4, 2, 5), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpTranspose, &ir.PermAttr{Perm: []int64{2, 0, 1}}, p[0])
		}),
		one("slice_strided", ins(arr(ir.F32, sh(3, 8), seq(24, 0, 1)...)), arr(ir.F32, sh(2, 4), 8, 10, 12, 14, 16, 18, 20, 22), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpSlice, &ir.SliceAttr{Start: []int64{1, 0}, Limit: []int64{3, 8}, Stride: []int64{1, 2}}, p[0])
		}),
		one("concat", ins(arr(ir.I32, sh(2, 1), 1, 2), arr(ir.I32, sh(2, 2), 3, 4, 5, 6), arr(ir.I32, sh(2, 0))),
			arr(ir.I32, sh(2, 3), 1, 3, 4, 2, 5, 6), func(b *ir.Builder, p []*ir.Value) *ir.Value {
				return op(b, ir.OpConcat, &ir.AxisAttr{Axis: 1}, p[0], p[1], p[2])
			}),
		// Interior padding first, then edges; a negative edge cuts.
		one("pad", ins(arr(ir.F32, sh(3), 1, 2, 3), arr(ir.F32, nil, 9)), arr(ir.F32, sh(6), 9, 2, 9, 3, 9, 9), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpPad, &ir.PadAttr{Low: []int64{-1}, High: []int64{2}, Interior: []int64{1}}, p[0], p[1])
		}),
		one("iota_i32", nil, arr(ir.I32, sh(2, 3), 0, 1, 2, 0, 1, 2), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpIota, &ir.AxisAttr{Axis: 1}, ir.Tensor(ir.I32, 2, 3), nil...)
		}),
		one("iota_f32", nil, arr(ir.F32, sh(2, 2), 0, 0, 1, 1), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpIota, &ir.AxisAttr{Axis: 0}, ir.Tensor(ir.F32, 2, 2))
		}),
		// Indices beyond 256 round to nearest even in bf16 (257 -> 256, 259 -> 260).
		one("iota_bf16", nil, arr(ir.BF16, sh(300), iotaBF...), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpIota, &ir.AxisAttr{Axis: 0}, ir.Tensor(ir.BF16, 300))
		}),
		one("iota_u8_wraps", nil, arr(ir.U8, sh(300), iotaU8...), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpIota, &ir.AxisAttr{Axis: 0}, ir.Tensor(ir.U8, 300))
		}),
		one("dot_matmul", ins(x23, arr(ir.F32, sh(3, 2), 1, 0, 0, 1, 1, 1)), arr(ir.F32, sh(2, 2), 4, 5, 10, 11), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpDotGeneral, &ir.DotAttr{LhsContract: []int64{1}, RhsContract: []int64{0}}, p[0], p[1])
		}),
		one("dot_batch", ins(arr(ir.F32, sh(2, 1, 2), 1, 2, 3, 4), arr(ir.F32, sh(2, 2, 1), 5, 6, 7, 8)), arr(ir.F32, sh(2, 1, 1), 17, 53), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpDotGeneral, &ir.DotAttr{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContract: []int64{2}, RhsContract: []int64{1}}, p[0], p[1])
		}),
		one("dot_outer", ins(arr(ir.I32, sh(2), 1, 2), arr(ir.I32, sh(3), 3, 4, 5)), arr(ir.I32, sh(2, 3), 3, 4, 5, 6, 8, 10), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpDotGeneral, &ir.DotAttr{}, p[0], p[1])
		}),
		// 256+1+1 in bf16 steps would stay 256; accumulated in f32 it is 258.
		one("dot_bf16_f32_accumulation", ins(arr(ir.BF16, sh(1, 3), 256, 1, 1), arr(ir.BF16, sh(3, 1), 1, 1, 1)), arr(ir.BF16, sh(1, 1), 258), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpDotGeneral, &ir.DotAttr{LhsContract: []int64{1}, RhsContract: []int64{0}}, p[0], p[1])
		}),
		one("dot_bf16_to_f32", ins(arr(ir.BF16, sh(3), 256, 1, 1), arr(ir.BF16, sh(3), 1, 1, 1)), arr(ir.F32, nil, 258), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpDotGeneral, &ir.DotAttr{LhsContract: []int64{0}, RhsContract: []int64{0}}, ir.Scalar(ir.F32), p[0], p[1])
		}),
		one("dot_i8_to_i32", ins(arr(ir.I8, sh(2), 100, 100), arr(ir.I8, sh(2), 100, -100)), arr(ir.I32, nil, 0), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpDotGeneral, &ir.DotAttr{LhsContract: []int64{0}, RhsContract: []int64{0}}, ir.Scalar(ir.I32), p[0], p[1])
		}),
		one("dot_i8_wraps", ins(arr(ir.I8, sh(2), 100, 100), arr(ir.I8, sh(2), 1, 1)), arr(ir.I8, nil, -56), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpDotGeneral, &ir.DotAttr{LhsContract: []int64{0}, RhsContract: []int64{0}}, p[0], p[1])
		}),
		one("dot_f16_to_f64", ins(arr(ir.F16, sh(2), 0.1, 3), arr(ir.F16, sh(2), 0.1, 1)),
			arr(ir.F64, nil, ir.F16.RoundFloat(0.1)*ir.F16.RoundFloat(0.1)+3), func(b *ir.Builder, p []*ir.Value) *ir.Value {
				return typed(b, ir.OpDotGeneral, &ir.DotAttr{LhsContract: []int64{0}, RhsContract: []int64{0}}, ir.Scalar(ir.F64), p[0], p[1])
			}),
	}
}

func reduceCase(name string, o ir.Op, axes []int64, keep bool, in, want *npy.Array) xc {
	return one(name, ins(in), want, func(b *ir.Builder, p []*ir.Value) *ir.Value {
		return op(b, o, &ir.AxesAttr{Axes: axes, KeepDims: keep}, p[0])
	})
}

func axisCase(name string, o ir.Op, axis int64, in, want *npy.Array) xc {
	return one(name, ins(in), want, func(b *ir.Builder, p []*ir.Value) *ir.Value {
		return op(b, o, &ir.AxisAttr{Axis: axis}, p[0])
	})
}

func reduceCases() []xc {
	x23 := arr(ir.F32, sh(2, 3), 1, 2, 3, 4, 5, 6)
	empty := arr(ir.F32, sh(0, 3))
	inf3 := func(d ir.DType, v float64) *npy.Array { return arr(d, sh(3), v, v, v) }
	argIn := arr(ir.F32, sh(5, 4),
		1, nan, 3, nan,
		3, 1, 3, 0,
		-inf, -inf, -inf, -inf,
		negZ, 0, -1, negZ,
		2, inf, inf, 1)
	return []xc{
		reduceCase("reduce_sum", ir.OpReduceSum, []int64{1}, false, x23, arr(ir.F32, sh(2), 6, 15)),
		reduceCase("reduce_sum_keepdims", ir.OpReduceSum, []int64{0, 1}, true, x23, arr(ir.F32, sh(1, 1), 21)),
		reduceCase("reduce_sum_unsorted_axes", ir.OpReduceSum, []int64{1, 0}, false, x23, arr(ir.F32, nil, 21)),
		reduceCase("reduce_sum_no_axes", ir.OpReduceSum, []int64{}, false, x23, x23),
		reduceCase("reduce_sum_empty", ir.OpReduceSum, []int64{0}, false, empty, inf3(ir.F32, 0)),
		reduceCase("reduce_sum_i8_wraps", ir.OpReduceSum, []int64{0}, false, arr(ir.I8, sh(3), 100, 100, 100), arr(ir.I8, nil, 44)),
		reduceCase("reduce_sum_bf16_f32_accumulation", ir.OpReduceSum, []int64{0}, false, arr(ir.BF16, sh(3), 256, 1, 1), arr(ir.BF16, nil, 258)),
		reduceCase("reduce_max_nan", ir.OpReduceMax, []int64{1}, false, arr(ir.F32, sh(2, 3), 1, nan, 3, -1, -2, negZ), arr(ir.F32, sh(2), nan, negZ)),
		reduceCase("reduce_max_empty_f32", ir.OpReduceMax, []int64{0}, false, empty, inf3(ir.F32, -inf)),
		reduceCase("reduce_max_empty_i32", ir.OpReduceMax, []int64{0}, false, arr(ir.I32, sh(0, 3)), inf3(ir.I32, math.MinInt32)),
		reduceCase("reduce_max_empty_u8", ir.OpReduceMax, []int64{0}, false, arr(ir.U8, sh(0, 3)), inf3(ir.U8, 0)),
		reduceCase("reduce_max_i32", ir.OpReduceMax, []int64{0}, false, arr(ir.I32, sh(2, 2), -5, 3, 7, -1), arr(ir.I32, sh(2), 7, 3)),
		reduceCase("reduce_min_empty_f32", ir.OpReduceMin, []int64{0}, false, empty, inf3(ir.F32, inf)),
		reduceCase("reduce_min_empty_u32", ir.OpReduceMin, []int64{0}, false, arr(ir.U32, sh(0, 3)), inf3(ir.U32, math.MaxUint32)),
		reduceCase("reduce_min_nan", ir.OpReduceMin, []int64{0}, false, arr(ir.BF16, sh(3), 1, nan, -3), arr(ir.BF16, nil, nan)),
		reduceCase("reduce_min_keepdims", ir.OpReduceMin, []int64{1}, true, x23, arr(ir.F32, sh(2, 1), 1, 4)),
		reduceCase("reduce_prod", ir.OpReduceProd, []int64{0}, false, arr(ir.F32, sh(3), 2, 3, 4), arr(ir.F32, nil, 24)),
		reduceCase("reduce_prod_empty", ir.OpReduceProd, []int64{0}, false, arr(ir.I32, sh(0, 2)), arr(ir.I32, sh(2), 1, 1)),
		reduceCase("reduce_prod_f16", ir.OpReduceProd, []int64{0}, false, arr(ir.F16, sh(3), 1000, 1000, 0.001), arr(ir.F16, nil, ir.F16.RoundFloat(float64(float32(1e6)*float32(ir.F16.RoundFloat(0.001)))))),
		// First index of the max (min); NaN counts as the max (min); -0 == +0.
		axisCase("argmax_f32", ir.OpArgmax, 1, argIn, arr(ir.I32, sh(5), 1, 0, 0, 0, 1)),
		axisCase("argmin_f32", ir.OpArgmin, 1, argIn, arr(ir.I32, sh(5), 1, 3, 0, 2, 3)),
		axisCase("argmax_i32_axis0", ir.OpArgmax, 0, arr(ir.I32, sh(2, 2), 1, 5, 3, 5), arr(ir.I32, sh(2), 1, 0)),
		axisCase("argmin_i32_axis0", ir.OpArgmin, 0, arr(ir.I32, sh(2, 2), 1, 5, 3, 5), arr(ir.I32, sh(2), 0, 0)),
		axisCase("argmax_u8", ir.OpArgmax, 0, arr(ir.U8, sh(4), 0, 0, 255, 255), arr(ir.I32, nil, 2)),
		axisCase("argmin_u8", ir.OpArgmin, 0, arr(ir.U8, sh(4), 7, 0, 255, 0), arr(ir.I32, nil, 1)),
		axisCase("argmax_bf16", ir.OpArgmax, 0, arr(ir.BF16, sh(4), -1, 2, nan, 2), arr(ir.I32, nil, 2)),
		axisCase("argmax_long", ir.OpArgmax, 0, arr(ir.F32, sh(1000), append(seq(999, 0, 0), 1)...), arr(ir.I32, nil, 999)),
		axisCase("argmax_long_ties", ir.OpArgmax, 0, arr(ir.F32, sh(1000), seq(1000, 5, 0)...), arr(ir.I32, nil, 0)),
		axisCase("cumsum_f32", ir.OpCumsum, 1, x23, arr(ir.F32, sh(2, 3), 1, 3, 6, 4, 9, 15)),
		axisCase("cumsum_i32_axis0", ir.OpCumsum, 0, arr(ir.I32, sh(2, 3), 1, 2, 3, 4, 5, 6), arr(ir.I32, sh(2, 3), 1, 2, 3, 5, 7, 9)),
		axisCase("cumsum_i8_wraps", ir.OpCumsum, 0, arr(ir.I8, sh(2), 100, 100), arr(ir.I8, sh(2), 100, -56)),
		// f32 accumulation rounded once per output: 257 is a tie that goes to 256, then 258.
		axisCase("cumsum_bf16", ir.OpCumsum, 0, arr(ir.BF16, sh(3), 256, 1, 1), arr(ir.BF16, sh(3), 256, 256, 258)),
		axisCase("cumsum_empty", ir.OpCumsum, 0, arr(ir.F32, sh(0)), arr(ir.F32, sh(0))),
	}
}
