package tensor_test

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

func TestConstructorsAndReading(t *testing.T) {
	expect(t, f32(sh(2, 2), 1, 2, 3, 4.5), "f32[2,2]", 1, 2, 3, 4.5)
	expect(t, tensor.FromSlice([]float64{0.1, -2, 1e300}, 3), "f64[3]", 0.1, -2, 1e300)
	expect(t, i32(sh(2), -7, 9), "i32[2]", -7, 9)
	expect(t, tensor.FromSlice([]int64{1 << 40, -3}, 1, 2), "i64[1,2]", 1<<40, -3)
	expect(t, tensor.FromSlice([]bool{true, false, true}, 3), "i1[3]", 1, 0, 1)
	expect(t, tensor.Zeros(ir.BF16, 2), "bf16[2]", 0, 0)
	expect(t, tensor.Ones(ir.I1, 2), "i1[2]", 1, 1)
	expect(t, tensor.Full(300.7, ir.I8), "i8[]", 127) // saturates, as convert does
	expect(t, tensor.Full(0.1, ir.BF16, 1), "bf16[1]", 0.10009765625)
	expect(t, tensor.Scalar(2.5, ir.F64), "f64[]", 2.5)
	expect(t, tensor.Arange(ir.I32, 4), "i32[4]", 0, 1, 2, 3)
	expect(t, tensor.Iota(ir.F32, -1, 2, 3), "f32[2,3]", 0, 1, 2, 0, 1, 2)
	expect(t, tensor.Iota(ir.F32, 0, 2, 3), "f32[2,3]", 0, 0, 0, 1, 1, 1)
	expect(t, tensor.Zeros(ir.F32, 0, 3), "f32[0,3]")

	x := f32(sh(2), 1.5, -2)
	if got := x.Float32s(); got[0] != 1.5 || got[1] != -2 {
		t.Errorf("Float32s = %v", got)
	}
	if got := i32(sh(2), 3, -4).Float32s(); got[0] != 3 || got[1] != -4 {
		t.Errorf("Float32s of i32 = %v", got)
	}
	if got := i32(sh(2), 3, -4).Int64s(); got[0] != 3 || got[1] != -4 {
		t.Errorf("Int64s = %v", got)
	}
	if got := tensor.FromSlice([]bool{false, true}, 2).Bools(); got[0] || !got[1] {
		t.Errorf("Bools = %v", got)
	}
	if got := scalar(3).Item(); got != 3 {
		t.Errorf("Item = %v", got)
	}
	if got, want := f32(sh(2, 2), 1, 2, 3, 4.5).String(), "f32[2,2] [[1.0, 2.0], [3.0, 4.5]]"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got := x.Shape(); len(got) != 1 || got[0] != 2 || x.DType() != ir.F32 || x.Rank() != 1 || x.IsTraced() || x.Value() != nil || x.Tracer() != nil {
		t.Errorf("Shape %v DType %s Rank %d IsTraced %v", got, x.DType(), x.Rank(), x.IsTraced())
	}
	if c := x.Buffer(); c.Float64At(0) != 1.5 || tensor.FromBuffer(c).Float64s()[1] != -2 {
		t.Errorf("CPU round trip: %v", c)
	}
	// FromSlice wraps its data (the documented way to keep using the slice is
	// to pass a clone); the accessors copy out.
	data := []float32{1, 2}
	y := tensor.FromSlice(data, 2)
	if &y.Buffer().Float32s()[0] != &data[0] {
		t.Error("FromSlice copied its data")
	}
	out := y.Float32s()
	out[0] = 9
	if y.Float32s()[0] != 1 {
		t.Error("Float32s handed out the tensor's storage")
	}
}

func TestRandom(t *testing.T) {
	a := tensor.Random(7, ir.F32, 1000)
	b := tensor.Random(7, ir.F32, 1000)
	c := tensor.Random(8, ir.F32, 1000)
	av, bv, cv := a.Float64s(), b.Float64s(), c.Float64s()
	differ := false
	lo, hi := 1.0, -1.0
	for i := range av {
		if av[i] != bv[i] {
			t.Fatalf("same seed, element %d: %v and %v", i, av[i], bv[i])
		}
		differ = differ || av[i] != cv[i]
		lo, hi = math.Min(lo, av[i]), math.Max(hi, av[i])
	}
	if !differ || lo < -1 || hi >= 1 || lo > -0.99 || hi < 0.99 {
		t.Errorf("seeds 7 and 8 differ: %v; range [%v, %v]", differ, lo, hi)
	}
	for _, dt := range []ir.DType{ir.I32, ir.U8, ir.I1} {
		want := map[ir.DType][2]int64{ir.I32: {-8, 8}, ir.U8: {0, 16}, ir.I1: {0, 1}}[dt]
		seen := map[int64]bool{}
		for _, v := range tensor.Random(3, dt, 2000).Int64s() {
			if v < want[0] || v > want[1] {
				t.Fatalf("%s value %d outside %v", dt, v, want)
			}
			seen[v] = true
		}
		if int64(len(seen)) != want[1]-want[0]+1 {
			t.Errorf("%s: %d distinct values, want %d", dt, len(seen), want[1]-want[0]+1)
		}
	}
}

