package stablehlo

import (
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
