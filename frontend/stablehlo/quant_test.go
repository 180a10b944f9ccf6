package stablehlo

import (
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// quantizedOps reads every quantized form (also a FuzzParse seed).
const quantizedOps = `func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xi8>, tensor<2x3xf32>, tensor<2x3xi8>) {
  %q = "stablehlo.uniform_quantize"(%x) : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<i8:f32, 0.5:10>>
  %p = "stablehlo.uniform_quantize"(%x) : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<i8:f32:1, {0.5:0, 1.0:-1, 2.0:100}>>
  %d = "stablehlo.uniform_dequantize"(%p) : (tensor<2x3x!quant.uniform<i8:f32:1, {0.5:0, 1.0:-1, 2.0:100}>>) -> tensor<2x3xf32>
  %s = "stablehlo.add"(%q, %q) : (tensor<2x3x!quant.uniform<i8:f32, 0.5:10>>, tensor<2x3x!quant.uniform<i8:f32, 0.5:10>>) -> tensor<2x3x!quant.uniform<i8:f32, 0.25:0>>
  %0 = "stablehlo.bitcast_convert"(%q) : (tensor<2x3x!quant.uniform<i8:f32, 0.5:10>>) -> tensor<2x3xi8>
  %1 = "stablehlo.bitcast_convert"(%s) : (tensor<2x3x!quant.uniform<i8:f32, 0.25:0>>) -> tensor<2x3xi8>
  return %0, %d, %1 : tensor<2x3xi8>, tensor<2x3xf32>, tensor<2x3xi8>
}
`

// TestQuantized: uniform_quantize rounds x/scale half to even, adds the zero
// point and clamps to the storage range; per-axis types take each slice's
// scale and zero point; dequantize is (q - zp) * scale; an elementwise op
// on quantized values dequantizes, computes and quantizes.
func TestQuantized(t *testing.T) {
	m, err := Parse("q.mlir", []byte(quantizedOps))
	if err != nil {
		t.Fatal(err)
	}
	x := buffer(ir.Tensor(ir.F32, 2, 3), 1.25, 1.75, -3, 1000, -1000, 7.5)
	res, err := cpu.Run(m, m.Func("main"), []*backend.Buffer{x})
	if err != nil {
		t.Fatal(err)
	}
	// 2.5 -> 2, 3.5 -> 4 (half to even); 2000 and -2000 clamp.
	want := [][]float64{
		{12, 14, 4, 127, -128, 25},
		{1.0, 2.0, -4, 63.5, -127, 8}, // scales 0.5, 1, 2 by column; zero points 0, -1, 100
		{8, 16, -24, 127, -128, 60},   // dequantized (-4.5 etc.) sums quantized at 0.25
	}
	for k, w := range want {
		if g := floats(res[k]); !sameFloats(g, w) {
			t.Errorf("result %d: got %v, want %v", k, g, w)
		}
	}
	for _, c := range []struct{ src, want string }{
		{`func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %q = stablehlo.add %x, %x : tensor<2x!quant.uniform<i8:f32, 0.5:10>>
  return %x : tensor<2xf32>
}
`, "e.mlir:2:40: error: unsupported quantized type here: only the operands and results of an op in the generic form may be quantized"},
		{`func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %q = "stablehlo.uniform_quantize"(%x) : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8<-127:127>:f32, 0.5:10>>
  return %x : tensor<2xf32>
}
`, "e.mlir:2:71: error: unsupported quantized storage type (i8, i16, i32, u8 or u16 with its full range)"},
		{`func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %q = "stablehlo.uniform_quantize"(%x) : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:10>>
  %r = "stablehlo.reverse"(%q) {dimensions = array<i64: 0>} : (tensor<2x!quant.uniform<i8:f32, 0.5:10>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:10>>
  return %x : tensor<2xf32>
}
`, "e.mlir:3:8: error: unsupported op stablehlo.reverse on quantized values"},
	} {
		if _, err := Parse("e.mlir", []byte(c.src)); err == nil || err.Error() != c.want {
			t.Errorf("got  %v\nwant %s", err, c.want)
		}
	}
}