func TestUnary(t *testing.T) {
	x := f32(sh(4), -1.5, -0.5, 0.5, 2.5)
	e := func(f func(float64) float64) []float64 {
		out := []float64{}
		for _, v := range []float64{-1.5, -0.5, 0.5, 2.5} {
			out = append(out, f32r(f(v)))
		}
		return out
	}
	expect(t, x.Neg(), "f32[4]", 1.5, 0.5, -0.5, -2.5)
	expect(t, x.Abs(), "f32[4]", 1.5, 0.5, 0.5, 2.5)
	expect(t, x.Exp(), "f32[4]", e(math.Exp)...)
	expect(t, x.Sin(), "f32[4]", e(math.Sin)...)
	expect(t, x.Cos(), "f32[4]", e(math.Cos)...)
	expect(t, x.Tanh(), "f32[4]", e(math.Tanh)...)
	expect(t, x.Erf(), "f32[4]", e(math.Erf)...)
	expect(t, x.Expm1(), "f32[4]", e(math.Expm1)...)
	expect(t, x.Cbrt(), "f32[4]", e(math.Cbrt)...)
	expect(t, x.Sigmoid(), "f32[4]", e(func(v float64) float64 { return 1 / (1 + math.Exp(-v)) })...)
	expect(t, x.Floor(), "f32[4]", -2, -1, 0, 2)
	expect(t, x.Ceil(), "f32[4]", -1, -0, 1, 3)
	expect(t, x.Round(), "f32[4]", -2, -0, 0, 2) // half to even
	expect(t, x.Sign(), "f32[4]", -1, -1, 1, 1)
	p := f32(sh(3), 0.25, 1, 4)
	expect(t, p.Log(), "f32[3]", f32r(math.Log(0.25)), 0, f32r(math.Log(4)))
	expect(t, p.Log1p(), "f32[3]", f32r(math.Log1p(0.25)), f32r(math.Log(2)), f32r(math.Log(5)))
	expect(t, p.Sqrt(), "f32[3]", 0.5, 1, 2)
	expect(t, p.Rsqrt(), "f32[3]", 2, 1, 0.5)
	expect(t, tensor.FromSlice([]bool{true, false}, 2).Not(), "i1[2]", 0, 1)
	expect(t, i32(sh(2), 0, 5).Not(), "i32[2]", -1, -6)
	expect(t, i32(sh(3), -3, 0, 7).Sign(), "i32[3]", -1, 0, 1)
	expect(t, i32(sh(1), math.MinInt32).Neg(), "i32[1]", math.MinInt32) // wraps
}

