package stablehlo

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
)

const tupleHead = `func.func @main(%a: tensor<2xf32>, %b: tensor<i64>) -> tensor<i64> {
  %t = stablehlo.tuple %b : tuple<tensor<i64>>
  %u = stablehlo.tuple %a, %t : tuple<tensor<2xf32>, tuple<tensor<i64>>>
`

// tupleNested takes a nested tuple apart (also a FuzzParse seed).
const tupleNested = tupleHead + `  %0 = stablehlo.get_tuple_element %u[1] : (tuple<tensor<2xf32>, tuple<tensor<i64>>>) -> tuple<tensor<i64>>
  %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<i64>>) -> tensor<i64>
  %2 = stablehlo.add %1, %1 : tensor<i64>
  return %2 : tensor<i64>
}
`

// TestTuple: tuples, nested too, are taken apart by get_tuple_element into
// the values they were built from; any other use of a tuple, an index out
// of range and an element of the wrong kind are refused at the op.
func TestTuple(t *testing.T) {
	m, err := Parse("m.mlir", []byte(tupleNested))
	if err != nil {
		t.Fatal(err)
	}
	want := `func @main(%a: f32[2], %b: i64[]) -> i64[] {
  %0 = add %b, %b : i64[]
  return %0
}
`
	if got := ir.Print(m); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, c := range []struct{ body, want string }{
		{"  return %u : tensor<i64>\n}\n", "e.mlir:4:10: error: unsupported use of tuple %u (only get_tuple_element reads a tuple)"},
		{"  %0 = stablehlo.get_tuple_element %u[2] : (tuple<tensor<2xf32>, tuple<tensor<i64>>>) -> tensor<i64>\n  return %0 : tensor<i64>\n}\n",
			"e.mlir:4:8: error: stablehlo.get_tuple_element: index 2 of a tuple of 2"},
		{"  %0 = stablehlo.get_tuple_element %u[1] : (tuple<tensor<2xf32>, tuple<tensor<i64>>>) -> tensor<i64>\n  return %0 : tensor<i64>\n}\n",
			"e.mlir:4:8: error: stablehlo.get_tuple_element: element 1's type is not the one written"},
		{"  %0 = stablehlo.get_tuple_element %a[0] : (tuple<tensor<2xf32>>) -> tensor<2xf32>\n  return %b : tensor<i64>\n}\n",
			"e.mlir:4:36: error: stablehlo.get_tuple_element: %a is not a tuple"},
	} {
		if _, err := Parse("e.mlir", []byte(tupleHead+c.body)); err == nil || err.Error() != c.want {
			t.Errorf("got  %v\nwant %s", err, c.want)
		}
	}
}
