package stablehlo

import (
	"math"

	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
)

func indexCases() []xc {
	x32 := arr(ir.F32, sh(3, 2), 0, 1, 2, 3, 4, 5)
	take := func(axis int64) func(b *ir.Builder, p []*ir.Value) *ir.Value {
		return func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpTake, &ir.AxisAttr{Axis: axis}, p[0], p[1])
		}
	}
	scatter := func(axis int64) func(b *ir.Builder, p []*ir.Value) *ir.Value {
		return func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpScatterAdd, &ir.AxisAttr{Axis: axis}, p[0], p[1], p[2])
		}
	}
	oneHot := func(depth int64, d ir.DType) func(b *ir.Builder, p []*ir.Value) *ir.Value {
		return func(b *ir.Builder, p []*ir.Value) *ir.Value {
			t := ir.Type{DType: d, Shape: append(append([]ir.Dim{}, p[0].Type.Shape...), ir.D(depth))}
			return typed(b, ir.OpOneHot, &ir.DepthAttr{Depth: depth}, t, p[0])
		}
	}
	topK := func(k int64) func(b *ir.Builder, p []*ir.Value) []*ir.Value {
		return func(b *ir.Builder, p []*ir.Value) []*ir.Value {
			return multi(b, ir.OpTopK, &ir.TopKAttr{K: k}, p[0])
		}
	}
	hot300 := make([]float64, 600)
	hot300[255], hot300[300+44] = 1, 1
	return []xc{
		// Indices are clamped into [0, n-1].
		one("take_axis0_clamped", ins(x32, arr(ir.I32, sh(4), 2, -1, 5, 0)), arr(ir.F32, sh(4, 2), 4, 5, 0, 1, 4, 5, 0, 1), take(0)),
		one("take_axis1_2d_indices", ins(arr(ir.F32, sh(2, 3), 0, 1, 2, 3, 4, 5), arr(ir.I64, sh(2, 2), 2, 0, 1, 1)),
			arr(ir.F32, sh(2, 2, 2), 2, 0, 1, 1, 5, 3, 4, 4), take(1)),
		one("take_scalar_u32_index", ins(x32, arr(ir.U32, nil, math.MaxUint32)), arr(ir.F32, sh(2), 4, 5), take(0)),
		one("take_middle_axis", ins(arr(ir.I32, sh(2, 3, 2), seq(12, 0, 1)...), arr(ir.I8, sh(1), 1)), arr(ir.I32, sh(2, 1, 2), 2, 3, 8, 9), take(1)),
		// Out-of-range rows (negative, too large, unsigned huge) are dropped; duplicates add.
		one("scatter_add_axis0", ins(arr(ir.F32, sh(4, 2), seq(8, 0, 0)...), arr(ir.I32, sh(5), 1, 1, -1, 4, 3),
			arr(ir.F32, sh(5, 2), 1, 1, 2, 2, 5, 5, 7, 7, 3, 3)), arr(ir.F32, sh(4, 2), 0, 0, 3, 3, 0, 0, 3, 3), scatter(0)),
		one("scatter_add_axis1", ins(arr(ir.I32, sh(2, 3), 1, 1, 1, 1, 1, 1), arr(ir.U32, sh(3), 2, 0, math.MaxUint32),
			arr(ir.I32, sh(2, 3), 10, 20, 99, 30, 40, 99)), arr(ir.I32, sh(2, 3), 21, 1, 11, 41, 1, 31), scatter(1)),
		one("scatter_add_bf16_f32_accumulation", ins(arr(ir.BF16, sh(1), 256), arr(ir.I32, sh(2), 0, 0), arr(ir.BF16, sh(2), 1, 1)),
			arr(ir.BF16, sh(1), 258), scatter(0)),
		one("scatter_add_scalar_index", ins(arr(ir.F32, sh(3), 1, 2, 3), arr(ir.I64, nil, 2), arr(ir.F32, nil, 10)), arr(ir.F32, sh(3), 1, 2, 13), scatter(0)),
		// Starts are clamped to [0, dim - size].
		one("dynamic_slice_clamped", ins(arr(ir.F32, sh(4, 3), seq(12, 0, 1)...), arr(ir.I32, nil, 3), arr(ir.I32, nil, -1)),
			arr(ir.F32, sh(2, 2), 6, 7, 9, 10), func(b *ir.Builder, p []*ir.Value) *ir.Value {
				return op(b, ir.OpDynamicSlice, &ir.SizesAttr{Sizes: []int64{2, 2}}, p[0], p[1], p[2])
			}),
		one("dynamic_slice_u32_start", ins(arr(ir.I32, sh(4), 0, 1, 2, 3), arr(ir.U32, nil, math.MaxUint32)),
			arr(ir.I32, sh(2), 2, 3), func(b *ir.Builder, p []*ir.Value) *ir.Value {
				return op(b, ir.OpDynamicSlice, &ir.SizesAttr{Sizes: []int64{2}}, p[0], p[1])
			}),
		one("dynamic_update_slice_clamped", ins(arr(ir.F32, sh(3, 3), seq(9, 0, 0)...), arr(ir.F32, sh(2, 2), 1, 2, 3, 4), arr(ir.I64, nil, 5), arr(ir.I64, nil, 1)),
			arr(ir.F32, sh(3, 3), 0, 0, 0, 0, 1, 2, 0, 3, 4), func(b *ir.Builder, p []*ir.Value) *ir.Value {
				return op(b, ir.OpDynamicUpdateSlice, nil, p[0], p[1], p[2], p[3])
			}),
		one("dynamic_update_slice_negative_start", ins(arr(ir.U8, sh(3), 9, 9, 9), arr(ir.U8, sh(1), 1), arr(ir.I8, nil, -5)),
			arr(ir.U8, sh(3), 1, 9, 9), func(b *ir.Builder, p []*ir.Value) *ir.Value {
				return op(b, ir.OpDynamicUpdateSlice, nil, p[0], p[1], p[2])
			}),
		// An index outside [0, depth) gives a row of zeros.
		one("one_hot_f32", ins(arr(ir.I32, sh(4), 0, 2, -1, 3)), arr(ir.F32, sh(4, 3), 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0), oneHot(3, ir.F32)),
		one("one_hot_i1", ins(arr(ir.I32, sh(2, 1), 1, 5)), arr(ir.I1, sh(2, 1, 2), 0, 1, 0, 0), oneHot(2, ir.I1)),
		one("one_hot_u8_depth300", ins(arr(ir.U8, sh(2), 255, 44)), arr(ir.BF16, sh(2, 300), hot300...), oneHot(300, ir.BF16)),
		// Descending in total order, ties lower index first.
		{name: "top_k_f32", in: ins(arr(ir.F32, sh(2, 5), 1, nan, 3, 3, -inf, negZ, 0, 2, negNaN, 2)),
			want: ins(arr(ir.F32, sh(2, 3), nan, 3, 3, 2, 2, 0), arr(ir.I32, sh(2, 3), 1, 2, 3, 2, 4, 1)), f: topK(3)},
		{name: "top_k_i32", in: ins(arr(ir.I32, sh(4), 5, 1, 5, 7)), want: ins(arr(ir.I32, sh(2), 7, 5), arr(ir.I32, sh(2), 3, 0)), f: topK(2)},
		{name: "top_k_all", in: ins(arr(ir.BF16, sh(3), 1, 3, 2)), want: ins(arr(ir.BF16, sh(3), 3, 2, 1), arr(ir.I32, sh(3), 1, 2, 0)), f: topK(3)},
		{name: "top_k_zero", in: ins(arr(ir.F32, sh(3), 1, 3, 2)), want: ins(arr(ir.F32, sh(0)), arr(ir.I32, sh(0))), f: topK(0)},
		// Ascending in total order (-NaN < -inf < -0 < +0 < ... < NaN), stable.
		axisCase("argsort_f32", ir.OpArgsort, 0, arr(ir.F32, sh(8), 3, 1, nan, 1, negZ, 0, -inf, negNaN), arr(ir.I32, sh(8), 7, 6, 4, 5, 1, 3, 0, 2)),
		axisCase("argsort_i32_axis0", ir.OpArgsort, 0, arr(ir.I32, sh(3, 2), 3, 1, 1, 1, 2, 0), arr(ir.I32, sh(3, 2), 1, 2, 2, 0, 0, 1)),
		axisCase("argsort_u32", ir.OpArgsort, 0, arr(ir.U32, sh(3), math.MaxUint32, 0, 7), arr(ir.I32, sh(3), 1, 2, 0)),
		axisCase("argsort_f16", ir.OpArgsort, 0, arr(ir.F16, sh(4), 2, -1, 2, -1), arr(ir.I32, sh(4), 1, 3, 0, 2)),
	}
}

