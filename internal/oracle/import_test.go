package oracle

import (
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/stablehlo"
	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// importedOps are StableHLO programs the importer reads as a composition of
// ir ops (general gather and scatter, sorts by a key, map): XLA:CPU runs the
// text as written and must give what the executor gives on the import.
var importedOps = []struct{ name, src string }{
	{"gather_points_and_windows", `func.func @main(%x: tensor<3x4xf32>, %i: tensor<3x2xi32>) -> (tensor<3xf32>, tensor<3x2xf32>) {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}> : (tensor<3x4xf32>, tensor<3x2xi32>) -> tensor<3xf32>
  %1 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>}> : (tensor<3x4xf32>, tensor<3x2xi32>) -> tensor<3x2xf32>
  return %0, %1 : tensor<3xf32>, tensor<3x2xf32>
}`},
	{"gather_batching", `func.func @main(%x: tensor<2x3x4xf32>, %i: tensor<2x5x1xi32>) -> tensor<2x5x4xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, slice_sizes = array<i64: 1, 1, 4>}> : (tensor<2x3x4xf32>, tensor<2x5x1xi32>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}`},
	{"scatter_windows_out_of_range", `func.func @main(%x: tensor<4x3xf32>, %i: tensor<4x1xi32>, %u: tensor<4x2x3xf32>) -> tensor<4x3xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x3xf32>, tensor<4x1xi32>, tensor<4x2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}`},
	{"sort_by_key", `func.func @main(%v: tensor<3x5xf32>, %k: tensor<3x5xi32>) -> (tensor<3x5xf32>, tensor<3x5xi32>) {
  %0:2 = "stablehlo.sort"(%v, %k) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %p = stablehlo.compare GT, %c, %d, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<3x5xf32>, tensor<3x5xi32>) -> (tensor<3x5xf32>, tensor<3x5xi32>)
  return %0#0, %0#1 : tensor<3x5xf32>, tensor<3x5xi32>
}`},
	{"map", `func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.map"(%x, %y) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %z = stablehlo.constant dense<0.5> : tensor<f32>
    %m = stablehlo.multiply %a, %z : tensor<f32>
    %s = stablehlo.maximum %m, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}`},
	{"reduce_window_body", `func.func @main(%x: tensor<5x7xf32>) -> (tensor<4x3xf32>, tensor<5x7xf32>) {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %one) <{window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 3, 2>,
      base_dilations = array<i64: 2, 1>, window_dilations = array<i64: 1, 2>, padding = dense<[[1, 2], [2, 0]]> : tensor<2x2xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %h = stablehlo.constant dense<0.5> : tensor<f32>
    %m = stablehlo.multiply %a, %h : tensor<f32>
    %s = stablehlo.add %m, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5x7xf32>, tensor<f32>) -> tensor<4x3xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %1 = "stablehlo.reduce_window"(%x, %ninf) <{window_dimensions = array<i64: 1, 7>, window_strides = array<i64: 1, 1>,
      padding = dense<[[0, 0], [6, 0]]> : tensor<2x2xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    %d = stablehlo.subtract %a, %b : tensor<f32>
    %n = stablehlo.compare NE, %d, %d, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %s = stablehlo.add %a, %b : tensor<f32>
    %e = stablehlo.abs %d : tensor<f32>
    %f = stablehlo.negate %e : tensor<f32>
    %g = stablehlo.exponential %f : tensor<f32>
    %l = stablehlo.log_plus_one %g : tensor<f32>
    %r = stablehlo.add %m, %l : tensor<f32>
    %y = stablehlo.select %n, %s, %r : tensor<i1>, tensor<f32>
    stablehlo.return %y : tensor<f32>
  }) : (tensor<5x7xf32>, tensor<f32>) -> tensor<5x7xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<5x7xf32>
}`},
	{"index_vector_dim_0", `func.func @main(%x: tensor<4x5xf32>, %i: tensor<2xi32>) -> (tensor<f32>, tensor<4x5xf32>) {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1]>, slice_sizes = array<i64: 1, 1>}> : (tensor<4x5xf32>, tensor<2xi32>) -> tensor<f32>
  %h = stablehlo.constant dense<2.0> : tensor<f32>
  %1 = "stablehlo.scatter"(%x, %i, %h) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1]>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x5xf32>, tensor<2xi32>, tensor<f32>) -> tensor<4x5xf32>
  return %0, %1 : tensor<f32>, tensor<4x5xf32>
}`},
	{"scatter_one_window", `func.func @main(%x: tensor<4x5xf32>, %i: tensor<1xi32>, %j: tensor<2xi32>, %r: tensor<5xf32>, %c: tensor<4x1xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) {
  %0 = "stablehlo.scatter"(%x, %i, %r) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<4x5xf32>, tensor<1xi32>, tensor<5xf32>) -> tensor<4x5xf32>
  %1 = "stablehlo.scatter"(%x, %i, %c) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1], scatter_dims_to_operand_dims = [1]>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<4x5xf32>, tensor<1xi32>, tensor<4x1xf32>) -> tensor<4x5xf32>
  %h = stablehlo.constant dense<1.5> : tensor<f32>
  %2 = "stablehlo.scatter"(%x, %j, %h) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [1, 0]>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.multiply %a, %b : tensor<f32>
    %s = stablehlo.subtract %m, %a : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x5xf32>, tensor<2xi32>, tensor<f32>) -> tensor<4x5xf32>
  return %0, %1, %2 : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>
}`},
	{"scatter_windows", `func.func @main(%x: tensor<4x3xf32>, %i: tensor<3x1xi32>, %u: tensor<3x3xf32>, %y: tensor<5xf32>, %j: tensor<2x3xi32>, %v: tensor<2x3xf32>) -> (tensor<4x3xf32>, tensor<5xf32>) {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<4x3xf32>, tensor<3x1xi32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %1 = "stablehlo.scatter"(%y, %j, %v) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %h = stablehlo.constant dense<0.5> : tensor<f32>
    %m = stablehlo.multiply %a, %h : tensor<f32>
    %s = stablehlo.maximum %m, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5xf32>, tensor<2x3xi32>, tensor<2x3xf32>) -> tensor<5xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<5xf32>
}`},
	{"erf_inv_lgamma", `func.func @main(%x: tensor<9xf32>, %y: tensor<9xbf16>) -> (tensor<9xf32>, tensor<9xbf16>, tensor<9xf32>, tensor<9xbf16>) {
  %q = stablehlo.constant dense<0.125> : tensor<9xf32>
  %u = stablehlo.multiply %x, %q : tensor<9xf32>
  %0 = chlo.erf_inv %u : tensor<9xf32> -> tensor<9xf32>
  %qb = stablehlo.constant dense<0.125> : tensor<9xbf16>
  %ub = stablehlo.multiply %y, %qb : tensor<9xbf16>
  %1 = chlo.erf_inv %ub : tensor<9xbf16> -> tensor<9xbf16>
  %2 = chlo.lgamma %x : tensor<9xf32> -> tensor<9xf32>
  %3 = chlo.lgamma %y : tensor<9xbf16> -> tensor<9xbf16>
  return %0, %1, %2, %3 : tensor<9xf32>, tensor<9xbf16>, tensor<9xf32>, tensor<9xbf16>
}`},
}

// TestImportedOps runs each program on XLA:CPU as written and its import on
// the executor, with cpu.RandomInputs (i32 indices in [-8, 8]: in range,
// negative and past the end), several seeds each.
func TestImportedOps(t *testing.T) {
	h := harness(t)
	var cases []xlacheck.Case
	var checks []*check
	for _, p := range importedOps {
		m, err := stablehlo.Parse(p.name+".mlir", []byte(p.src))
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		for _, seed := range loopSeeds {
			in := cpu.RandomInputs(m.Entry(), seed)
			want, err := cpu.Run(m, m.Entry(), in)
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			arrays := make([]*npy.Array, len(in))
			for i, x := range in {
				arrays[i] = npyOf(x)
			}
			cases = append(cases, xlacheck.Case{ID: p.name, Module: p.src, Inputs: arrays})
			checks = append(checks, &check{name: p.name, want: want})
		}
	}
	for i, r := range runCases(t, h, cases) {
		if problems := checks[i].compare(r); problems != nil {
			t.Errorf("%s (seed %d): %v\n%s", checks[i].name, loopSeeds[i%len(loopSeeds)], problems, cases[i].Module)
		}
	}
}
