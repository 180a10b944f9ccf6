package passes

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// Arithmetic identities. Each holds bit for bit under the semantics of
// docs/ops.md: NaN stays NaN, the sign of zero is kept, integers wrap. Float
// rules are therefore narrower than the algebra suggests: x + 0.0 is not x
// (for x = -0.0 it is +0.0), x * 0.0 is not 0.0 (NaN, inf and the sign), and
// x - x is not 0.0 (inf and NaN).
var arithmeticRules = []rule{
	{"add-zero", []ir.Op{ir.OpAdd}, addZero, nil},
	{"sub-zero", []ir.Op{ir.OpSub}, subZero, nil},
	{"sub-self", []ir.Op{ir.OpSub}, subSelf, nil},
	{"mul-one", []ir.Op{ir.OpMul}, mulOne, nil},
	{"mul-zero", []ir.Op{ir.OpMul}, mulZero, nil},
	{"div-one", []ir.Op{ir.OpDiv}, divOne, nil},
	{"neg-neg", []ir.Op{ir.OpNeg}, negNeg, nil},
	{"minmax-self", []ir.Op{ir.OpMax, ir.OpMin}, minmaxSelf, nil},
}

// Logical and bitwise identities, select and compare.
var logicRules = []rule{
	{"not-not", []ir.Op{ir.OpNot}, notNot, nil},
	{"andor-self", []ir.Op{ir.OpAnd, ir.OpOr}, andOrSelf, nil},
	{"xor-self", []ir.Op{ir.OpXor}, xorSelf, nil},
	{"compare-self", []ir.Op{ir.OpCompare}, compareSelf, nil},
	{"select-constant-pred", []ir.Op{ir.OpSelect}, selectConstantPred, nil},
	{"select-same", []ir.Op{ir.OpSelect}, selectSame, nil},
}

// Canonical operand order, tried after every identity of the op.
var orderRules = []rule{
	{"commute-constant-right", []ir.Op{ir.OpAdd, ir.OpMul, ir.OpMax, ir.OpMin, ir.OpAnd, ir.OpOr, ir.OpXor}, commuteConstantRight, nil},
	{"compare-constant-right", []ir.Op{ir.OpCompare}, compareConstantRight, nil},
}

var negZero = math.Copysign(0, -1)

// isAddIdentity: e with x + e == x for every x: 0 for integers, -0.0 for
// floats (-0.0 + -0.0 = -0.0 and +0.0 + -0.0 = +0.0).
func isAddIdentity(v *ir.Value) bool {
	if v.Type.DType.IsFloat() {
		return isFloatSplat(v, negZero)
	}
	return isIntSplat(v, 0)
}

// isSubIdentity: e with x - e == x for every x: 0 for integers, +0.0 for
// floats (-0.0 - +0.0 = -0.0).
func isSubIdentity(v *ir.Value) bool {
	if v.Type.DType.IsFloat() {
		return isFloatSplat(v, 0)
	}
	return isIntSplat(v, 0)
}

func isOne(v *ir.Value) bool {
	if v.Type.DType.IsFloat() {
		return isFloatSplat(v, 1)
	}
	return isIntSplat(v, 1)
}

// Pattern: add(X, 0) -> X        (integers)
// Pattern: add(0, X) -> X        (integers)
// Pattern: add(X, -0.0) -> X     (floats; add(X, +0.0) is kept: it turns -0.0 into +0.0)
// Pattern: add(-0.0, X) -> X     (floats)
func addZero(r *rewriter, in *ir.Instr) *ir.Value {
	x, y := in.Args[0], in.Args[1]
	switch {
	case isAddIdentity(y):
		return sameType(x, in)
	case isAddIdentity(x):
		return sameType(y, in)
	}
	return nil
}

// Pattern: sub(X, 0) -> X        (integers)
// Pattern: sub(X, +0.0) -> X     (floats; sub(X, -0.0) is X + 0.0 and is kept)
func subZero(r *rewriter, in *ir.Instr) *ir.Value {
	if isSubIdentity(in.Args[1]) {
		return sameType(in.Args[0], in)
	}
	return nil
}

// Pattern: sub(X, X) -> 0        (integers only: for floats inf - inf and NaN - NaN are NaN)
func subSelf(r *rewriter, in *ir.Instr) *ir.Value {
	t := in.Result().Type
	if in.Args[0] != in.Args[1] || !t.DType.IsInt() {
		return nil
	}
	return r.splat(t, 0)
}

// Pattern: mul(X, 1) -> X
// Pattern: mul(1, X) -> X        (exact for floats too, -0.0, inf and NaN included)
func mulOne(r *rewriter, in *ir.Instr) *ir.Value {
	x, y := in.Args[0], in.Args[1]
	switch {
	case isOne(y):
		return sameType(x, in)
	case isOne(x):
		return sameType(y, in)
	}
	return nil
}

// Pattern: mul(X, 0) -> 0
// Pattern: mul(0, X) -> 0        (integers only: for floats NaN * 0, inf * 0 and the sign of zero differ)
func mulZero(r *rewriter, in *ir.Instr) *ir.Value {
	if !in.Result().Type.DType.IsInt() {
		return nil
	}
	x, y := in.Args[0], in.Args[1]
	switch {
	case isIntSplat(y, 0):
		return sameType(y, in)
	case isIntSplat(x, 0):
		return sameType(x, in)
	}
	return nil
}