func TestBinaryAndBroadcasting(t *testing.T) {
	a := f32(sh(2, 3), 1, 2, 3, 4, 5, 6)
	row := f32(sh(3), 10, 20, 30)
	col := f32(sh(2, 1), 100, 200)
	expect(t, a.Add(row), "f32[2,3]", 11, 22, 33, 14, 25, 36)
	expect(t, row.Add(a), "f32[2,3]", 11, 22, 33, 14, 25, 36)
	expect(t, a.Add(col), "f32[2,3]", 101, 102, 103, 204, 205, 206)
	expect(t, col.Add(row), "f32[2,3]", 110, 120, 130, 210, 220, 230) // both stretch
	expect(t, a.Mul(scalar(2)), "f32[2,3]", 2, 4, 6, 8, 10, 12)
	expect(t, scalar(10).Sub(a), "f32[2,3]", 9, 8, 7, 6, 5, 4)
	expect(t, a.Div(scalar(4)), "f32[2,3]", 0.25, 0.5, 0.75, 1, 1.25, 1.5)
	expect(t, f32(sh(2), 5.5, -5.5).Rem(f32(sh(2), -2, 2)), "f32[2]", 1.5, -1.5)
	expect(t, f32(sh(2), 2, 9).Pow(f32(sh(2), 10, 0.5)), "f32[2]", 1024, 3)
	expect(t, f32(sh(3), 1, nan32, 5).Maximum(f32(sh(3), 2, 0, 4)), "f32[3]", 2, nan, 5)
	expect(t, f32(sh(3), 1, nan32, 5).Minimum(f32(sh(3), 2, 0, 4)), "f32[3]", 1, nan, 4)
	expect(t, f32(sh(2), 1, 0).Atan2(f32(sh(2), 0, -1)), "f32[2]", f32r(math.Pi/2), f32r(math.Pi))
	p := tensor.FromSlice([]bool{false, false, true, true}, 4)
	q := tensor.FromSlice([]bool{false, true, false, true}, 4)
	expect(t, p.And(q), "i1[4]", 0, 0, 0, 1)
	expect(t, p.Or(q), "i1[4]", 0, 1, 1, 1)
	expect(t, p.Xor(q), "i1[4]", 0, 1, 1, 0)
	expect(t, i32(sh(2), 12, 10).And(i32(sh(), 6)), "i32[2]", 4, 2)
	expect(t, i32(sh(3), 7, -7, 7).Div(i32(sh(3), 2, 2, 0)), "i32[3]", 3, -3, -1)
	expect(t, i32(sh(3), 7, -7, 7).Rem(i32(sh(3), 2, 2, 0)), "i32[3]", 1, -1, 7)
	expect(t, i32(sh(1), math.MaxInt32).Add(i32(sh(1), 1)), "i32[1]", math.MinInt32)
}

func TestCompareWhereClamp(t *testing.T) {
	a := f32(sh(4), 1, 2, 3, nan32)
	two := scalar(2)
	expect(t, a.Eq(two), "i1[4]", 0, 1, 0, 0)
	expect(t, a.Ne(two), "i1[4]", 1, 0, 1, 1)
	expect(t, a.Lt(two), "i1[4]", 1, 0, 0, 0)
	expect(t, a.Le(two), "i1[4]", 1, 1, 0, 0)
	expect(t, a.Gt(two), "i1[4]", 0, 0, 1, 0)
	expect(t, a.Ge(two), "i1[4]", 0, 1, 1, 0)

	// Where broadcasts all three: a [2,1] predicate, a [3] branch, a scalar.
	pred := tensor.FromSlice([]bool{true, false}, 2, 1)
	expect(t, tensor.Where(pred, f32(sh(3), 1, 2, 3), scalar(-1)), "f32[2,3]", 1, 2, 3, -1, -1, -1)
	expect(t, tensor.Where(tensor.FromSlice([]bool{false}), f32(sh(2), 1, 2), f32(sh(2), 3, 4)), "f32[2]", 3, 4)

	x := f32(sh(2, 2), -5, 0.5, 2, 9)
	expect(t, x.Clamp(scalar(0), scalar(1)), "f32[2,2]", 0, 0.5, 1, 1)
	expect(t, x.Clamp(f32(sh(2), -10, 1), scalar(3)), "f32[2,2]", -5, 1, 2, 3)
}

func TestShapeOps(t *testing.T) {
	a := f32(sh(2, 3), 1, 2, 3, 4, 5, 6)
	expect(t, a.Reshape(3, 2), "f32[3,2]", 1, 2, 3, 4, 5, 6)
	expect(t, a.Reshape(-1), "f32[6]", 1, 2, 3, 4, 5, 6)
	expect(t, a.Reshape(3, -1, 1), "f32[3,2,1]", 1, 2, 3, 4, 5, 6)
	expect(t, f32(sh(3), 2.9, -2.9, nan32).Convert(ir.I32), "i32[3]", 2, -2, 0)
	expect(t, i32(sh(2), 0, 3).Convert(ir.I1), "i1[2]", 0, 1)
	if a.Convert(ir.F32) != a {
		t.Error("Convert to the same dtype should return the tensor itself")
	}
	expect(t, f32(sh(3), 1, 2, 3).BroadcastTo(2, 3), "f32[2,3]", 1, 2, 3, 1, 2, 3)
	expect(t, f32(sh(2, 1), 1, 2).BroadcastTo(2, 2), "f32[2,2]", 1, 1, 2, 2)
	expect(t, f32(sh(2), 1, 2).BroadcastInDim(sh(2, 3), 0), "f32[2,3]", 1, 1, 1, 2, 2, 2)
	expect(t, a.Transpose(), "f32[3,2]", 1, 4, 2, 5, 3, 6)
	expect(t, a.Transpose(-1, 0), "f32[3,2]", 1, 4, 2, 5, 3, 6)
	b := f32(sh(1, 2, 3), 1, 2, 3, 4, 5, 6)
	expect(t, b.Transpose(1, -1, 0), "f32[2,3,1]", 1, 2, 3, 4, 5, 6)
	expect(t, a.Slice(sh(0, 1), sh(2, 3), nil), "f32[2,2]", 2, 3, 5, 6)
	expect(t, a.Slice(sh(0, 0), sh(2, 3), sh(1, 2)), "f32[2,2]", 1, 3, 4, 6)
	expect(t, tensor.Concat(-1, a, f32(sh(2, 1), 7, 8)), "f32[2,4]", 1, 2, 3, 7, 4, 5, 6, 8)
	expect(t, tensor.Concat(0, a, a), "f32[4,3]", 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6)
	expect(t, f32(sh(2), 1, 2).Pad(scalar(0), sh(1), sh(2), nil), "f32[5]", 0, 1, 2, 0, 0)
	expect(t, f32(sh(3), 1, 2, 3).Pad(scalar(9), sh(-1), sh(0), sh(1)), "f32[4]", 9, 2, 9, 3)
}

