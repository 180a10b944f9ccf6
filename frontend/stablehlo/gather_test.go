package stablehlo

import (
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// pointGather is x[i, j] for index pairs (jnp's x[a, b] with two index
// arrays), and a window of 2 columns at each pair; starts past the end are
// clamped so the window fits.
const pointGather = `func.func @main(%x: tensor<3x4xf32>, %i: tensor<3x2xi32>) -> (tensor<3xf32>, tensor<3x2xf32>) {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}> : (tensor<3x4xf32>, tensor<3x2xi32>) -> tensor<3xf32>
  %1 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>}> : (tensor<3x4xf32>, tensor<3x2xi32>) -> tensor<3x2xf32>
  return %0, %1 : tensor<3xf32>, tensor<3x2xf32>
}
`

// TestGather: a general gather takes each result element from where the
// dimension numbers say, clamping starts as StableHLO does.
func TestGather(t *testing.T) {
	m, err := Parse("gather.mlir", []byte(pointGather))
	if err != nil {
		t.Fatal(err)
	}
	x := buffer(ir.Tensor(ir.F32, 3, 4), 0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23)
	i := buffer(ir.Tensor(ir.I32, 3, 2), 0, 1, 2, 3, 5, -1)
	res, err := cpu.Run(m, m.Func("main"), []*backend.Buffer{x, i})
	if err != nil {
		t.Fatal(err)
	}
	// Pairs (0,1), (2,3), (5,-1) -> (2,0); windows of 2 start at column <= 2.
	want := [][]float64{{1, 23, 20}, {1, 2, 22, 23, 20, 21}}
	for k, w := range want {
		if g := floats(res[k]); !sameFloats(g, w) {
			t.Errorf("result %d: got %v, want %v", k, g, w)
		}
	}
}

// TestGatherRefused: dimension numbers that do not give the written result
// shape are refused at the op.
func TestGatherRefused(t *testing.T) {
	src := `func.func @main(%x: tensor<3x4xf32>, %i: tensor<3x2xi32>) -> tensor<3x3xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>}> : (tensor<3x4xf32>, tensor<3x2xi32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}
`
	// An indices batching dimension past the indices' rank.
	batch := `func.func @main(%x: tensor<2x3xf32>, %i: tensor<2x1xi32>) -> tensor<2xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [7], start_index_map = [1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}> : (tensor<2x3xf32>, tensor<2x1xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
`
	want := "g.mlir:2:8: error: unsupported form of stablehlo.gather: the dimension numbers, slice sizes and result type do not agree (or a shape is not static)"
	for _, src := range []string{src, batch} {
		if _, err := Parse("g.mlir", []byte(src)); err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}

// windowScatter adds 2-row windows at row starts: start 3 does not fit in
// 4 rows and -1 is before the first, so both windows are dropped whole.
const windowScatter = `func.func @main(%x: tensor<4x2xf32>, %i: tensor<4x1xi32>, %u: tensor<4x2x2xf32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x2xf32>, tensor<4x1xi32>, tensor<4x2x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
`

// TestScatter: a general scatter adds each window where its start says,
// repeated starts accumulate, and a window that does not fit is dropped.
func TestScatter(t *testing.T) {
	m, err := Parse("scatter.mlir", []byte(windowScatter))
	if err != nil {
		t.Fatal(err)
	}
	x := buffer(ir.Tensor(ir.F32, 4, 2), 0, 0, 0, 0, 0, 0, 0, 0)
	i := buffer(ir.Tensor(ir.I32, 4, 1), 0, 3, 0, -1)
	u := buffer(ir.Tensor(ir.F32, 4, 2, 2), 1, 2, 3, 4, 100, 100, 100, 100, 10, 20, 30, 40, 100, 100, 100, 100)
	res, err := cpu.Run(m, m.Func("main"), []*backend.Buffer{x, i, u})
	if err != nil {
		t.Fatal(err)
	}
	if g, want := floats(res[0]), []float64{11, 22, 33, 44, 0, 0, 0, 0}; !sameFloats(g, want) {
		t.Errorf("got %v, want %v", g, want)
	}
}

// TestDynamicGather: dynamic_gather with constant slice sizes reads as the
// gather with those slice_sizes; sizes computed at run time are refused.
func TestDynamicGather(t *testing.T) {
	const dyn = `func.func @main(%x: tensor<3x4xf32>, %i: tensor<3x2xi32>) -> (tensor<3xf32>, tensor<3x2xf32>) {
  %s0 = stablehlo.constant dense<[1, 1]> : tensor<2xi64>
  %s1 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s0) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>} : (tensor<3x4xf32>, tensor<3x2xi32>, tensor<2xi64>) -> tensor<3xf32>
  %1 = "stablehlo.dynamic_gather"(%x, %i, %s1) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>} : (tensor<3x4xf32>, tensor<3x2xi32>, tensor<2xi32>) -> tensor<3x2xf32>
  return %0, %1 : tensor<3xf32>, tensor<3x2xf32>
}
`
	m, err := Parse("dyn.mlir", []byte(dyn))
	if err != nil {
		t.Fatal(err)
	}
	x := buffer(ir.Tensor(ir.F32, 3, 4), 0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23)
	i := buffer(ir.Tensor(ir.I32, 3, 2), 0, 1, 2, 3, 5, -1)
	res, err := cpu.Run(m, m.Func("main"), []*backend.Buffer{x, i})
	if err != nil {
		t.Fatal(err)
	}
	for k, w := range [][]float64{{1, 23, 20}, {1, 2, 22, 23, 20, 21}} { // TestGather's
		if g := floats(res[k]); !sameFloats(g, w) {
			t.Errorf("result %d: got %v, want %v", k, g, w)
		}
	}
	const computed = `func.func @main(%x: tensor<3x4xf32>, %i: tensor<3x2xi32>, %s: tensor<2xi64>) -> tensor<3xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>} : (tensor<3x4xf32>, tensor<3x2xi32>, tensor<2xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
`
	w := "e.mlir:2:8: error: unsupported form of stablehlo.dynamic_gather: slice_sizes must be a constant"
	if _, err := Parse("e.mlir", []byte(computed)); err == nil || err.Error() != w {
		t.Errorf("got  %v\nwant %s", err, w)
	}
}
