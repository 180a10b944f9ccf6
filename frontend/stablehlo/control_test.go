package stablehlo

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// captureLoop: a loop whose do region reads %arg1 and %arg2 from the
// function (implicit capture), with a case inside that reads %arg1 too.
const captureLoop = `module @m {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<i32>) -> (tensor<i32>, tensor<3xf32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<3xf32>
    cond {
      %1 = stablehlo.compare LT, %iterArg, %arg2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %c_1 = stablehlo.constant dense<1> : tensor<i32>
      %1 = stablehlo.add %iterArg, %c_1 : tensor<i32>
      %3 = "stablehlo.case"(%iterArg) ({
        %4 = stablehlo.add %iterArg_0, %arg1 : tensor<3xf32>
        stablehlo.return %4 : tensor<3xf32>
      }, {
        %4 = stablehlo.multiply %iterArg_0, %arg1 : tensor<3xf32>
        stablehlo.return %4 : tensor<3xf32>
      }) : (tensor<i32>) -> tensor<3xf32>
      stablehlo.return %1, %3 : tensor<i32>, tensor<3xf32>
    }
    return %0#0, %0#1 : tensor<i32>, tensor<3xf32>
  }
}
`

const captureIR = `func @main(%arg0: f32[3], %arg1: f32[3], %arg2: i32[]) -> (i32[], f32[3]) {
  %0 = constant 0 : i32[]
  %1, %2, %3, %4 = while %0, %arg0, %arg2, %arg1 : i32[], f32[3], i32[], f32[3] cond (%5: i32[], %6: f32[3], %7: i32[], %8: f32[3]) {
      %9 = compare %5, %7 {dir=lt} : i1[]
      return %9
    } do (%10: i32[], %11: f32[3], %12: i32[], %13: f32[3]) {
      %14 = constant 1 : i32[]
      %15 = add %10, %14 : i32[]
      %16 = case %10, %11, %13 : f32[3] (%17: f32[3], %18: f32[3]) {
          %19 = add %17, %18 : f32[3]
          return %19
        } (%20: f32[3], %21: f32[3]) {
          %22 = mul %20, %21 : f32[3]
          return %22
        }
      return %15, %16, %12, %13
    }
  return %1, %2
}
`

// TestCapture: captured values become carried values of the while (the do
// region returns them unchanged) and operands of the case, as the printed
// ir shows, and the loop computes what the text says.
func TestCapture(t *testing.T) {
	m, err := Parse("capture.mlir", []byte(captureLoop))
	if err != nil {
		t.Fatal(err)
	}
	if got := ir.Print(m); got != captureIR {
		t.Errorf("got\n%s\nwant\n%s", got, captureIR)
	}
	f := m.Func("main")
	x := buffer(ir.Tensor(ir.F32, 3), 1, 2, 3)
	y := buffer(ir.Tensor(ir.F32, 3), 10, 20, 30)
	n := buffer(ir.Scalar(ir.I32), 3)
	res, err := cpu.Run(m, f, []*backend.Buffer{x, y, n})
	if err != nil {
		t.Fatal(err)
	}
	// i=0: x+y; i=1: (x+y)*y; i=2 (out of range, last branch): (x+y)*y*y.
	want := []float64{(1 + 10) * 10 * 10, (2 + 20) * 20 * 20, (3 + 30) * 30 * 30}
	if g := floats(res[1]); !sameFloats(g, want) || floats(res[0])[0] != 3 {
		t.Errorf("got %v, %v; want 3, %v", floats(res[0]), g, want)
	}
}

func buffer(t ir.Type, vals ...float64) *backend.Buffer {
	b := backend.New(t)
	b.WriteFloat64s(0, vals)
	return b
}

