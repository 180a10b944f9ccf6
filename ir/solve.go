package ir

// TriangularSolveAttr: triangular_solve {left_side, lower, transpose_a,
// unit_diagonal}, StableHLO's attributes. TransposeA is a bool: for the real
// types tpucc has, StableHLO's TRANSPOSE and ADJOINT are the same matrix.
type TriangularSolveAttr struct {
	LeftSide, Lower, UnitDiagonal, TransposeA bool
}

// Fields writes all four flags, false ones too: lower=false (an upper
// triangle) reads wrongly when left out.
func (a *TriangularSolveAttr) Fields() []AttrField {
	flag := func(name string, v bool) AttrField {
		return AttrField{Name: name, Value: AttrValue{Kind: AttrBool, Bool: v}}
	}
	return []AttrField{flag("left_side", a.LeftSide), flag("lower", a.Lower),
		flag("transpose_a", a.TransposeA), flag("unit_diagonal", a.UnitDiagonal)}
}

func decodeTriangularSolve(r *attrReader) Attr {
	return &TriangularSolveAttr{LeftSide: r.bool("left_side"), Lower: r.bool("lower"),
		UnitDiagonal: r.bool("unit_diagonal"), TransposeA: r.bool("transpose_a")}
}

// inferTriangularSolve: a is [..., m, m], b is [..., m, n] (left side) or
// [..., n, m] with the same batch dimensions and dtype; the result is b's type.
func inferTriangularSolve(c *inferCtx) []Type {
	a, b := c.args[0], c.args[1]
	if !c.checkClass(a, floatCplxT, "operand") {
		return nil
	}
	if a.DType != b.DType {
		return c.fail("operands of triangular_solve have different dtypes: %s and %s", a, b)
	}
	r := a.Rank()
	if r < 2 || b.Rank() != r {
		return c.fail("triangular_solve needs operands of one rank, at least 2, got %s and %s", a, b)
	}
	if a.Shape[r-1] != a.Shape[r-2] {
		return c.fail("triangular_solve needs a square matrix a, got %s", a)
	}
	for i := 0; i < r-2; i++ {
		if a.Shape[i] != b.Shape[i] {
			return c.fail("batch dimension %d of triangular_solve differs: %s and %s", i, a, b)
		}
	}
	k := r - 2
	if !c.attr.(*TriangularSolveAttr).LeftSide {
		k = r - 1
	}
	if b.Shape[k] != a.Shape[r-1] {
		return c.fail("dimension %d of b must be a's size %s in triangular_solve, got %s", k, a.Shape[r-1], b)
	}
	return []Type{b.WithShape(b.Shape)}
}
