package compile_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// lossFn is ½·Σ(tanh(x·w) - y)², with an i32 scale to show integers get no gradient.
func lossFn(x, w, y *tensor.Tensor) *tensor.Tensor {
	d := x.MatMul(w).Tanh().Sub(y)
	return d.Mul(d).Sum().Mul(tensor.Scalar(0.5, ir.F32))
}

// lossGrads is lossFn's gradients with respect to x and w, written out by hand.
func lossGrads(x, w, y []float64, n, k, m int) (gx, gw []float64) {
	gx, gw = make([]float64, n*k), make([]float64, k*m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			s := 0.0
			for l := 0; l < k; l++ {
				s += x[i*k+l] * w[l*m+j]
			}
			t := math.Tanh(s)
			d := (t - y[i*m+j]) * (1 - t*t)
			for l := 0; l < k; l++ {
				gx[i*k+l] += d * w[l*m+j]
				gw[l*m+j] += d * x[i*k+l]
			}
		}
	}
	return gx, gw
}

func TestGrad(t *testing.T) {
	x, w, y := tensor.Random(1, ir.F32, 3, 4), tensor.Random(2, ir.F32, 4, 2), tensor.Random(3, ir.F32, 3, 2)
	wantX, wantW := lossGrads(x.Float64s(), w.Float64s(), y.Float64s(), 3, 4, 2)

	g, err := compile.Grad(lossFn, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Call(x, w, y)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 {
		t.Fatalf("Grad returned %d tensors, want 2", len(out))
	}
	gradNear(t, "d/dx", out[0], []int64{3, 4}, wantX)
	gradNear(t, "d/dw", out[1], []int64{4, 2}, wantW)

	// The second call with the same shapes reuses the program: f is traced once.
	if _, err := g.Call(x, w, y); err != nil {
		t.Fatal(err)
	}
	if s := g.Stats(); s.Calls != 2 || s.Traces != 1 {
		t.Errorf("stats after two calls: %v, want 2 calls and 1 trace", s)
	}

	vg, err := compile.ValueAndGrad(lossFn, 1)
	if err != nil {
		t.Fatal(err)
	}
	out, err = vg.Call(x, w, y)
	if err != nil {
		t.Fatal(err)
	}
	loss := lossFn(x, w, y).Float64s()
	gradNear(t, "value", out[0], []int64{}, loss)
	gradNear(t, "d/dw", out[1], []int64{4, 2}, wantW)
}

func gradNear(t *testing.T, what string, got *tensor.Tensor, shape []int64, want []float64) {
	t.Helper()
	if !equalInts(got.Shape(), shape) {
		t.Errorf("%s: shape %v, want %v", what, got.Shape(), shape)
		return
	}
	for i, g := range got.Float64s() {
		if math.Abs(g-want[i]) > 1e-5+1e-5*math.Abs(want[i]) {
			t.Errorf("%s[%d] = %g, want %g", what, i, g, want[i])
		}
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestGradErrors(t *testing.T) {
	two := func(x *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor) { return x, x }
	if _, err := compile.Grad(two); err == nil || !strings.Contains(err.Error(), "returns 2 tensors; a gradient needs exactly one, the scalar loss") {
		t.Errorf("two results: got %v", err)
	}
	scaled := func(x *tensor.Tensor, k int) *tensor.Tensor { return x.Sum() }
	if _, err := compile.Grad(scaled, 1); err == nil || !strings.HasSuffix(err.Error(), "argnum 1: parameter 1 of func(*tensor.Tensor, int) *tensor.Tensor is not a tensor") {
		t.Errorf("static argnum: got %v", err)
	}
	vector := func(x *tensor.Tensor) *tensor.Tensor { return x.Exp() }
	g, err := compile.Grad(vector)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Call(tensor.Random(1, ir.F32, 3)); err == nil || !strings.Contains(err.Error(), "the loss is f32[3]; a gradient needs a float scalar") {
		t.Errorf("vector loss: got %v", err)
	}
	ints := func(x, i *tensor.Tensor) *tensor.Tensor { return x.Take(i, 0).Sum() }
	g, err = compile.Grad(ints, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Call(tensor.Random(1, ir.F32, 3), tensor.FromSlice([]int32{0, 2}, 2)); err == nil || !strings.Contains(err.Error(), "argnum 1 is i32[2]: integer and i1 tensors have no gradient") {
		t.Errorf("integer argnum: got %v", err)
	}
}
