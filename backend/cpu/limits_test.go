package cpu

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
)

// TestInputLimits: a matmul's weight is drawn within 2/sqrt(K), reached through the
// ops that only move its elements; everything else within 2.
func TestInputLimits(t *testing.T) {
	src := `func @f(%x: f32[8,64], %w: f32[64,16], %v: f32[8,16], %u: f32[4,4,2], %b: f32[16], %i: i32[8]) -> (f32[8,16], f32[16,16], f32[8,2,1]) {
  %h = matmul %x, %w
  %hb = add %h, %b
  %vt = transpose %v {perm=[1,0]}
  %g = matmul %vt, %hb
  %ur = reshape %u : f32[16,2]
  %y = matmul %hb, %ur
  %y3 = reshape %y : f32[8,2,1]
  return %h, %g, %y3
}
`
	m, err := tir.Parse("f.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(InputLimits(m.Entry()))
	// %x 2; %w 2/sqrt(64); %v is the lhs of a matmul whose rhs is computed: 2/sqrt(8);
	// %u reshaped, the rhs: 2/sqrt(16); %b and %i 2.
	want := fmt.Sprint([]float64{2, 0.25, 2 / math.Sqrt(8), 0.5, 2, 2})
	if got != want {
		t.Errorf("InputLimits = %s, want %s", got, want)
	}
}

// TestInputLimitsRaggedDot: the experts' weights [g,k,n] of a ragged_dot get 2/sqrt(k).
func TestInputLimitsRaggedDot(t *testing.T) {
	src := `func @f(%x: f32[8,16], %w: f32[4,16,32], %s: i32[4]) -> f32[8,32] {
  %y = ragged_dot %x, %w, %s : f32[8,32]
  return %y
}
`
	m, err := tir.Parse("f.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(InputLimits(m.Entry())), fmt.Sprint([]float64{2, 0.5, 2}); got != want {
		t.Errorf("InputLimits = %s, want %s", got, want)
	}
}

// TestInputLimitsTransformerBlock: with InputLimits, the example transformer block's
// output stays near its input's size (|x| < 2) instead of reaching 1e4, as it does
// with every parameter drawn from [-2, 2).
func TestInputLimitsTransformerBlock(t *testing.T) {
	src, err := os.ReadFile("../../examples/transformer_block.tir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := tir.Parse("transformer_block.tir", src)
	if err != nil {
		t.Fatal(err)
	}
	f := m.Entry()
	maxAbs := func(lims []float64) float64 {
		out, err := Run(m, f, RandomInputsWithin(f, 1, lims))
		if err != nil {
			t.Fatal(err)
		}
		big := 0.0
		for k := range out[0].Len() {
			big = math.Max(big, math.Abs(out[0].Float64At(k)))
		}
		return big
	}
	if big := maxAbs(InputLimits(f)); big > 50 {
		t.Errorf("max |y| = %.4g with InputLimits, want under 50", big)
	}
	if big := maxAbs(nil); big < 1000 {
		t.Errorf("max |y| = %.4g without limits; the test no longer shows what InputLimits is for", big)
	}
}

// TestInputLimitsConv: a convolution's kernel gets 2/sqrt(input features ×
// window), whatever its layout; the image 2.
func TestInputLimitsConv(t *testing.T) {
	src := `func @f(%x: f32[1,6,6,4], %w: f32[3,3,4,8], %v: f32[8,2,1,1]) -> (f32[1,6,6,8], f32[1,8,6,6]) {
  %y = convolution %x, %w {lhs_dims=[0,3,1,2], rhs_dims=[3,2,0,1], out_dims=[0,3,1,2], pad_low=[1,1], pad_high=[1,1]}
  %z = convolution %x, %v {lhs_dims=[0,3,1,2], rhs_dims=[0,1,2,3], out_dims=[0,1,2,3], feature_groups=2}
  return %y, %z
}
`
	m, err := tir.Parse("f.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(InputLimits(m.Entry()))
	want := fmt.Sprint([]float64{2, 2 / math.Sqrt(36), 2 / math.Sqrt(2)})
	if got != want {
		t.Errorf("InputLimits = %s, want %s", got, want)
	}
}
