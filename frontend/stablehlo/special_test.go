package stablehlo

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
)

// Seeds of FuzzParse: the ops read as CHLO's expansions, a reduce_window
// with a general body and a scatter that sets at several indices.
const (
	specialOps = `func.func @main(%x: tensor<3xf32>, %y: tensor<3xbf16>) -> (tensor<3xf32>, tensor<3xbf16>, tensor<3xf32>) {
  %0 = chlo.erf_inv %x : tensor<3xf32> -> tensor<3xf32>
  %1 = chlo.lgamma %y : tensor<3xbf16> -> tensor<3xbf16>
  %2 = chlo.next_after %x, %0 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %0, %1, %2 : tensor<3xf32>, tensor<3xbf16>, tensor<3xf32>
}
`
	generalWindow = `func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %c) <{window_dimensions = array<i64: 1, 4>, padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    %d = stablehlo.subtract %a, %b : tensor<f32>
    %e = stablehlo.exponential %d : tensor<f32>
    %s = stablehlo.add %m, %e : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
`
	scatterSet = `func.func @main(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
`
)

// runUnary imports `%0 = OP %arg0 : T -> T` (or OP of %arg0, %arg1 with
// two inputs) of dtype dt and runs it on the reference executor.
func runUnary(t *testing.T, op, dt string, ins ...[]float64) []float64 {
	t.Helper()
	n := len(ins[0])
	typ := "tensor<" + itoa(n) + "x" + dt + ">"
	params, args, types := "%arg0: "+typ, "%arg0", typ
	if len(ins) == 2 {
		params, args, types = params+", %arg1: "+typ, "%arg0, %arg1", typ+", "+typ
	}
	src := "func.func @main(" + params + ") -> " + typ + " {\n  %0 = " + op + " " + args + " : " + types + " -> " + typ +
		"\n  return %0 : " + typ + "\n}\n"
	m, err := Parse("s.mlir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var bufs []*backend.Buffer
	for _, in := range ins {
		bufs = append(bufs, buffer(m.Func("main").Params[0].Type, in...))
	}
	res, err := cpu.Run(m, m.Func("main"), bufs)
	if err != nil {
		t.Fatal(err)
	}
	return floats(res[0])
}

// near: got within rel of want (relative, or absolute below 1), NaN for NaN,
// an infinity for the same infinity.
func near(got, want, rel float64) bool {
	if math.IsNaN(want) || math.IsInf(want, 0) {
		return math.IsNaN(got) == math.IsNaN(want) && (math.IsNaN(got) || got == want)
	}
	return math.Abs(got-want) <= rel*math.Max(1, math.Abs(want))
}

// TestErfInv: chlo.erf_inv in f64 and f32 agrees with Go's math.Erfinv
// within the accuracy of XLA's expansion (in f64 2e-12 relative: its
// -log1p(-x²) rounds x², which the tails feel); ±1 is ±inf and past them
// NaN. In the f64 tails it gives what JAX's lax.erf_inv gives under
// jax_enable_x64 on XLA:CPU, bit for bit.
func TestErfInv(t *testing.T) {
	xs := []float64{-1, -0.9999999999, -0.999, -0.5, -1e-300, 0, 1e-9, 0.25, 0.7, 0.99, 0.999999, 0.99999999999, 1, 1.5, math.NaN()}
	got := runUnary(t, "chlo.erf_inv", "f64", []float64{-0.9999999999, 0.999999, 0.99999999999})
	if jax := []float64{-4.57282495853958, 3.4589107372739605, 4.812924058944324}; !sameFloats(got, jax) {
		t.Errorf("f64 tails: got %v, JAX %v", got, jax)
	}
	for _, c := range []struct {
		dt  string
		rel float64
	}{{"f64", 2e-12}, {"f32", 2e-6}} {
		got := runUnary(t, "chlo.erf_inv", c.dt, xs)
		for i, x := range xs {
			if c.dt == "f32" {
				x = float64(float32(x))
			}
			if want := math.Erfinv(x); !near(got[i], want, c.rel) {
				t.Errorf("%s: erf_inv(%v) = %v, want %v", c.dt, x, got[i], want)
			}
		}
	}
}

// TestLgamma: chlo.lgamma in f64 and f32 agrees with Go's math.Lgamma
// (log|Γ|), reflection below 0.5 included; poles and ±inf are +inf.
func TestLgamma(t *testing.T) {
	xs := []float64{math.Inf(-1), -3, -2.5, -1, -0.5, -1e-3, 0, 1e-3, 0.5, 1, 1.5, 2, 3.7, 30, 1e10, math.Inf(1), math.NaN()}
	for _, c := range []struct {
		dt  string
		rel float64
	}{{"f64", 1e-13}, {"f32", 4e-6}} {
		got := runUnary(t, "chlo.lgamma", c.dt, xs)
		for i, x := range xs {
			want, _ := math.Lgamma(x)
			if math.IsInf(x, -1) {
				want = math.Inf(1) // math.Lgamma(-inf) is -inf; XLA's is +inf
			}
			if !near(got[i], want, c.rel) {
				t.Errorf("%s: lgamma(%v) = %v, want %v", c.dt, x, got[i], want)
			}
		}
	}
}

// TestNextAfter: chlo.next_after is Go's math.Nextafter (f64) and
// math.Nextafter32 (f32) bit for bit: from ±0, toward ±0, at the largest
// float, equal operands and NaN.
func TestNextAfter(t *testing.T) {
	sub := math.SmallestNonzeroFloat32
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 1, sub, -sub, math.MaxFloat32, math.Inf(1), 2.5, math.NaN(), 3}
	ys := []float64{-1, 1, 2, 0, 1, 0, -1, math.Inf(1), 0, -2.5, 1, math.NaN()}
	got64 := runUnary(t, "chlo.next_after", "f64", xs, ys)
	got32 := runUnary(t, "chlo.next_after", "f32", xs, ys)
	for i := range xs {
		w64 := math.Nextafter(xs[i], ys[i])
		w32 := float64(math.Nextafter32(float32(xs[i]), float32(ys[i])))
		if math.Float64bits(got64[i]) != math.Float64bits(w64) && !(math.IsNaN(w64) && math.IsNaN(got64[i])) {
			t.Errorf("f64: next_after(%v, %v) = %v, want %v", xs[i], ys[i], got64[i], w64)
		}
		if math.Float64bits(got32[i]) != math.Float64bits(w32) && !(math.IsNaN(w32) && math.IsNaN(got32[i])) {
			t.Errorf("f32: next_after(%v, %v) = %v, want %v", xs[i], ys[i], got32[i], w32)
		}
	}
}