func floats(b *backend.Buffer) []float64 {
	v := make([]float64, b.Len())
	b.ReadFloat64s(0, v)
	return v
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

const prettyWhile = `func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<3xf32> attributes {mhlo.frontend_attributes = {x = "1"}}
  cond {
    %c_1 = stablehlo.constant dense<4> : tensor<i32>
    %1 = stablehlo.compare LT, %iterArg, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %c_1 = stablehlo.constant dense<1> : tensor<i32>
    %1 = stablehlo.add %iterArg, %c_1 : tensor<i32>
    %2 = stablehlo.add %iterArg_0, %arg0 : tensor<3xf32>
    stablehlo.return %1, %2 : tensor<i32>, tensor<3xf32>
  }
  return %0#1 : tensor<3xf32>
}
`

const genericWhile = `func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %c = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %0:2 = "stablehlo.while"(%c, %arg0) ({
  ^bb0(%a: tensor<i32>, %b: tensor<3xf32>):
    %c_1 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.compare"(%a, %c_1) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%1) : (tensor<i1>) -> ()
  }, {
  ^bb0(%a: tensor<i32>, %b: tensor<3xf32>):
    %c_1 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.add"(%a, %c_1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %2 = "stablehlo.add"(%b, %arg0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "stablehlo.return"(%1, %2) : (tensor<i32>, tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>)
  "func.return"(%0#1) : (tensor<3xf32>) -> ()
}
`

// TestWhileForms: the generic while reads as the pretty one does, and the
// loop adds the captured %arg0 four times.
func TestWhileForms(t *testing.T) {
	p, err := Parse("pretty.mlir", []byte(prettyWhile))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse("generic.mlir", []byte(genericWhile))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := ir.Print(p), ir.Print(g); a != b {
		t.Errorf("pretty:\n%s\ngeneric:\n%s", a, b)
	}
	res, err := cpu.Run(p, p.Func("main"), []*backend.Buffer{buffer(ir.Tensor(ir.F32, 3), 1, -2, 0.5)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := floats(res[0]), []float64{5, -10, 2.5}; !sameFloats(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

const ifProgram = `func.func @main(%arg0: tensor<i1>, %arg1: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.if"(%arg0) ({
    %1 = stablehlo.negate %arg1 : tensor<2xf32>
    stablehlo.return %1 : tensor<2xf32>
  }, {
    %1 = stablehlo.abs %arg1 : tensor<2xf32>
    stablehlo.return %1 : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
`

// TestIf: stablehlo.if runs its first region when the predicate is true,
// its second when false.
func TestIf(t *testing.T) {
	m, err := Parse("if.mlir", []byte(ifProgram))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pred float64
		want []float64
	}{{1, []float64{-3, 4}}, {0, []float64{3, 4}}} {
		args := []*backend.Buffer{buffer(ir.Scalar(ir.I1), c.pred), buffer(ir.Tensor(ir.F32, 2), 3, -4)}
		res, err := cpu.Run(m, m.Func("main"), args)
		if err != nil {
			t.Fatal(err)
		}
		if got := floats(res[0]); !sameFloats(got, c.want) {
			t.Errorf("pred %v: got %v, want %v", c.pred, got, c.want)
		}
	}
}

// TestControlErrors: malformed loops and branches are refused at the text.
func TestControlErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{strings.Replace(prettyWhile, "stablehlo.return %1, %2 : tensor<i32>, tensor<3xf32>", "stablehlo.return %1, %1 : tensor<i32>, tensor<i32>", 1),
			"bad.mlir:12:26: error: stablehlo.while do region returns tensor<i32> as value 1, want tensor<3xf32>"},
		{strings.Replace(prettyWhile, "stablehlo.return %1 : tensor<i1>", "stablehlo.return %c_1 : tensor<i32>", 1),
			"bad.mlir:7:22: error: stablehlo.while cond region returns tensor<i32> as value 0, want tensor<i1>"},
		{strings.Replace(ifProgram, "tensor<i1>", "tensor<i32>", -1), "bad.mlir:2:8: error: stablehlo.if needs a tensor<i1> predicate and 2 regions"},
		{strings.Replace(ifProgram, "  %0 = \"stablehlo.if\"(%arg0) ({\n    %1 = stablehlo.negate %arg1 : tensor<2xf32>\n    stablehlo.return %1 : tensor<2xf32>\n  }, {", "  %0 = \"stablehlo.if\"(%arg0) ({", 1), "bad.mlir:2:8: error: stablehlo.if needs a tensor<i1> predicate and 2 regions"},
		{strings.Replace(ifProgram, "stablehlo.abs %arg1", "stablehlo.abs %nope", 1), "bad.mlir:6:24: error: undefined value %nope"},
		{strings.Replace(genericWhile, "^bb0(%a: tensor<i32>, %b: tensor<3xf32>):\n    %c_1 = \"stablehlo.constant\"() <{value = dense<1>", "^bb0(%a: tensor<i32>):\n    %c_1 = \"stablehlo.constant\"() <{value = dense<1>", 1), "bad.mlir:8:6: error: stablehlo.while do region has 1 parameter, want 2"},
	} {
		_, err := Parse("bad.mlir", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
}
