package stablehlo

import (
	"github.com/tpucc/tpucc/ir"
)

// raggedDot lowers ragged_dot. Negative group sizes count as 0 (docs/ops.md),
// so the sizes are clamped first in both forms.
//
// With Options.NativeRaggedDot (TPU targets) it is chlo.ragged_dot, as JAX
// emits it for TPU, which XLA:TPU compiles to its grouped-matmul kernel.
// Otherwise it is a form every XLA backend runs and that computes exactly what
// the executor does: each row's group id is the number of group ends at or
// before it, each row is multiplied by its own group's matrix (a gather of rhs
// by group id, then a dot batched over rows), and rows past the last group are
// set to 0. JAX's own CPU form (masking lhs once per group and contracting over
// groups) differs where another group's weights hold inf or NaN: 0*inf adds a
// NaN to a row that group does not own.
func (e *emitter) raggedDot(l, r, sizes hv, t ir.Type) (hv, error) {
	m, g := l.t.Shape[0].Size, r.t.Shape[0].Size
	if n, _ := t.NumElements(); n == 0 || m == 0 || g == 0 {
		return e.fconst(t, 0), nil
	}
	// Clamped into [0, m]: a size past m ends its group past the last row
	// as m does, and the running sums then stay far from i32's limit.
	sizes = e.op2("stablehlo.minimum", e.op2("stablehlo.maximum", sizes, e.iconst(sizes.t, 0)), e.iconst(sizes.t, m))
	if e.nativeRagged {
		return e.chloRaggedDot(l, r, sizes, t), nil
	}
	gid := e.groupIDs(sizes, m)
	w, err := e.take(r, gid, 0, ir.Type{DType: r.t.DType, Shape: []ir.Dim{ir.D(m), r.t.Shape[1], r.t.Shape[2]}})
	if err != nil {
		return hv{}, err
	}
	prod := e.dot(&ir.DotAttr{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContract: []int64{1}, RhsContract: []int64{1}}, l, w, t)
	inGroup := e.compare("LT", gid, e.iconst(gid.t, g))
	return e.selectOp(e.broadcast(inGroup, t.WithDType(ir.I1), []int64{0}), prod, e.fconst(t, 0)), nil
}

// groupIDs returns, for each of the m rows, the number of group ends at or
// before it ([m] i32): the row's group, or g for rows past every group. The
// ends are a running sum of sizes, written as a masked reduction so that it
// needs no reduce_window: ends[i] = sum over j <= i of sizes[j].
func (e *emitter) groupIDs(sizes hv, m int64) hv {
	g := sizes.t.Shape[0].Size
	sq := ir.Type{DType: ir.I32, Shape: []ir.Dim{ir.D(g), ir.D(g)}}
	upTo := e.compare("LE", e.iota(sq, 1), e.iota(sq, 0)) // [i, j]: j <= i
	terms := e.selectOp(upTo, e.broadcast(sizes, sq, []int64{1}), e.iconst(sq, 0))
	ends := e.reduce(terms, "stablehlo.add", e.iconst(ir.Scalar(ir.I32), 0), []int64{1})
	rg := ir.Type{DType: ir.I32, Shape: []ir.Dim{ir.D(m), ir.D(g)}}
	passed := e.compare("LE", e.broadcast(ends, rg, []int64{1}), e.iota(rg, 0)) // [r, i]: ends[i] <= r
	return e.reduce(e.convert(passed, ir.I32), "stablehlo.add", e.iconst(ir.Scalar(ir.I32), 0), []int64{1})
}

// chloRaggedDot writes chlo.ragged_dot. Half-precision operands accumulate in
// f32 and round once, and a wider result type converts the operands first, as
// dot does.
func (e *emitter) chloRaggedDot(l, r, sizes hv, t ir.Type) hv {
	acc := t.DType
	switch {
	case isHalf(l.t.DType) && (isHalf(acc) || acc == ir.F32):
		acc = ir.F32
	case acc != l.t.DType:
		l, r = e.convert(l, acc), e.convert(r, acc)
	}
	at := t.WithDType(acc)
	res := e.def(at, `"chlo.ragged_dot"(`, l.ref, ", ", r.ref, ", ", sizes.ref,
		`) <{precision_config = [#chlo<precision `+e.precision+`>, #chlo<precision `+e.precision+`>], ragged_dot_dimension_numbers = #chlo.ragged_dot<`,
		`lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>}> : `,
		funcType([]hv{l, r, sizes}, []ir.Type{at}))
	return e.convert(res, t.DType)
}

// raggedContract lowers ragged_contract (lhs [m,k], rhs [m,n] -> [g,k,n]),
// its group sizes clamped as ragged_dot's. On TPU targets it is
// chlo.ragged_dot with the ragged dimension contracted, the form of
// jax.lax.ragged_dot's weight gradient, which XLA:TPU runs grouped.
// Otherwise each operand is masked per group with select (a row outside the
// group is 0 on both sides, so a NaN in another group's rows stays out, as
// in the executor) and the two are contracted over rows, batched by group.
func (e *emitter) raggedContract(l, r, sizes hv, t ir.Type) hv {
	m, g := l.t.Shape[0].Size, sizes.t.Shape[0].Size
	if n, _ := t.NumElements(); n == 0 || m == 0 {
		return e.fconst(t, 0)
	}
	sizes = e.op2("stablehlo.minimum", e.op2("stablehlo.maximum", sizes, e.iconst(sizes.t, 0)), e.iconst(sizes.t, m))
	if e.nativeRagged {
		return e.chloRaggedContract(l, r, sizes, t)
	}
	gid := e.groupIDs(sizes, m)
	mine := func(x hv) hv { // [g, m, cols]: x's rows in group i, else 0
		xt := ir.Type{DType: x.t.DType, Shape: []ir.Dim{ir.D(g), ir.D(m), x.t.Shape[1]}}
		pt := xt.WithDType(ir.I1)
		in := e.compare("EQ", e.broadcast(gid, pt.WithDType(ir.I32), []int64{1}), e.iota(pt.WithDType(ir.I32), 0))
		return e.selectOp(in, e.broadcast(x, xt, []int64{1, 2}), e.fconst(xt, 0))
	}
	return e.dot(&ir.DotAttr{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContract: []int64{1}, RhsContract: []int64{1}}, mine(l), mine(r), t)
}

// chloRaggedContract writes chlo.ragged_dot in its ragged-contracting form
// (lhs and rhs both ragged along their rows, no group dimension in rhs), with
// chloRaggedDot's accumulation rules.
func (e *emitter) chloRaggedContract(l, r, sizes hv, t ir.Type) hv {
	acc := t.DType
	switch {
	case isHalf(l.t.DType) && (isHalf(acc) || acc == ir.F32):
		acc = ir.F32
	case acc != l.t.DType:
		l, r = e.convert(l, acc), e.convert(r, acc)
	}
	at := t.WithDType(acc)
	res := e.def(at, `"chlo.ragged_dot"(`, l.ref, ", ", r.ref, ", ", sizes.ref,
		`) <{precision_config = [#chlo<precision `+e.precision+`>, #chlo<precision `+e.precision+`>], ragged_dot_dimension_numbers = #chlo.ragged_dot<`,
		`lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0], lhs_ragged_dimensions = [0], rhs_group_dimensions = []>}> : `,
		funcType([]hv{l, r, sizes}, []ir.Type{at}))
	return e.convert(res, t.DType)
}
