package stablehlo

import "github.com/tpucc/tpucc/ir"

// complexMaxMin reads maximum and minimum of complex values as the
// specification orders them, lexicographically on (real, imaginary): a
// select of a or b by compares of their parts. An operand with a NaN part
// is the result (a first), as a NaN is for floats. ir's max and min stay
// real-only: XLA:CPU's complex maximum compares real parts alone, and
// XLA:TPU cannot compile it, while this form compiles and runs on both.
func (bd *builder) complexMaxMin(o *op, code ir.Op, a, b *ir.Value) *ir.Value {
	cmp := func(dir ir.CmpDir, x, y *ir.Value) *ir.Value {
		return bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: dir}, nil, x, y)
	}
	logic := func(op ir.Op, x, y *ir.Value) *ir.Value { return bd.emit(o, op, nil, nil, x, y) }
	ra, ia := bd.emit(o, ir.OpReal, nil, nil, a), bd.emit(o, ir.OpImag, nil, nil, a)
	rb, ib := bd.emit(o, ir.OpReal, nil, nil, b), bd.emit(o, ir.OpImag, nil, nil, b)
	nan := func(r, i *ir.Value) *ir.Value { return logic(ir.OpOr, cmp(ir.CmpNE, r, r), cmp(ir.CmpNE, i, i)) }
	dir := ir.CmpGT
	if code == ir.OpMin {
		dir = ir.CmpLT
	}
	// a goes first: its real part, or else its imaginary part, is beyond b's.
	first := logic(ir.OpOr, cmp(dir, ra, rb), logic(ir.OpAnd, cmp(ir.CmpEQ, ra, rb), cmp(dir, ia, ib)))
	nanB := nan(rb, ib)
	notNaNB := bd.emit(o, ir.OpNot, nil, nil, nanB)
	pickA := logic(ir.OpOr, nan(ra, ia), logic(ir.OpAnd, notNaNB, first))
	return bd.emit(o, ir.OpSelect, nil, nil, pickA, a, b)
}
