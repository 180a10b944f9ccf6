package stablehlo

import "github.com/tpucc/tpucc/ir"

// triangularSolve reads stablehlo.triangular_solve. ADJOINT is the conjugate
// transpose: the transpose of a's conjugate (complex(real, -imag)) for
// complex a, the transpose itself for real types.
func (bd *builder) triangularSolve(o *op, args []*ir.Value) *ir.Value {
	flag := func(name string) bool {
		a := bd.attr(o, name)
		if a.kind != attrBool {
			bd.s.failf(a.pos, "%s: %s must be true or false, got %s", o.name, name, a.describe())
		}
		return a.text == "true"
	}
	at := &ir.TriangularSolveAttr{LeftSide: flag("left_side"), Lower: flag("lower"), UnitDiagonal: flag("unit_diagonal")}
	switch t := bd.attr(o, "transpose_a"); {
	case t.kind == attrWord && t.text == "NO_TRANSPOSE":
	case t.kind == attrWord && (t.text == "TRANSPOSE" || t.text == "ADJOINT"):
		at.TransposeA = true
		if a := args[0]; t.text == "ADJOINT" && len(args) == 2 && a.Type.DType.IsComplex() {
			im := bd.emit(o, ir.OpNeg, nil, nil, bd.emit(o, ir.OpImag, nil, nil, a))
			args = []*ir.Value{bd.emit(o, ir.OpComplex, nil, nil, bd.emit(o, ir.OpReal, nil, nil, a), im), args[1]}
		}
	default:
		bd.s.failf(t.pos, "%s: unsupported transpose_a %s", o.name, t.describe())
	}
	return bd.emit(o, ir.OpTriangularSolve, at, []ir.Type{bd.result(o)}, args...)
}
