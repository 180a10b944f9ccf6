package stablehlo

import (
	"fmt"
	"math"

	"github.com/tpucc/tpucc/ir"
)

// reducePrecision writes stablehlo.reduce_precision. With no mantissa bit
// left a NaN has no encoding and becomes the infinity of its sign (the
// StableHLO interpreter's value); XLA:CPU keeps the NaN, so that case is
// spelled out: the sign read from the bits, as no float op reads a NaN's.
func (e *emitter) reducePrecision(x hv, a *ir.ReducePrecisionAttr) hv {
	r := e.def(x.t, "stablehlo.reduce_precision ", x.ref, fmt.Sprintf(", format = e%dm%d : ", a.ExponentBits, a.MantissaBits), tensorType(x.t))
	if a.MantissaBits > 0 {
		return r
	}
	it := x.t.WithDType(map[ir.DType]ir.DType{ir.F64: ir.I64, ir.F32: ir.I32, ir.F16: ir.I16, ir.BF16: ir.I16}[x.t.DType])
	bits := e.def(it, "stablehlo.bitcast_convert ", x.ref, " : ", funcType([]hv{x}, []ir.Type{it}))
	inf := e.selectOp(e.compareAs("LT", "SIGNED", bits, e.iconst(it, 0)), e.fconst(x.t, math.Inf(-1)), e.fconst(x.t, math.Inf(1)))
	return e.selectOp(e.compareAs("NE", "FLOAT", x, x), inf, r)
}