// TestSpecialRefused: the special functions on other types, a window too
// long to apply a general body per element, and a scatter with batching
// dimensions and a body other than add are refused at the op.
func TestSpecialRefused(t *testing.T) {
	window := `func.func @main(%arg0: tensor<300xf32>) -> tensor<300xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%arg0, %c) <{window_dimensions = array<i64: 300>, padding = dense<[[299, 0]]> : tensor<1x2xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.multiply %a, %b : tensor<f32>
    %s = stablehlo.add %m, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<300xf32>, tensor<f32>) -> tensor<300xf32>
  return %0 : tensor<300xf32>
}
`
	for _, c := range []struct{ src, want string }{
		{"func.func @main(%arg0: tensor<2xi32>) -> tensor<2xi32> {\n  %0 = chlo.erf_inv %arg0 : tensor<2xi32> -> tensor<2xi32>\n  return %0 : tensor<2xi32>\n}\n",
			"s.mlir:2:8: error: chlo.erf_inv needs one real float operand"},
		{"func.func @main(%arg0: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {\n  %0 = chlo.lgamma %arg0 : tensor<2xcomplex<f32>> -> tensor<2xcomplex<f32>>\n  return %0 : tensor<2xcomplex<f32>>\n}\n",
			"s.mlir:2:8: error: chlo.lgamma needs one real float operand"},
		{"func.func @main(%arg0: tensor<2xi8>) -> tensor<2xi8> {\n  %0 = chlo.digamma %arg0 : tensor<2xi8> -> tensor<2xi8>\n  return %0 : tensor<2xi8>\n}\n",
			"s.mlir:2:8: error: chlo.digamma needs one real float operand"},
		{"func.func @main(%arg0: tensor<2xf32>, %arg1: tensor<2xf64>) -> tensor<2xf32> {\n  %0 = chlo.next_after %arg0, %arg1 : tensor<2xf32>, tensor<2xf64> -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n",
			"s.mlir:2:8: error: chlo.next_after needs two operands of one type of f16, bf16, f32 or f64"},
		{window, "s.mlir:3:8: error: unsupported form of stablehlo.reduce_window: a window of more than 256 elements with a body other than one add, maximum, minimum or multiply"},
		{`func.func @main(%arg0: tensor<2x4xf32>, %arg1: tensor<2x1xi32>, %arg2: tensor<2xf32>) -> tensor<2x4xf32> {
  %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<2x4xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
`, "s.mlir:2:8: error: unsupported form of stablehlo.scatter: a body other than one add with batching dimensions"},
	} {
		_, err := Parse("s.mlir", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
}

// TestDigamma: chlo.digamma in f64 at the values with closed forms
// (ψ(1) = -γ, ψ(1/2) = -γ - 2 log 2, ψ(2) = 1 - γ, ψ(-1/2) = ψ(1/2) + 2,
// ψ(-5/2) = ψ(1/2) + 2 + 2/3 + 2/5) within 1e-13, NaN at 0 and the negative
// integers, and as JAX's lax.digamma gives under jax_enable_x64 elsewhere.
func TestDigamma(t *testing.T) {
	const gamma = 0.57721566490153286
	xs := []float64{1, 0.5, 2, -0.5, -2.5, 0, -1, 1e-3, 30}
	want := []float64{-gamma, -gamma - 2*math.Ln2, 1 - gamma, -gamma - 2*math.Ln2 + 2, -gamma - 2*math.Ln2 + 2 + 2.0/3 + 2.0/5,
		math.NaN(), math.NaN(), -1000.5755719318104, 3.384438132685524}
	got := runUnary(t, "chlo.digamma", "f64", xs)
	for i, x := range xs {
		if !near(got[i], want[i], 1e-13) {
			t.Errorf("digamma(%v) = %v, want %v", x, got[i], want[i])
		}
	}
}
