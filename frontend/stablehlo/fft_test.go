package stablehlo

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestFFTForms: stablehlo.fft in JAX's pretty form and in the generic form
// reads to the same fft instructions; a bad fft_type and a result type that
// disagrees with the length are refused at the op.
func TestFFTForms(t *testing.T) {
	const sig = `func.func @main(%arg0: tensor<2x4xcomplex<f32>>, %arg1: tensor<6xf64>) -> (tensor<2x4xcomplex<f32>>, tensor<4xcomplex<f64>>) {
`
	pretty := sig + `  %0 = stablehlo.fft %arg0, type = IFFT, length = [2, 4] : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
  %1 = stablehlo.fft %arg1, type = RFFT, length = [6] : (tensor<6xf64>) -> tensor<4xcomplex<f64>>
  return %0, %1 : tensor<2x4xcomplex<f32>>, tensor<4xcomplex<f64>>
}
`
	generic := sig + `  %0 = "stablehlo.fft"(%arg0) <{fft_length = array<i64: 2, 4>, fft_type = #stablehlo<fft_type IFFT>}> : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
  %1 = "stablehlo.fft"(%arg1) <{fft_length = array<i64: 6>, fft_type = #stablehlo<fft_type RFFT>}> : (tensor<6xf64>) -> tensor<4xcomplex<f64>>
  "func.return"(%0, %1) : (tensor<2x4xcomplex<f32>>, tensor<4xcomplex<f64>>) -> ()
}
`
	want := `func @main(%arg0: c64[2,4], %arg1: f64[6]) -> (c64[2,4], c128[4]) {
  %0 = fft %arg0 {length=[2,4], type=ifft} : c64[2,4]
  %1 = fft %arg1 {length=[6], type=rfft} : c128[4]
  return %0, %1
}
`
	for name, src := range map[string]string{"pretty": pretty, "generic": generic} {
		m, err := Parse(name+".mlir", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := ir.Print(m); got != want {
			t.Errorf("%s form reads as\n%s\nwant\n%s", name, got, want)
		}
	}
	for _, c := range []struct{ src, want string }{
		{sig + `  %0 = "stablehlo.fft"(%arg0) <{fft_length = array<i64: 4>, fft_type = #stablehlo<fft_type DFT>}> : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
}
`, `e.mlir:2:72: error: stablehlo.fft: unsupported fft_type "DFT"`},
		{sig + `  %1 = stablehlo.fft %arg1, type = RFFT, length = [6] : (tensor<6xf64>) -> tensor<6xcomplex<f64>>
}
`, `e.mlir:2:8: error: stablehlo.fft: result type c128[6] of fft does not match the inferred c128[4]`},
	} {
		if _, err := Parse("e.mlir", []byte(c.src)); err == nil || err.Error() != c.want {
			t.Errorf("got  %v\nwant %s", err, c.want)
		}
	}
}

// TestRngBitGeneratorForms: rng_bit_generator in JAX's pretty form and in
// the generic form reads to the same instructions; an unknown algorithm and
// a state of the wrong size are refused at the op.
func TestRngBitGeneratorForms(t *testing.T) {
	const sig = `func.func @main(%arg0: tensor<2xui64>, %arg1: tensor<3xui64>) -> (tensor<2xui64>, tensor<2x3xui32>, tensor<3xui64>, tensor<4xf32>) {
`
	pretty := sig + `  %0:2 = stablehlo.rng_bit_generator %arg0, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xui32>)
  %output_state, %output = stablehlo.rng_bit_generator %arg1, algorithm = DEFAULT : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xf32>)
  return %0#0, %0#1, %output_state, %output : tensor<2xui64>, tensor<2x3xui32>, tensor<3xui64>, tensor<4xf32>
}
`
	generic := sig + `  %0:2 = "stablehlo.rng_bit_generator"(%arg0) <{rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xui32>)
  %1:2 = "stablehlo.rng_bit_generator"(%arg1) <{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>}> : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xf32>)
  "func.return"(%0#0, %0#1, %1#0, %1#1) : (tensor<2xui64>, tensor<2x3xui32>, tensor<3xui64>, tensor<4xf32>) -> ()
}
`
	for name, src := range map[string]string{"pretty": pretty, "generic": generic} {
		m, err := Parse(name+".mlir", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := ir.Print(m)
		for _, want := range []string{
			" = rng_bit_generator %arg0 {algorithm=three_fry} : u64[2], u32[2,3]\n",
			" = rng_bit_generator %arg1 {algorithm=default} : u64[3], f32[4]\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("%s form reads as\n%s\nwithout %q", name, got, want)
			}
		}
	}
	for _, c := range []struct{ src, want string }{
		{sig + `  %0:2 = "stablehlo.rng_bit_generator"(%arg0) <{rng_algorithm = #stablehlo<rng_algorithm MT19937>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
}
`, `e.mlir:2:65: error: stablehlo.rng_bit_generator: unsupported rng_algorithm "MT19937"`},
		{sig + `  %0:2 = stablehlo.rng_bit_generator %arg1, algorithm = THREE_FRY : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)
}
`, `e.mlir:2:10: error: stablehlo.rng_bit_generator: the state of rng_bit_generator {algorithm=three_fry} must be u64[2], got u64[3]`},
	} {
		if _, err := Parse("e.mlir", []byte(c.src)); err == nil || err.Error() != c.want {
			t.Errorf("got  %v\nwant %s", err, c.want)
		}
	}
}
