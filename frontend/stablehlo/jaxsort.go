package stablehlo

import (
	"github.com/tpucc/tpucc/ir"
)

// jaxSortF32 is the comparator jnp.sort and jnp.argsort write for f32: both
// values canonicalised (-0 to +0, every NaN to the positive quiet NaN), then
// compared in total order. Sorting by it is sorting the canonicalised values
// in total order, which ir's argsort does.
const jaxSortF32 = `func.func @c(%a: tensor<f32>, %b: tensor<f32>) -> tensor<i1> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %1 = stablehlo.compare EQ, %a, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %2 = stablehlo.select %1, %cst_0, %a : tensor<i1>, tensor<f32>
  %3 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %4 = stablehlo.select %3, %cst_1, %2 : tensor<i1>, tensor<f32>
  %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %5 = stablehlo.compare EQ, %b, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %6 = stablehlo.select %5, %cst_3, %b : tensor<i1>, tensor<f32>
  %7 = stablehlo.compare NE, %b, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %8 = stablehlo.select %7, %cst_4, %6 : tensor<i1>, tensor<f32>
  %9 = stablehlo.compare LT, %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
  stablehlo.return %9 : tensor<i1>
}
`

// jaxSortBody is jaxSortF32 in canonical spelling.
var jaxSortBody = func() string {
	s := newScanner("jaxsort", jaxSortF32)
	f := s.function()
	f.body.params = f.params
	return canonical(f.body)
}()

// canonicalise is the comparator's canonicalisation as ir ops: x with -0 made
// +0 and every NaN the positive quiet NaN.
func (bd *builder) canonicalise(o *op, x *ir.Value) *ir.Value {
	c := func(v float64) *ir.Value {
		return bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Floats: []float64{v}}}, []ir.Type{x.Type})
	}
	zero := bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpEQ}, nil, x, c(0))
	x = bd.emit(o, ir.OpSelect, nil, nil, zero, c(0), x)
	nan := bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpNE}, nil, x, x)
	return bd.emit(o, ir.OpSelect, nil, nil, nan, c(nanBits()), x)
}

// nanBits is the positive quiet NaN 0x7FC00000 as a float64.
func nanBits() float64 { return floatFromBits(ir.F32, 0x7FC00000) }