func TestContractions(t *testing.T) {
	a := f32(sh(2, 3), 1, 2, 3, 4, 5, 6)
	b := f32(sh(3, 2), 1, 0, 0, 1, 1, 1)
	expect(t, a.MatMul(b), "f32[2,2]", 4, 5, 10, 11)
	v := f32(sh(3), 1, 1, 2)
	expect(t, a.MatMul(v), "f32[2]", 9, 21)
	expect(t, f32(sh(2), 1, -1).MatMul(a), "f32[3]", -3, -3, -3)
	expect(t, v.MatMul(v), "f32[]", 6)
	// Batched: [2,1,2] @ [2,2] and [1,2] @ [2,2,1] (batch dims broadcast).
	x := f32(sh(2, 1, 2), 1, 2, 3, 4)
	m := f32(sh(2, 2), 1, 0, 1, 1)
	expect(t, x.MatMul(m), "f32[2,1,2]", 3, 2, 7, 4)
	w := f32(sh(2, 2, 1), 1, 1, 2, 0)
	expect(t, f32(sh(1, 2), 1, 3).MatMul(w), "f32[2,1,1]", 4, 2)
	expect(t, x.MatMul(w), "f32[2,1,1]", 3, 6)
	// DotGeneral with negative dimensions: contract a's last with b's first.
	expect(t, a.DotGeneral(b, ir.DotAttr{LhsContract: []int64{-1}, RhsContract: []int64{0}}), "f32[2,2]", 4, 5, 10, 11)
	// Batch over the first axis of both.
	expect(t, x.DotGeneral(w, ir.DotAttr{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContract: []int64{2}, RhsContract: []int64{1}}),
		"f32[2,1,1]", 3, 6)
}

func TestReductions(t *testing.T) {
	a := f32(sh(2, 3), 1, 5, 3, 4, 2, 6)
	expect(t, a.Sum(), "f32[]", 21)
	expect(t, a.Sum(0), "f32[3]", 5, 7, 9)
	expect(t, a.Sum(-1), "f32[2]", 9, 12)
	expect(t, a.SumKeep(1), "f32[2,1]", 9, 12)
	expect(t, a.Prod(1), "f32[2]", 15, 48)
	expect(t, a.ProdKeep(0), "f32[1,3]", 4, 10, 18)
	expect(t, a.Max(-1), "f32[2]", 5, 6)
	expect(t, a.MaxKeep(), "f32[1,1]", 6)
	expect(t, a.Min(0), "f32[3]", 1, 2, 3)
	expect(t, a.MinKeep(1), "f32[2,1]", 1, 2)
	expect(t, tensor.Zeros(ir.F32, 0).Max(), "f32[]", math.Inf(-1))
	expect(t, a.Argmax(-1), "i32[2]", 1, 2)
	expect(t, a.Argmin(0), "i32[3]", 0, 1, 0)
	expect(t, a.Cumsum(1), "f32[2,3]", 1, 6, 9, 4, 6, 12)
	expect(t, a.Cumsum(-2), "f32[2,3]", 1, 5, 3, 5, 7, 9)
}