// Reference formulas for the composites, in float64; results are rounded to the dtype.
func gelu(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
func geluTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

// rows applies f to each row (last axis) of a row-major n x m matrix.
func rows(x []float64, m int, f func([]float64) []float64) []float64 {
	var out []float64
	for i := 0; i < len(x); i += m {
		out = append(out, f(x[i:i+m])...)
	}
	return out
}

func softmaxRef(log bool) func([]float64) []float64 {
	return func(r []float64) []float64 {
		mx := math.Inf(-1)
		for _, v := range r {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for _, v := range r {
			s += math.Exp(v - mx)
		}
		out := make([]float64, len(r))
		for i, v := range r {
			if log {
				out[i] = v - mx - math.Log(s)
			} else {
				out[i] = math.Exp(v-mx) / s
			}
		}
		return out
	}
}

func normRef(scale, bias []float64, eps float64, rms bool) func([]float64) []float64 {
	return func(r []float64) []float64 {
		n := float64(len(r))
		mean := 0.0
		if !rms {
			for _, v := range r {
				mean += v / n
			}
		}
		ms := 0.0
		for _, v := range r {
			ms += (v - mean) * (v - mean) / n
		}
		out := make([]float64, len(r))
		for i, v := range r {
			out[i] = (v - mean) / math.Sqrt(ms+eps) * scale[i]
			if !rms {
				out[i] += bias[i]
			}
		}
		return out
	}
}

func id(v float64) float64 { return v }

func compositeCases() []xc {
	gx := []float64{-2, -0.5, 0, 1, 3}
	sx := []float64{1, 2, 3, -1, 0, 1}
	sxT := []float64{1, -1, 2, 0, 3, 1} // sx transposed to 3x2
	lx := []float64{1, 2, 3, 4, -1, 0.5, 2, 0}
	scale, bias := []float64{1, 0.5, 2, -1}, []float64{0, 1, -1, 0.25}
	unit := func(name string, o ir.Op, attr ir.Attr, d ir.DType, shape []int64, x []float64, want []float64, tol float64) xc {
		x = apply(d, x, id)
		c := one(name, ins(arr(d, shape, x...)), arr(d, shape, apply(d, want, id)...), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, o, attr, p[0])
		})
		c.tol = tol
		return c
	}
	norm := func(name string, o ir.Op, d ir.DType, eps float64, tol float64) xc {
		rms := o == ir.OpRMSNorm
		in := ins(arr(d, sh(2, 4), lx...), arr(d, sh(4), scale...))
		if !rms {
			in = append(in, arr(d, sh(4), bias...))
		}
		want := arr(d, sh(2, 4), apply(d, rows(lx, 4, normRef(scale, bias, eps, rms)), id)...)
		c := one(name, in, want, func(b *ir.Builder, p []*ir.Value) *ir.Value { return op(b, o, &ir.EpsAttr{Eps: eps}, p...) })
		c.tol = tol
		return c
	}
	cs := []xc{
		one("relu_f32", ins(arr(ir.F32, sh(5), -1, 0, 2, nan, negZ)), arr(ir.F32, sh(5), 0, 0, 2, nan, 0), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpRelu, nil, p[0])
		}),
		one("relu_i32", ins(arr(ir.I32, sh(2), -3, 4)), arr(ir.I32, sh(2), 0, 4), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpRelu, nil, p[0])
		}),
		unit("gelu_f32", ir.OpGelu, &ir.GeluAttr{}, ir.F32, sh(5), gx, apply(ir.F32, gx, gelu), 1e-6),
		unit("gelu_tanh_f32", ir.OpGelu, &ir.GeluAttr{Approximate: true}, ir.F32, sh(5), gx, apply(ir.F32, gx, geluTanh), 1e-6),
		unit("silu_f32", ir.OpSilu, nil, ir.F32, sh(5), gx, apply(ir.F32, gx, func(x float64) float64 { return x * sigmoid(x) }), 1e-6),
		unit("softmax_axis1", ir.OpSoftmax, &ir.AxisAttr{Axis: 1}, ir.F32, sh(2, 3), sx, rows(sx, 3, softmaxRef(false)), 1e-6),
		unit("log_softmax_axis1", ir.OpLogSoftmax, &ir.AxisAttr{Axis: 1}, ir.F32, sh(2, 3), sx, rows(sx, 3, softmaxRef(true)), 1e-6),
		// Along axis 0 of a 2x3: the reference works on the transpose and transposes back.
		unit("softmax_axis0", ir.OpSoftmax, &ir.AxisAttr{Axis: 0}, ir.F32, sh(3, 2), sxT, transpose23(rows(sx, 3, softmaxRef(false))), 1e-6),
		unit("softmax_neg_inf", ir.OpSoftmax, &ir.AxisAttr{Axis: 0}, ir.F32, sh(3), []float64{-inf, 0, 0}, []float64{0, 0.5, 0.5}, 0),
		norm("layer_norm_f32", ir.OpLayerNorm, ir.F32, 1e-5, 1e-5),
		norm("rms_norm_f32", ir.OpRMSNorm, ir.F32, 1e-6, 1e-5),
	}
	// Half types: computed in f32, rounded once; compared within one ulp.
	for _, d := range []ir.DType{ir.BF16, ir.F16} {
		ulp := 1.0 / 128
		if d == ir.F16 {
			ulp = 1.0 / 1024
		}
		hx := apply(d, gx, id)
		hs := apply(d, sx, id)
		cs = append(cs,
			unit("gelu_"+d.String(), ir.OpGelu, &ir.GeluAttr{}, d, sh(5), hx, apply(d, hx, gelu), ulp),
			unit("gelu_tanh_"+d.String(), ir.OpGelu, &ir.GeluAttr{Approximate: true}, d, sh(5), hx, apply(d, hx, geluTanh), ulp),
			unit("silu_"+d.String(), ir.OpSilu, nil, d, sh(5), hx, apply(d, hx, func(x float64) float64 { return x * sigmoid(x) }), ulp),
			unit("softmax_"+d.String(), ir.OpSoftmax, &ir.AxisAttr{Axis: 1}, d, sh(2, 3), hs, rows(hs, 3, softmaxRef(false)), ulp),
			unit("log_softmax_"+d.String(), ir.OpLogSoftmax, &ir.AxisAttr{Axis: 1}, d, sh(2, 3), hs, rows(hs, 3, softmaxRef(true)), ulp),
		)
		cs = append(cs, norm("layer_norm_"+d.String(), ir.OpLayerNorm, d, 1e-5, ulp), norm("rms_norm_"+d.String(), ir.OpRMSNorm, d, 1e-6, ulp))
	}
	return cs
}

