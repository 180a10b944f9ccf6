package stablehlo

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

const convHead = "func.func public @main(%arg0: tensor<1x5x5x4xf32>, %arg1: tensor<3x3x4x8xf32>) -> tensor<1x2x9x8xf32> {\n"

// convPretty is the line jax.jit(...).lower(...).as_text() prints for
// lax.conv_general_dilated(x, w, (2, 1), [(1, 0), (1, 1)], lhs_dilation=(1, 2),
// dimension_numbers=('NHWC', 'HWIO', 'NHWC')); convGeneric is the same op as
// get_asm(print_generic_op_form=True) writes it.
const convPretty = `    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 0], [1, 1]], lhs_dilate = [1, 2], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x5x5x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x2x9x8xf32>
`

const convGeneric = `    %0 = "stablehlo.convolution"(%arg0, %arg1) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 2>, padding = dense<[[1, 0], [1, 1]]> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 2, 1>}> : (tensor<1x5x5x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x2x9x8xf32>
`

const convTail = "    return %0 : tensor<1x2x9x8xf32>\n}\n"

// TestConvForms: JAX's pretty and generic convolution read to one
// instruction with the dimension numbers and window as written.
func TestConvForms(t *testing.T) {
	want := "  %0 = convolution %arg0, %arg1 {lhs_dilation=[1,2], lhs_dims=[0,3,1,2], out_dims=[0,3,1,2], pad_high=[0,1], pad_low=[1,1], rhs_dims=[3,2,0,1], stride=[2,1]} : f32[1,2,9,8]\n"
	for name, body := range map[string]string{"pretty": convPretty, "generic": convGeneric} {
		m, err := Parse(name+".mlir", []byte(convHead+body+convTail))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := ir.Print(m); !strings.Contains(got, want) {
			t.Errorf("%s form reads as\n%s\nwant the line\n%s", name, got, want)
		}
	}
}

// TestConvErrors: forms tpucc has no exact meaning for are refused at the
// op or attribute.
func TestConvErrors(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{"reverse = [false, false]", "reverse = [true, false]",
			"e.mlir:2:204: error: stablehlo.convolution: unsupported window reversal"},
		{"[b, 0, 1, f]x[0, 1, i, o]", "[b, 0, 0, f]x[0, 1, i, o]",
			"e.mlir:2:60: error: stablehlo.convolution: unsupported dimension numbers [b, 0, 0, f]x[0, 1, i, o]->[b, 0, 1, f]"},
		{"pad = [[1, 0], [1, 1]]", "pad = [[1, 0, 2], [1, 1]]",
			"e.mlir:2:135: error: stablehlo.convolution: padding needs [low, high] pairs"},
		{"-> tensor<1x2x9x8xf32>\n", "-> tensor<1x2x9x8xf16>\n",
			"e.mlir:2:10: error: unsupported stablehlo.convolution from f32 operands to a f16 result"},
		{"feature_group_count = 1", "feature_group_count = 3",
			"e.mlir:2:10: error: stablehlo.convolution: convolution lhs features 4 must be rhs input features 4 times feature_groups 3"},
	} {
		src := convHead + strings.Replace(convPretty, c.old, c.new, 1) + convTail
		_, err := Parse("e.mlir", []byte(src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s -> %s\ngot  %v\nwant %s", c.old, c.new, err, c.want)
		}
	}
	dyn := "func.func @main(%arg0: tensor<1x4x4x1xi64>, %arg1: tensor<3x3x1x1xi64>, %arg2: tensor<2x2xi64>) -> tensor<1x2x2x1xi64> {\n" +
		`  %0 = "stablehlo.dynamic_conv"(%arg0, %arg1, %arg2) {window_strides = array<i64: 4, 4>, lhs_dilation = array<i64: 2, 2>, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>, tensor<2x2xi64>) -> tensor<1x2x2x1xi64>` +
		"\n  return %0 : tensor<1x2x2x1xi64>\n}\n"
	want := "e.mlir:2:8: error: unsupported form of stablehlo.dynamic_conv: padding must be a constant integer tensor<2x2>"
	if _, err := Parse("e.mlir", []byte(dyn)); err == nil || err.Error() != want {
		t.Errorf("dynamic_conv with a runtime padding:\ngot  %v\nwant %s", err, want)
	}
}
