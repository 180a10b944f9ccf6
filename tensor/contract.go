package tensor

import "github.com/tpucc/tpucc/ir"

// MatMul is numpy's matmul, recorded as dot_general: t's last dimension
// contracts with o's second to last (its only one when o is 1-D). A 1-D
// operand has no free dimension in the result; with both operands of rank at
// least 2 and o of rank at least 3, the leading (batch) dimensions broadcast
// together and become dot_general batch dimensions.
func (t *Tensor) MatMul(o *Tensor) *Tensor {
	check("matmul", t, o)
	at, bt := t.Type(), o.Type()
	types := []ir.Type{at, bt}
	for _, ty := range types {
		if ty.Rank() == 0 {
			fail("matmul", types, "needs operands of rank at least 1, got %s and %s", at, bt)
		}
	}
	if at.DType != bt.DType {
		fail("matmul", types, "operands have different dtypes: %s and %s (convert one with Convert)", at, bt)
	}
	ra, rb := at.Rank(), bt.Rank()
	kb := 0
	if rb >= 2 {
		kb = rb - 2
	}
	if at.Shape[ra-1] != bt.Shape[kb] {
		fail("matmul", types, "contracting dimensions differ: %s has %s, %s has %s", at, at.Shape[ra-1], bt, bt.Shape[kb])
	}
	attr, aShape, bShape, ok := ir.MatMulDims(at, bt)
	if !ok {
		fail("matmul", types, "batch dimensions do not broadcast: %s and %s", at, bt)
	}
	a, b := t, o
	if aShape != nil {
		ops := lift("matmul", []*Tensor{a, b})
		a = ops[0].broadcastDims("matmul", aShape)
		b = ops[1].broadcastDims("matmul", bShape)
	}
	return apply1("matmul", ir.OpDotGeneral, attr, nil, a, b)
}

// DotGeneral contracts t with o along the dimension numbers of attr
// (negative dimensions count from the end of their operand); the result's
// dimensions are the batch ones, then t's free ones, then o's.
func (t *Tensor) DotGeneral(o *Tensor, attr ir.DotAttr) *Tensor {
	check("dot_general", t, o)
	lt, rt := t.Type(), o.Type()
	norm := func(ty ir.Type, dims []int64) []int64 {
		out := make([]int64, len(dims))
		for i, d := range dims {
			if d < -int64(ty.Rank()) || d >= int64(ty.Rank()) {
				fail("dot_general", []ir.Type{lt, rt}, "dimension %d is out of range for %s", d, ty)
			}
			if d < 0 {
				d += int64(ty.Rank())
			}
			out[i] = d
		}
		return out
	}
	a := &ir.DotAttr{
		LhsBatch: norm(lt, attr.LhsBatch), RhsBatch: norm(rt, attr.RhsBatch),
		LhsContract: norm(lt, attr.LhsContract), RhsContract: norm(rt, attr.RhsContract),
	}
	return apply1("dot_general", ir.OpDotGeneral, a, nil, t, o)
}
