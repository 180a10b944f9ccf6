package tir

import (
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// broadcastOperands applies numpy broadcasting to the operands of an
// elementwise op with several operands (binary ops, compare, select, clamp):
// shapes are right-aligned, a missing or size-1 dimension stretches to the
// other, symbolic dimensions must match by name. Operands whose shape differs
// from the common one get an inserted broadcast. select's i1[] predicate and
// clamp's scalar bounds are legal as they are and stay scalars. Dtypes are never
// converted: when the operands' dtypes differ, nothing is inserted and Infer
// reports the mismatch in the operands' own types.
func (fb *funcBuilder) broadcastOperands(op ir.Op, pos ir.Pos, args []*ir.Value) ([]*ir.Value, bool) {
	data := 0 // first operand whose dtype must agree with the others
	if op == ir.OpSelect {
		data = 1
	}
	for _, a := range args[data+1:] {
		if a.Type.DType != args[data].Type.DType {
			return args, true
		}
	}
	var part []int // operands taking part in broadcasting
	for i, a := range args {
		scalarOK := (op == ir.OpSelect && i == 0) || (op == ir.OpClamp && i != 1)
		if !(scalarOK && a.Type.Rank() == 0) {
			part = append(part, i)
		}
	}
	if len(part) == 0 {
		return args, true
	}
	shape := args[part[0]].Type.Shape
	for _, i := range part[1:] {
		s, ok := ir.BroadcastShapes(shape, args[i].Type.Shape)
		if !ok {
			names := make([]string, len(part))
			for k, j := range part {
				names[k] = args[j].Type.String()
			}
			fb.errorf(pos, "operands of %s do not broadcast together: %s", op, joinAnd(names))
			return nil, false
		}
		shape = s
	}
	out := append([]*ir.Value(nil), args...)
	for _, i := range part {
		if v, ok := fb.broadcastTo(args[i], shape, pos); ok {
			out[i] = v
		} else {
			return nil, false
		}
	}
	return out, true
}

// broadcastTo returns v, or v broadcast numpy-style (right-aligned) to shape.
func (fb *funcBuilder) broadcastTo(v *ir.Value, shape []ir.Dim, pos ir.Pos) (*ir.Value, bool) {
	t := v.Type
	if t.SameShape(ir.Type{Shape: shape}) {
		return v, true
	}
	off := len(shape) - t.Rank()
	dims := make([]int64, t.Rank())
	for i := range dims {
		dims[i] = int64(off + i)
	}
	rt := ir.Type{DType: t.DType, Shape: append([]ir.Dim{}, shape...)}
	in, err := fb.bld.Emit(ir.OpBroadcast, &ir.DimsAttr{Dims: dims}, []ir.Type{rt}, v)
	if err != nil {
		fb.errorf(pos, "%v", err)
		return nil, false
	}
	return in.Result(), true
}

func joinAnd(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// matmul lowers numpy's matmul to dot_general. The contracting dimension is
// a's last and b's second to last (its only one when b is 1-D). With a 1-D
// operand or a b of rank 2 no batch dimensions are needed: dot_general's result
// order (lhs free, then rhs free) is already numpy's, and the dimension numpy
// would add for a 1-D operand never appears. Otherwise the batch dimensions
// (all but the last two) are broadcast to a common shape and become
// dot_general batch dimensions.
func (fb *funcBuilder) matmul(pos ir.Pos, args []*ir.Value, hint []ir.Type, fields []ir.AttrField, ok bool) ([]*ir.Value, bool) {
	for _, f := range fields {
		fb.errorf(f.Pos, "matmul has no attribute '%s'", f.Name)
		ok = false
	}
	if !ok {
		return nil, false
	}
	if len(args) != 2 {
		fb.errorf(pos, "matmul takes 2 operands, got %d", len(args))
		return nil, false
	}
	if len(hint) > 1 {
		fb.errorf(pos, "matmul has 1 result, but %d types are written", len(hint))
		return nil, false
	}
	a, b := args[0], args[1]
	at, bt := a.Type, b.Type
	for _, t := range []ir.Type{at, bt} {
		if t.Rank() == 0 {
			fb.errorf(pos, "matmul needs operands of rank at least 1, got %s", t)
			return nil, false
		}
		if !t.DType.IsNumeric() {
			fb.errorf(pos, "operands of matmul must have a numeric type, got %s", t)
			return nil, false
		}
	}
	if at.DType != bt.DType {
		fb.errorf(pos, "operands of matmul have different dtypes: %s and %s", at, bt)
		return nil, false
	}
	ra, rb := at.Rank(), bt.Rank()
	kb := 0
	if rb >= 2 {
		kb = rb - 2
	}
	if at.Shape[ra-1] != bt.Shape[kb] {
		fb.errorf(pos, "matmul contracting dimensions differ: %s has %s, %s has %s", at, at.Shape[ra-1], bt, bt.Shape[kb])
		return nil, false
	}
	attr, aShape, bShape, ok := ir.MatMulDims(at, bt)
	if !ok {
		fb.errorf(pos, "batch dimensions of matmul do not broadcast: %s and %s", at, bt)
		return nil, false
	}
	if aShape != nil {
		if a, ok = fb.broadcastTo(a, aShape, pos); !ok {
			return nil, false
		}
		if b, ok = fb.broadcastTo(b, bShape, pos); !ok {
			return nil, false
		}
	}
	in, err := fb.bld.Emit(ir.OpDotGeneral, attr, hint, a, b)
	if err != nil {
		if res, err2 := ir.Infer(ir.OpDotGeneral, []ir.Type{a.Type, b.Type}, attr, nil); err2 == nil && len(hint) == 1 {
			fb.errorf(pos, "result type %s of matmul does not match the inferred %s", hint[0], res[0])
		} else {
			fb.errorf(pos, "%v", err)
		}
		return nil, false
	}
	return in.Results, true
}
