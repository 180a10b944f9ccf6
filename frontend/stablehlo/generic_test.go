package stablehlo

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// prettyForms and genericForms are one program in MLIR's two op syntaxes
// (the generic one as mlir-opt --mlir-print-op-generic writes it).
const prettyForms = `module @m {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3x2xf32>, %arg2: tensor<i32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2x3xi1>, tensor<4x3xf32>, tensor<1x2xf32>, tensor<3x4xf32>, tensor<2x3xf32>) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %2 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %3 = stablehlo.iota dim = 1 : tensor<2x3xf32>
    %4 = stablehlo.compare LT, %arg0, %3, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    %5 = stablehlo.concatenate %arg0, %arg0, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %6 = stablehlo.dynamic_slice %0, %arg2, %arg2, sizes = [1, 2] : (tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %7 = stablehlo.pad %2, %cst, low = [0, 1], high = [0, 1], interior = [0, 0] : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x4xf32>
    %8 = stablehlo.slice %5 [1:3, 0:3] : (tensor<4x3xf32>) -> tensor<2x3xf32>
    %9 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<2xf32>) -> tensor<2x3xf32>
    %10 = call @twice(%9) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %11 = stablehlo.add %8, %10 : tensor<2x3xf32>
    return %0, %1, %2, %4, %5, %6, %7, %11 : tensor<2x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2x3xi1>, tensor<4x3xf32>, tensor<1x2xf32>, tensor<3x4xf32>, tensor<2x3xf32>
  }
  func.func private @twice(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}
`

const genericBody = `module @m {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3x2xf32>, %arg2: tensor<i32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2x3xi1>, tensor<4x3xf32>, tensor<1x2xf32>, tensor<3x4xf32>, tensor<2x3xf32>) {
    %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
    %cst = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.reduce"(%arg0, %cst) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %2 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %3 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x3xf32>
    %4 = "stablehlo.compare"(%arg0, %3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    %5 = "stablehlo.concatenate"(%arg0, %arg0) <{dimension = 0 : i64}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %6 = "stablehlo.dynamic_slice"(%0, %arg2, %arg2) <{slice_sizes = array<i64: 1, 2>}> : (tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %7 = "stablehlo.pad"(%2, %cst) <{edge_padding_high = array<i64: 0, 1>, edge_padding_low = array<i64: 0, 1>, interior_padding = array<i64: 0, 0>}> : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x4xf32>
    %8 = "stablehlo.slice"(%5) <{limit_indices = array<i64: 3, 3>, start_indices = array<i64: 1, 0>, strides = array<i64: 1, 1>}> : (tensor<4x3xf32>) -> tensor<2x3xf32>
    %9 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x3xf32>
    %10 = "func.call"(%9) <{callee = @twice}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %11 = "stablehlo.add"(%8, %10) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    "func.return"(%0, %1, %2, %4, %5, %6, %7, %11) : (tensor<2x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2x3xi1>, tensor<4x3xf32>, tensor<1x2xf32>, tensor<3x4xf32>, tensor<2x3xf32>) -> ()
  }
  func.func private @twice(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    "func.return"(%0) : (tensor<2x3xf32>) -> ()
  }
}
`

// TestGenericForms: ops in the generic form read as their pretty form does.
func TestGenericForms(t *testing.T) {
	p, err := Parse("pretty.mlir", []byte(prettyForms))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse("generic.mlir", []byte(genericBody))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := ir.Print(p), ir.Print(g); a != b {
		t.Errorf("pretty:\n%s\ngeneric:\n%s", a, b)
	}
}
