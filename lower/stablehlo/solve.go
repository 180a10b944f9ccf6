package stablehlo

import (
	"strconv"

	"github.com/tpucc/tpucc/ir"
)

// triangularSolve writes stablehlo.triangular_solve in the generic form JAX
// prints (it has no pretty form). f16 and bf16 are solved in f32 and
// rounded once, the contract for every op that accumulates.
func (e *emitter) triangularSolve(in *ir.Instr, a, b hv) hv {
	d := b.t.DType
	if isHalf(d) {
		return e.convert(e.triangularSolve(in, e.convert(a, ir.F32), e.convert(b, ir.F32)), d)
	}
	at := in.Attr.(*ir.TriangularSolveAttr)
	trans := "NO_TRANSPOSE"
	if at.TransposeA {
		trans = "TRANSPOSE"
	}
	return e.def(b.t, `"stablehlo.triangular_solve"(`, a.ref, ", ", b.ref, ") <{left_side = ", strconv.FormatBool(at.LeftSide),
		", lower = ", strconv.FormatBool(at.Lower), ", transpose_a = #stablehlo<transpose ", trans,
		">, unit_diagonal = ", strconv.FormatBool(at.UnitDiagonal), "}> : ", funcType([]hv{a, b}, []ir.Type{b.t}))
}
