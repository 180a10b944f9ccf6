package stablehlo

import (
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// mapRelu is a map whose body compares with a scalar constant and selects:
// max(x, 0) + y, written elementwise.
const mapRelu = `func.func @main(%arg0: tensor<2x2xf32>, %arg1: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.map"(%arg0, %arg1) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %p = stablehlo.compare GT, %a, %z, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %m = stablehlo.select %p, %a, %z : tensor<i1>, tensor<f32>
    %s = stablehlo.add %m, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
`

const mapReluIR = `func @main(%arg0: f32[2,2], %arg1: f32[2,2]) -> f32[2,2] {
  %0 = constant 0.0 : f32[]
  %1 = broadcast %0 {dims=[]} : f32[2,2]
  %2 = compare %arg0, %1 {dir=gt} : i1[2,2]
  %3 = select %2, %arg0, %1 : f32[2,2]
  %4 = add %3, %arg1 : f32[2,2]
  return %4
}
`

// TestMap: an elementwise map body is applied to the whole inputs, its
// scalar constants broadcast, and computes what the body says.
func TestMap(t *testing.T) {
	m, err := Parse("map.mlir", []byte(mapRelu))
	if err != nil {
		t.Fatal(err)
	}
	if got := ir.Print(m); got != mapReluIR {
		t.Errorf("got\n%s\nwant\n%s", got, mapReluIR)
	}
	x := buffer(ir.Tensor(ir.F32, 2, 2), -1, 2, -3, 4)
	y := buffer(ir.Tensor(ir.F32, 2, 2), 10, 20, 30, 40)
	res, err := cpu.Run(m, m.Func("main"), []*backend.Buffer{x, y})
	if err != nil {
		t.Fatal(err)
	}
	if g, want := floats(res[0]), []float64{10, 22, 30, 44}; !sameFloats(g, want) {
		t.Errorf("got %v, want %v", g, want)
	}
}

// TestMapRefused: a body op that is not elementwise, and dimensions other
// than all of them, are refused at their position.
func TestMapRefused(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.map"(%arg0) ({
  ^bb0(%a: tensor<f32>):
    %r = stablehlo.reshape %a : (tensor<f32>) -> tensor<1xf32>
    stablehlo.return %a : tensor<f32>
  }) {dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
`, "m.mlir:4:10: error: unsupported form of stablehlo.map: stablehlo.reshape in its body (only elementwise ops, compare, select and scalar constants)"},
		{`func.func @main(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.map"(%arg0) ({
  ^bb0(%a: tensor<f32>):
    stablehlo.return %a : tensor<f32>
  }) {dimensions = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
`, "m.mlir:2:8: error: unsupported form of stablehlo.map: dimensions must be all of the inputs' dimensions in order"},
	} {
		_, err := Parse("m.mlir", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
}
