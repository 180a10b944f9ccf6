package stablehlo

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// sortByKey sorts three operands along dimension 1 by the second, GT, as
// the comparator's one compare says; ties keep their order.
const sortByKey = `func.func @main(%v: tensor<2x4xf32>, %k: tensor<2x4xi32>, %u: tensor<2x4xui8>) -> (tensor<2x4xf32>, tensor<2x4xi32>, tensor<2x4xui8>) {
  %0:3 = "stablehlo.sort"(%v, %k, %u) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>, %e: tensor<ui8>, %f: tensor<ui8>):
    %p = stablehlo.compare GT, %c, %d, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) : (tensor<2x4xf32>, tensor<2x4xi32>, tensor<2x4xui8>) -> (tensor<2x4xf32>, tensor<2x4xi32>, tensor<2x4xui8>)
  return %0#0, %0#1, %0#2 : tensor<2x4xf32>, tensor<2x4xi32>, tensor<2x4xui8>
}
`

// TestSortByKey: every operand is permuted as the key sorts, descending
// and stable.
func TestSortByKey(t *testing.T) {
	m, err := Parse("sort.mlir", []byte(sortByKey))
	if err != nil {
		t.Fatal(err)
	}
	v := buffer(ir.Tensor(ir.F32, 2, 4), 10, 11, 12, 13, 20, 21, 22, 23)
	k := buffer(ir.Tensor(ir.I32, 2, 4), 3, 1, 3, 2, 0, 0, 5, -1)
	u := buffer(ir.Tensor(ir.U8, 2, 4), 1, 2, 3, 4, 5, 6, 7, 8)
	res, err := cpu.Run(m, m.Func("main"), []*backend.Buffer{v, k, u})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{10, 12, 13, 11, 22, 20, 21, 23}, {3, 3, 2, 1, 5, 0, 0, -1}, {1, 3, 4, 2, 7, 5, 6, 8}}
	for i, w := range want {
		if g := floats(res[i]); !sameFloats(g, w) {
			t.Errorf("result %d: got %v, want %v", i, g, w)
		}
	}
}

// TestSortGeneral: a comparator of no recognised form (a float key's GT)
// imports as ir's sort with its region, and runs: descending by v, stable.
func TestSortGeneral(t *testing.T) {
	src := strings.Replace(sortByKey, "GT, %c, %d, SIGNED : (tensor<i32>, tensor<i32>)", "GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>)", 1)
	m, err := Parse("sort.mlir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Func("main").Body.Instrs[0].Op; got != ir.OpSort {
		t.Fatalf("imported as %s, want sort", got)
	}
	v := buffer(ir.Tensor(ir.F32, 2, 4), 10, 12, 11, 13, 20, 21, 22, 20)
	k := buffer(ir.Tensor(ir.I32, 2, 4), 3, 1, 3, 2, 0, 0, 5, -1)
	u := buffer(ir.Tensor(ir.U8, 2, 4), 1, 2, 3, 4, 5, 6, 7, 8)
	res, err := cpu.Run(m, m.Func("main"), []*backend.Buffer{v, k, u})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{13, 12, 11, 10, 22, 21, 20, 20}, {2, 1, 3, 3, 5, 0, 0, -1}, {4, 2, 3, 1, 7, 6, 5, 8}}
	for i, w := range want {
		if g := floats(res[i]); !sameFloats(g, w) {
			t.Errorf("result %d: got %v, want %v", i, g, w)
		}
	}
}

// TestSortRefused: a comparator reading an outer value that is not a
// constant, and one whose parameters are not the operands' scalars.
func TestSortRefused(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{"GT, %a, %b,", "GT, %a, %v,",
			"sort.mlir:4:36: error: unsupported form of stablehlo.sort: its comparator uses %v from outside, which is not a constant"},
		{"%a: tensor<f32>", "%a: tensor<f64>",
			"sort.mlir:3:8: error: stablehlo.sort comparator parameter %a is tensor<f64>, want tensor<f32>"},
	} {
		src := strings.Replace(sortByKey, "GT, %c, %d, SIGNED : (tensor<i32>, tensor<i32>)", "GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>)", 1)
		src = strings.Replace(src, c.old, c.new, 1)
		_, err := Parse("sort.mlir", []byte(src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.new, err, c.want)
		}
	}
}
