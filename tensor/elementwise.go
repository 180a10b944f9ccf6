package tensor

import "github.com/tpucc/tpucc/ir"

// Unary elementwise ops: the result has the operand's type. Float-only ops
// (exp, log, ...) refuse integers; not takes i1 or integers.

func (t *Tensor) unary(name string, op ir.Op) *Tensor { return apply1(name, op, nil, nil, t) }

// Neg is -t; integers wrap.
func (t *Tensor) Neg() *Tensor { return t.unary("neg", ir.OpNeg) }

// Abs is |t|.
func (t *Tensor) Abs() *Tensor { return t.unary("abs", ir.OpAbs) }

// Exp is e^t.
func (t *Tensor) Exp() *Tensor { return t.unary("exp", ir.OpExp) }

// Log is the natural logarithm.
func (t *Tensor) Log() *Tensor { return t.unary("log", ir.OpLog) }

// Log1p is log(1+t), accurate near 0.
func (t *Tensor) Log1p() *Tensor { return t.unary("log1p", ir.OpLog1p) }

// Expm1 is e^t-1, accurate near 0.
func (t *Tensor) Expm1() *Tensor { return t.unary("expm1", ir.OpExpm1) }

// Sqrt is the square root.
func (t *Tensor) Sqrt() *Tensor { return t.unary("sqrt", ir.OpSqrt) }

// Rsqrt is 1/sqrt(t).
func (t *Tensor) Rsqrt() *Tensor { return t.unary("rsqrt", ir.OpRsqrt) }

// Tanh is the hyperbolic tangent.
func (t *Tensor) Tanh() *Tensor { return t.unary("tanh", ir.OpTanh) }

// Sigmoid is 1/(1+e^-t).
func (t *Tensor) Sigmoid() *Tensor { return t.unary("sigmoid", ir.OpSigmoid) }

// Sin is the sine.
func (t *Tensor) Sin() *Tensor { return t.unary("sin", ir.OpSin) }

// Cos is the cosine.
func (t *Tensor) Cos() *Tensor { return t.unary("cos", ir.OpCos) }

// Floor rounds toward -inf.
func (t *Tensor) Floor() *Tensor { return t.unary("floor", ir.OpFloor) }

// Ceil rounds toward +inf.
func (t *Tensor) Ceil() *Tensor { return t.unary("ceil", ir.OpCeil) }

// Round rounds half to even.
func (t *Tensor) Round() *Tensor { return t.unary("round", ir.OpRound) }

// Sign is -1, 0 or 1 (NaN stays NaN, -0 stays -0).
func (t *Tensor) Sign() *Tensor { return t.unary("sign", ir.OpSign) }

// Not is logical not for i1, bitwise not for integers.
func (t *Tensor) Not() *Tensor { return t.unary("not", ir.OpNot) }

// Erf is the error function.
func (t *Tensor) Erf() *Tensor { return t.unary("erf", ir.OpErf) }

// Cbrt is the cube root; Cbrt(-t) = -Cbrt(t).
func (t *Tensor) Cbrt() *Tensor { return t.unary("cbrt", ir.OpCbrt) }

// broadcastAll brings the operands of an elementwise op to their common
// shape, after checking that their dtypes agree (from index first on: a
// select's predicate has its own dtype).
func broadcastAll(name string, first int, ts ...*Tensor) []*Tensor {
	check(name, ts...)
	ts = lift(name, ts)
	types := typesOf(ts...)
	for _, u := range types[first+1:] {
		if u.DType != types[first].DType {
			fail(name, types, "operands have different dtypes: %s (convert one with Convert)", joinTypes(types))
		}
	}
	shape := types[0].Shape
	for _, u := range types[1:] {
		s, ok := ir.BroadcastShapes(shape, u.Shape)
		if !ok {
			fail(name, types, "shapes %s do not broadcast", joinTypes(types))
		}
		shape = s
	}
	out := make([]*Tensor, len(ts))
	for i, t := range ts {
		out[i] = t.broadcastDims(name, shape)
	}
	return out
}

// joinTypes writes "a and b" or "a, b and c".
func joinTypes(ts []ir.Type) string {
	s := ""
	for i, t := range ts {
		switch {
		case i == 0:
		case i == len(ts)-1:
			s += " and "
		default:
			s += ", "
		}
		s += t.String()
	}
	return s
}

// broadcastDims returns t, or t broadcast numpy-style (right-aligned) to shape.
func (t *Tensor) broadcastDims(name string, shape []ir.Dim) *Tensor {
	ty := t.Type()
	if ty.SameShape(ir.Type{Shape: shape}) {
		return t
	}
	off := len(shape) - ty.Rank()
	dims := make([]int64, ty.Rank())
	for i := range dims {
		dims[i] = int64(off + i)
	}
	rt := ir.Type{DType: ty.DType, Shape: append([]ir.Dim{}, shape...)}
	return apply1(name, ir.OpBroadcast, &ir.DimsAttr{Dims: dims}, []ir.Type{rt}, t)
}