func TestIndexing(t *testing.T) {
	a := f32(sh(3, 2), 1, 2, 3, 4, 5, 6)
	expect(t, a.Take(i32(sh(2), 2, 0), 0), "f32[2,2]", 5, 6, 1, 2)
	expect(t, a.Take(i32(sh(2, 2), 1, 1, 0, 9), -1), "f32[3,2,2]", 2, 2, 1, 2, 4, 4, 3, 4, 6, 6, 5, 6) // 9 clamps to 1
	expect(t, a.ScatterAdd(i32(sh(3), 0, 0, 7), f32(sh(3, 2), 1, 1, 10, 10, 100, 100), 0),
		"f32[3,2]", 12, 13, 3, 4, 5, 6) // rows 0 twice; 7 dropped
	s := func(v int32) *tensor.Tensor { return i32(sh(), v) }
	expect(t, a.DynamicSlice([]*tensor.Tensor{s(1), s(0)}, sh(2, 1)), "f32[2,1]", 3, 5)
	expect(t, a.DynamicSlice([]*tensor.Tensor{s(5), s(-3)}, sh(2, 2)), "f32[2,2]", 3, 4, 5, 6) // clamped
	expect(t, a.DynamicUpdateSlice(f32(sh(1, 2), 0, 0), []*tensor.Tensor{s(2), s(0)}), "f32[3,2]", 1, 2, 3, 4, 0, 0)
	expect(t, i32(sh(3), 0, 2, 5).OneHot(3, ir.F32), "f32[3,3]", 1, 0, 0, 0, 0, 1, 0, 0, 0)
	vals, idx := f32(sh(2, 3), 1, 3, 2, 5, 5, 4).TopK(2)
	expect(t, vals, "f32[2,2]", 3, 2, 5, 5)
	expect(t, idx, "i32[2,2]", 1, 2, 0, 1)
	expect(t, f32(sh(4), 3, -1, 3, 0).Argsort(-1), "i32[4]", 1, 3, 0, 2)
}

func TestComposites(t *testing.T) {
	x := f32(sh(2, 2), -1, 0, 1, 2)
	expect(t, x.Relu(), "f32[2,2]", 0, 0, 1, 2)
	gelu := func(v float64) float64 { return f32r(0.5 * v * (1 + math.Erf(v/math.Sqrt2))) }
	expect(t, x.Gelu(false), "f32[2,2]", gelu(-1), 0, gelu(1), gelu(2))
	geluT := func(v float64) float64 {
		return f32r(0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v))))
	}
	expect(t, x.Gelu(true), "f32[2,2]", geluT(-1), 0, geluT(1), geluT(2))
	silu := func(v float64) float64 { return f32r(v / (1 + math.Exp(-v))) }
	expect(t, x.Silu(), "f32[2,2]", silu(-1), 0, silu(1), silu(2))
	e := math.E
	expect(t, x.Softmax(-1), "f32[2,2]", f32r(1/(1+e)), f32r(e/(1+e)), f32r(1/(1+e)), f32r(e/(1+e)))
	expect(t, x.Softmax(0), "f32[2,2]", f32r(1/(1+e*e)), f32r(1/(1+e*e)), f32r(e*e/(1+e*e)), f32r(e*e/(1+e*e)))
	expect(t, x.LogSoftmax(1), "f32[2,2]", f32r(-math.Log(1+e)), f32r(1-math.Log(1+e)), f32r(-math.Log(1+e)), f32r(1-math.Log(1+e)))
	// layer_norm of [-1, 0] and [1, 2]: mean -0.5 / 1.5, variance 0.25.
	scale, bias := f32(sh(2), 2, 1), f32(sh(2), 0, 10)
	r := 1 / math.Sqrt(0.25+0.01)
	expect(t, x.LayerNorm(scale, bias, 0.01), "f32[2,2]", f32r(-0.5*r*2), f32r(0.5*r+10), f32r(-0.5*r*2), f32r(0.5*r+10))
	// rms_norm: mean squares 0.5 and 2.5.
	r1, r2 := 1/math.Sqrt(0.5+0.01), 1/math.Sqrt(2.5+0.01)
	expect(t, x.RMSNorm(scale, 0.01), "f32[2,2]", f32r(-2*r1), 0, f32r(2*r2), f32r(2*r2))
}

// TestImmutable: operations never change their operands.
func TestImmutable(t *testing.T) {
	a := f32(sh(2), 1, 2)
	_ = a.Reshape(2, 1).Add(scalar(1))
	_ = a.Neg()
	expect(t, a, "f32[2]", 1, 2)
}
