package cpu

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// TestNarrowFloatKernels: convert rounds into an f8 type and reads its
// values back (fractions included: not through integers), compare orders
// the values, constants keep theirs, dot_general sums in f32 and rounds
// once, and random inputs are drawn as floats.
func TestNarrowFloatKernels(t *testing.T) {
	const src = `func @f(%x: f32[4], %y: f8e4m3fn[2]) -> (f32[4], i1[2], f32[2], f32[], f8e4m3fn[], f32[2]) {
  %a = convert %x : f8e4m3fn[4]
  %b = convert %a : f32[4]
  %k = constant [0.5, 0.25] : f8e4m3fn[2]
  %l = constant [0.25, 0.5] : f8e4m3fn[2]
  %c = compare %k, %l {dir=lt} : i1[2]
  %kf = convert %k : f32[2]
  %d = dot_general %k, %l {lhs_contract=[0], rhs_contract=[0]} : f32[]
  %e = dot_general %k, %k {lhs_contract=[0], rhs_contract=[0]} : f8e4m3fn[]
  %yf = convert %y : f32[2]
  return %b, %c, %kf, %d, %e, %yf
}`
	m, err := tir.Parse("n.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	in := RandomInputs(m.Entry(), 1)
	in[0] = F(f32(4), 0.3, -1.7, 1000, 0.1)
	out, err := Run(m, m.Entry(), in)
	if err != nil {
		t.Fatal(err)
	}
	wantB := []float64{0.3125, -1.75, math.NaN(), 0.1015625}
	for i, w := range wantB {
		if g := out[0].Float64At(i); g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
			t.Errorf("convert through f8e4m3fn: element %d is %v, want %v", i, g, w)
		}
	}
	if out[1].Int64At(0) != 0 || out[1].Int64At(1) != 1 {
		t.Errorf("compare 0.5 < 0.25, 0.25 < 0.5: got %s", out[1])
	}
	if out[2].Float64At(0) != 0.5 || out[2].Float64At(1) != 0.25 {
		t.Errorf("constant [0.5, 0.25] reads %s", out[2])
	}
	if out[3].Float64At(0) != 0.25 {
		t.Errorf("dot of [0.5, 0.25] and [0.25, 0.5] is %s, want 0.25", out[3])
	}
	if out[4].Float64At(0) != 0.3125 { // 0.25+0.0625 is exact in f8e4m3fn
		t.Errorf("dot of [0.5, 0.25] with itself is %s, want 0.3125", out[4])
	}
	frac := false
	for i := range 2 {
		v := out[5].Float64At(i)
		frac = frac || v != math.Trunc(v)
	}
	if !frac || in[1].Type().DType != ir.F8E4M3FN {
		t.Errorf("random f8e4m3fn inputs %s hold no fractions", out[5])
	}
}