// Pattern: div(X, 1) -> X        (integers and floats)
func divOne(r *rewriter, in *ir.Instr) *ir.Value {
	if isOne(in.Args[1]) {
		return sameType(in.Args[0], in)
	}
	return nil
}

// Pattern: neg(neg(X)) -> X      (integers wrap, so -(-MIN) is MIN again)
func negNeg(r *rewriter, in *ir.Instr) *ir.Value {
	if d := in.Args[0].Def; d != nil && d.Op == ir.OpNeg {
		return sameType(d.Args[0], in)
	}
	return nil
}

// Pattern: max(X, X) -> X
// Pattern: min(X, X) -> X        (NaN gives NaN and -0.0 gives -0.0 either way)
func minmaxSelf(r *rewriter, in *ir.Instr) *ir.Value {
	if in.Args[0] == in.Args[1] {
		return sameType(in.Args[0], in)
	}
	return nil
}

// Pattern: not(not(X)) -> X
func notNot(r *rewriter, in *ir.Instr) *ir.Value {
	if d := in.Args[0].Def; d != nil && d.Op == ir.OpNot {
		return sameType(d.Args[0], in)
	}
	return nil
}

// Pattern: and(X, X) -> X
// Pattern: or(X, X) -> X
func andOrSelf(r *rewriter, in *ir.Instr) *ir.Value {
	if in.Args[0] == in.Args[1] {
		return sameType(in.Args[0], in)
	}
	return nil
}

// Pattern: xor(X, X) -> 0        (false for i1)
func xorSelf(r *rewriter, in *ir.Instr) *ir.Value {
	if in.Args[0] != in.Args[1] {
		return nil
	}
	return r.splat(in.Result().Type, 0)
}

// Pattern: compare(X, X) {dir=eq|le|ge} -> true    (integers and i1)
// Pattern: compare(X, X) {dir=ne|lt|gt} -> false   (integers and i1; for floats and complex NaN compares unequal to itself)
func compareSelf(r *rewriter, in *ir.Instr) *ir.Value {
	if dt := in.Args[0].Type.DType; in.Args[0] != in.Args[1] || dt.IsFloat() || dt.IsComplex() {
		return nil
	}
	a, ok := in.Attr.(*ir.CompareAttr)
	if !ok {
		return nil
	}
	var v int64
	switch a.Dir {
	case ir.CmpEQ, ir.CmpLE, ir.CmpGE:
		v = 1
	}
	return r.splat(in.Result().Type, v)
}

// Pattern: select(true, A, B) -> A
// Pattern: select(false, A, B) -> B   (the predicate a splat constant, of any shape)
func selectConstantPred(r *rewriter, in *ir.Instr) *ir.Value {
	l, ok := splatLiteral(in.Args[0])
	if !ok || l.Ints == nil {
		return nil
	}
	if l.Ints[0] != 0 {
		return sameType(in.Args[1], in)
	}
	return sameType(in.Args[2], in)
}

// Pattern: select(P, X, X) -> X
func selectSame(r *rewriter, in *ir.Instr) *ir.Value {
	if in.Args[1] == in.Args[2] {
		return sameType(in.Args[1], in)
	}
	return nil
}

// Pattern: add(C, X) -> add(X, C)   (and mul, and, or, xor; max and min for integers)
//
// One canonical order lets later rules and cse look at one side only. Float
// add and mul are commutative bit for bit; float max and min are left alone
// because which zero max(-0.0, +0.0) returns is not pinned down.
func commuteConstantRight(r *rewriter, in *ir.Instr) *ir.Value {
	x, y := in.Args[0], in.Args[1]
	if !isConstant(x) || isConstant(y) {
		return nil
	}
	if (in.Op == ir.OpMax || in.Op == ir.OpMin) && x.Type.DType.IsFloat() {
		return nil
	}
	t := in.Result().Type
	return r.builder().Typed(in.Op, in.Attr, &t, y, x)
}

// swappedDir is the direction d' with compare(y, x) {dir=d'} == compare(x, y) {dir=d}.
var swappedDir = [...]ir.CmpDir{
	ir.CmpEQ: ir.CmpEQ, ir.CmpNE: ir.CmpNE,
	ir.CmpLT: ir.CmpGT, ir.CmpGT: ir.CmpLT,
	ir.CmpLE: ir.CmpGE, ir.CmpGE: ir.CmpLE,
}

// Pattern: compare(C, X) {dir=lt} -> compare(X, C) {dir=gt}   (eq, ne kept; le <-> ge; NaN is false either way)
func compareConstantRight(r *rewriter, in *ir.Instr) *ir.Value {
	x, y := in.Args[0], in.Args[1]
	a, ok := in.Attr.(*ir.CompareAttr)
	if !ok || !isConstant(x) || isConstant(y) {
		return nil
	}
	t := in.Result().Type
	return r.builder().Typed(ir.OpCompare, &ir.CompareAttr{Dir: swappedDir[a.Dir]}, &t, y, x)
}