// transpose23 transposes a row-major 2x3 matrix into a 3x2 one.
func transpose23(x []float64) []float64 {
	return []float64{x[0], x[3], x[1], x[4], x[2], x[5]}
}

// moduleCases cover constants and calls: whole modules.
func moduleCases() []xc {
	big := make([]float64, 121)
	for i := range big {
		big[i] = float64(i) * 0.1
	}
	bools := make([]float64, 120)
	for i := range bools {
		bools[i] = float64(i % 3 / 2)
	}
	consts := []struct {
		t ir.Type
		v []float64
	}{
		{ir.Tensor(ir.F32, 2, 2), []float64{1, nan, -inf, negZ}},
		{ir.Scalar(ir.BF16), []float64{0.1}},
		{ir.Tensor(ir.F32, 3), []float64{0.1, 1.0 / 3, 16777215}},
		{ir.Scalar(ir.U32), []float64{math.MaxUint32}},
		{ir.Tensor(ir.I1, 3), []float64{1, 0, 1}},
		{ir.Tensor(ir.F32, 11, 11), big},
		{ir.Tensor(ir.I1, 120), bools},
		{ir.Tensor(ir.F16, 2), []float64{inf}},
		{ir.Tensor(ir.F64, 2), []float64{1e-300, math.Pi}},
		{ir.Tensor(ir.I64, 2), []float64{-9007199254740993, 5}},
		{ir.Tensor(ir.F32, 0, 2), nil},
		{ir.Tensor(ir.BF16, 2), []float64{negNaN, 1e-40}},
	}
	var want []*npy.Array
	for _, c := range consts {
		v := c.v
		if len(v) == 1 {
			n, _ := c.t.NumElements()
			for len(v) < int(n) {
				v = append(v, v[0])
			}
		}
		if c.t.DType.IsFloat() {
			v = apply(c.t.DType, v, id)
		}
		want = append(want, arr(c.t.DType, c.t.Dims(), v...))
	}
	// -9007199254740993 is not a float64: build that literal from ints.
	want[9] = npy.Of(sh(2), []int64{-9007199254740993, 5})
	constMod := func() *ir.Module {
		m := ir.NewModule("consts.tir")
		f := m.NewFunc("consts", nil, nil, nil, ir.Pos{})
		b := ir.NewBuilder(f)
		var outs []*ir.Value
		for i, c := range consts {
			var l *ir.Literal
			switch {
			case i == 9:
				l = &ir.Literal{Ints: []int64{-9007199254740993, 5}}
			case c.t.DType.IsFloat():
				l = ir.NewLiteral(c.t, c.v)
			default:
				l = ir.NewLiteral(c.t, c.v)
			}
			t := c.t
			outs = append(outs, b.Typed(ir.OpConstant, &ir.ConstAttr{Value: l}, &t))
			f.Results = append(f.Results, c.t)
		}
		b.Return(outs...)
		return m
	}
	// @f is the entry; it calls @main (renamed in the output) twice and @sq once.
	callMod := func() *ir.Module {
		m := ir.NewModule("calls.tir")
		t := ir.Tensor(ir.F32, 2)
		g := m.NewFunc("main", []string{"a", "b"}, []ir.Type{t, t}, []ir.Type{t, t}, ir.Pos{})
		gb := ir.NewBuilder(g)
		gb.Return(op(gb, ir.OpAdd, nil, g.Params[0], g.Params[1]), op(gb, ir.OpMul, nil, g.Params[0], g.Params[1]))
		sq := m.NewFunc("sq", []string{"a"}, []ir.Type{t}, []ir.Type{t}, ir.Pos{})
		sb := ir.NewBuilder(sq)
		sb.Return(op(sb, ir.OpMul, nil, sq.Params[0], sq.Params[0]))
		f := m.NewFunc("f", []string{"x", "y"}, []ir.Type{t, t}, []ir.Type{t, t}, ir.Pos{})
		b := ir.NewBuilder(f)
		call := func(name string, res int, args ...*ir.Value) []*ir.Value {
			hint := make([]ir.Type, res)
			for i := range hint {
				hint[i] = t
			}
			in, err := b.Emit(ir.OpCall, &ir.CallAttr{Callee: name}, hint, args...)
			if err != nil {
				panic(err)
			}
			return in.Results
		}
		r1 := call("main", 2, f.Params[0], f.Params[1])
		r2 := call("main", 2, r1[0], r1[1])
		b.Return(call("sq", 1, r2[0])[0], r2[1])
		return m
	}
	return []xc{
		{name: "constants", mod: constMod, want: want},
		// (x+y) + xy and (x+y)*xy: x=1,2 y=3,4 -> s=4,6 p=3,8 -> (7,14)^2 and (12,48).
		{name: "calls", mod: callMod, entry: "f", modName: "jit my/model \"x\"", in: ins(arr(ir.F32, sh(2), 1, 2), arr(ir.F32, sh(2), 3, 4)),
			want: ins(arr(ir.F32, sh(2), 49, 196), arr(ir.F32, sh(2), 12, 48))},
	}
}