// binary applies an elementwise binary op after numpy broadcasting.
func (t *Tensor) binary(name string, op ir.Op, attr ir.Attr, o *Tensor) *Tensor {
	xs := broadcastAll(name, 0, t, o)
	return apply1(name, op, attr, nil, xs[0], xs[1])
}

// Add is t+o; integers wrap.
func (t *Tensor) Add(o *Tensor) *Tensor { return t.binary("add", ir.OpAdd, nil, o) }

// Sub is t-o; integers wrap.
func (t *Tensor) Sub(o *Tensor) *Tensor { return t.binary("sub", ir.OpSub, nil, o) }

// Mul is t*o; integers wrap.
func (t *Tensor) Mul(o *Tensor) *Tensor { return t.binary("mul", ir.OpMul, nil, o) }

// Div is t/o; integers round toward zero and x/0 = -1 (all bits set for unsigned).
func (t *Tensor) Div(o *Tensor) *Tensor { return t.binary("div", ir.OpDiv, nil, o) }

// Rem is the remainder with the sign of t (C fmod); integer x%0 = x.
func (t *Tensor) Rem(o *Tensor) *Tensor { return t.binary("rem", ir.OpRem, nil, o) }

// Pow is t^o.
func (t *Tensor) Pow(o *Tensor) *Tensor { return t.binary("pow", ir.OpPow, nil, o) }

// Maximum is the elementwise maximum (numpy's maximum); NaN if either is NaN.
// For the maximum over axes see Max.
func (t *Tensor) Maximum(o *Tensor) *Tensor { return t.binary("maximum", ir.OpMax, nil, o) }

// Minimum is the elementwise minimum (numpy's minimum); NaN if either is NaN.
// For the minimum over axes see Min.
func (t *Tensor) Minimum(o *Tensor) *Tensor { return t.binary("minimum", ir.OpMin, nil, o) }

// And is logical and for i1, bitwise for integers.
func (t *Tensor) And(o *Tensor) *Tensor { return t.binary("and", ir.OpAnd, nil, o) }

// Or is logical or for i1, bitwise for integers.
func (t *Tensor) Or(o *Tensor) *Tensor { return t.binary("or", ir.OpOr, nil, o) }

// Xor is logical xor for i1, bitwise for integers.
func (t *Tensor) Xor(o *Tensor) *Tensor { return t.binary("xor", ir.OpXor, nil, o) }

// Atan2 is atan(t/o) in the right quadrant.
func (t *Tensor) Atan2(o *Tensor) *Tensor { return t.binary("atan2", ir.OpAtan2, nil, o) }

// Eq is t == o (i1). Comparisons broadcast; NaN is unequal to everything,
// itself included, so only Ne is true for it.
func (t *Tensor) Eq(o *Tensor) *Tensor {
	return t.binary("eq", ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpEQ}, o)
}

// Ne is t != o (i1).
func (t *Tensor) Ne(o *Tensor) *Tensor {
	return t.binary("ne", ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpNE}, o)
}

// Lt is t < o (i1).
func (t *Tensor) Lt(o *Tensor) *Tensor {
	return t.binary("lt", ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLT}, o)
}

// Le is t <= o (i1).
func (t *Tensor) Le(o *Tensor) *Tensor {
	return t.binary("le", ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLE}, o)
}

// Gt is t > o (i1).
func (t *Tensor) Gt(o *Tensor) *Tensor {
	return t.binary("gt", ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpGT}, o)
}

// Ge is t >= o (i1).
func (t *Tensor) Ge(o *Tensor) *Tensor {
	return t.binary("ge", ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpGE}, o)
}

// Where selects a where pred is true and b elsewhere; pred (i1), a and b
// broadcast together.
func Where(pred, a, b *Tensor) *Tensor {
	check("where", pred, a, b)
	if pt := pred.Type(); pt.DType != ir.I1 {
		fail("where", typesOf(pred, a, b), "the predicate must be i1, got %s", pt)
	}
	xs := broadcastAll("where", 1, pred, a, b)
	return apply1("where", ir.OpSelect, nil, nil, xs...)
}

// Clamp is min(max(t, lo), hi). lo and hi have t's dtype and are scalars or
// broadcast to t's shape; the result has t's shape.
func (t *Tensor) Clamp(lo, hi *Tensor) *Tensor {
	check("clamp", t, lo, hi)
	ops := lift("clamp", []*Tensor{t, lo, hi})
	t = ops[0]
	ty := t.Type()
	bounds := ops[1:]
	for i, b := range bounds {
		bt := b.Type()
		if bt.DType != ty.DType {
			fail("clamp", typesOf(t, lo, hi), "bounds must have the dtype of %s, got %s", ty, bt)
		}
		if bt.Rank() == 0 {
			continue
		}
		if s, ok := ir.BroadcastShapes(ty.Shape, bt.Shape); !ok || !ty.SameShape(ir.Type{Shape: s}) {
			fail("clamp", typesOf(t, lo, hi), "bound %s does not broadcast to %s", bt, ty)
		}
		bounds[i] = b.broadcastDims("clamp", ty.Shape)
	}
	return apply1("clamp", ir.OpClamp, nil, nil, bounds[0], t, bounds[1])
}