// edgeCases: zero-size tensors, i1 through the movement ops, and the wider dtypes.
func edgeCases() []xc {
	e := func(d ir.DType, dims ...int64) *npy.Array { return arr(d, dims) }
	i1 := func(v ...float64) *npy.Array { return arr(ir.I1, sh(int64(len(v))), v...) }
	return []xc{
		axisCase("argmax_empty_axis", ir.OpArgmax, 1, e(ir.F32, 3, 0), arr(ir.I32, sh(3), 0, 0, 0)),
		axisCase("argsort_empty", ir.OpArgsort, 1, e(ir.F32, 2, 0), e(ir.I32, 2, 0)),
		axisCase("cumsum_zero_rows", ir.OpCumsum, 1, e(ir.F32, 0, 3), e(ir.F32, 0, 3)),
		axisCase("softmax_empty", ir.OpSoftmax, 1, e(ir.F32, 2, 0), e(ir.F32, 2, 0)),
		one("take_empty_indices", ins(arr(ir.F32, sh(2), 1, 2), e(ir.I32, 0)), e(ir.F32, 0), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpTake, &ir.AxisAttr{Axis: 0}, p[0], p[1])
		}),
		one("scatter_add_empty_indices", ins(arr(ir.F32, sh(2), 1, 2), e(ir.I32, 0), e(ir.F32, 0)), arr(ir.F32, sh(2), 1, 2), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpScatterAdd, &ir.AxisAttr{Axis: 0}, p[0], p[1], p[2])
		}),
		one("dot_empty_contraction", ins(e(ir.F32, 2, 0), e(ir.F32, 0, 3)), arr(ir.F32, sh(2, 3), 0, 0, 0, 0, 0, 0), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpDotGeneral, &ir.DotAttr{LhsContract: []int64{1}, RhsContract: []int64{0}}, p[0], p[1])
		}),
		one("layer_norm_empty", ins(e(ir.F32, 2, 0), e(ir.F32, 0), e(ir.F32, 0)), e(ir.F32, 2, 0), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpLayerNorm, &ir.EpsAttr{Eps: 1e-5}, p...)
		}),
		one("one_hot_depth0", ins(arr(ir.I32, sh(2), 0, 1)), e(ir.F32, 2, 0), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpOneHot, &ir.DepthAttr{Depth: 0}, ir.Tensor(ir.F32, 2, 0), p[0])
		}),
		one("pad_i1", ins(i1(1, 1), arr(ir.I1, nil, 0)), i1(0, 1, 0, 1), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpPad, &ir.PadAttr{Low: []int64{1}, High: []int64{0}, Interior: []int64{1}}, p[0], p[1])
		}),
		one("take_i1", ins(i1(1, 0), arr(ir.I32, sh(3), 1, 1, 0)), i1(0, 0, 1), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpTake, &ir.AxisAttr{Axis: 0}, p[0], p[1])
		}),
		one("dynamic_update_slice_i1", ins(i1(0, 0, 0), i1(1), arr(ir.I32, nil, 1)), i1(0, 1, 0), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return op(b, ir.OpDynamicUpdateSlice, nil, p[0], p[1], p[2])
		}),
		one("transpose_concat_i1", ins(arr(ir.I1, sh(2, 1), 1, 0)), arr(ir.I1, sh(1, 4), 1, 0, 1, 0), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			t := op(b, ir.OpTranspose, &ir.PermAttr{Perm: []int64{1, 0}}, p[0])
			return op(b, ir.OpConcat, &ir.AxisAttr{Axis: 1}, t, t)
		}),
		one("iota_i8_wraps", nil, arr(ir.I8, sh(200), mapVals(seq(200, 0, 1), func(v float64) float64 { return float64(int8(v)) })...), func(b *ir.Builder, p []*ir.Value) *ir.Value {
			return typed(b, ir.OpIota, &ir.AxisAttr{Axis: 0}, ir.Tensor(ir.I8, 200))
		}),
		unaryCase("erf_f64", ir.OpErf, arr(ir.F64, sh(3), -1, 0.5, 2), arr(ir.F64, sh(3), math.Erf(-1), math.Erf(0.5), math.Erf(2)), 1e-14),
		unaryCase("tanh_f64", ir.OpTanh, arr(ir.F64, sh(2), -1, 0.5), arr(ir.F64, sh(2), math.Tanh(-1), math.Tanh(0.5)), 1e-14),
		withTol(axisCase("softmax_f64", ir.OpSoftmax, 0, arr(ir.F64, sh(3), 1, 2, 3), arr(ir.F64, sh(3), softmaxRef(false)([]float64{1, 2, 3})...)), 1e-14),
		binaryCase("div_i16", ir.OpDiv, arr(ir.I16, sh(3), math.MinInt16, 7, 1), arr(ir.I16, sh(3), -1, 0, 2), arr(ir.I16, sh(3), math.MinInt16, -1, 0), 0),
		binaryCase("rem_i64", ir.OpRem, arr(ir.I64, sh(3), -7, 7, 1), arr(ir.I64, sh(3), 3, 0, -1), arr(ir.I64, sh(3), -1, 7, 0), 0),
		binaryCase("pow_i64_wraps", ir.OpPow, arr(ir.I64, sh(2), 3, -1), arr(ir.I64, sh(2), 41, -7), npy.Of(sh(2), []int64{-420491770248316829, -1}), 0),
		reduceCase("reduce_sum_u8_wraps", ir.OpReduceSum, []int64{0}, false, arr(ir.U8, sh(3), 200, 100, 1), arr(ir.U8, nil, 45)),
		axisCase("argmax_i16", ir.OpArgmax, 0, arr(ir.I16, sh(3), -5, math.MaxInt16, math.MaxInt16), arr(ir.I32, nil, 1)),
		axisCase("cumsum_u32", ir.OpCumsum, 0, arr(ir.U32, sh(2), math.MaxUint32, 2), arr(ir.U32, sh(2), math.MaxUint32, 1)),
	}
}

func withTol(c xc, tol float64) xc {
	c.tol = tol
	return c
}
