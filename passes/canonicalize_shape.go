package passes

import "github.com/tpucc/tpucc/ir"

// Shape identities: movement ops that do nothing, and chains of one movement
// op that compose into one. They hold for every dtype: they only move elements.
var shapeRules = []rule{
	{"transpose-identity", []ir.Op{ir.OpTranspose}, transposeIdentity, nil},
	{"transpose-transpose", []ir.Op{ir.OpTranspose}, transposeTranspose, nil},
	{"reshape-noop", []ir.Op{ir.OpReshape}, reshapeNoop, nil},
	{"reshape-reshape", []ir.Op{ir.OpReshape}, reshapeReshape, nil},
	{"broadcast-noop", []ir.Op{ir.OpBroadcast}, broadcastNoop, nil},
	{"convert-noop", []ir.Op{ir.OpConvert}, convertNoop, nil},
	{"slice-noop", []ir.Op{ir.OpSlice}, sliceNoop, nil},
	{"take-of-convert", []ir.Op{ir.OpTake}, takeOfConvert, nil},
	{name: "top_k-of-one", ops: []ir.Op{ir.OpTopK}, multi: topKOfOne},
}

// topKOfOne: the largest of one element is that element, at index 0.
// Pattern: top_k(X) {k=1} with X's last dimension 1 -> X, 0
func topKOfOne(r *rewriter, in *ir.Instr) []*ir.Value {
	a, ok := in.Attr.(*ir.TopKAttr)
	x := in.Args[0]
	if !ok || a.K != 1 || x.Type.Rank() == 0 || x.Type.Shape[x.Type.Rank()-1].Size != 1 ||
		len(in.Results) != 2 || !x.Type.Equal(in.Results[0].Type) {
		return nil
	}
	return []*ir.Value{x, r.splat(in.Results[1].Type, 0)}
}

// Pattern: transpose(X) {perm=[0,1,...]} -> X
func transposeIdentity(r *rewriter, in *ir.Instr) *ir.Value {
	if a, ok := in.Attr.(*ir.PermAttr); ok && isIdentity(a.Perm) {
		return sameType(in.Args[0], in)
	}
	return nil
}

// Pattern: transpose(transpose(X) {perm=P}) {perm=Q} -> transpose(X) {perm=P∘Q}   (result dim i is X's dim P[Q[i]])
// Pattern: transpose(transpose(X) {perm=P}) {perm=Q} -> X                          (when P∘Q is the identity)
func transposeTranspose(r *rewriter, in *ir.Instr) *ir.Value {
	d := in.Args[0].Def
	if d == nil || d.Op != ir.OpTranspose {
		return nil
	}
	p, ok1 := d.Attr.(*ir.PermAttr)
	q, ok2 := in.Attr.(*ir.PermAttr)
	if !ok1 || !ok2 {
		return nil
	}
	perm := make([]int64, len(q.Perm))
	for i, j := range q.Perm {
		perm[i] = p.Perm[j]
	}
	x := d.Args[0]
	if isIdentity(perm) {
		return sameType(x, in)
	}
	t := in.Result().Type
	return r.builder().Typed(ir.OpTranspose, &ir.PermAttr{Perm: perm}, &t, x)
}

// Pattern: reshape(X) : typeof(X) -> X
func reshapeNoop(r *rewriter, in *ir.Instr) *ir.Value {
	return sameType(in.Args[0], in)
}

// Pattern: reshape(reshape(X) : T1) : T2 -> reshape(X) : T2   (or X when T2 is X's type)
func reshapeReshape(r *rewriter, in *ir.Instr) *ir.Value {
	d := in.Args[0].Def
	if d == nil || d.Op != ir.OpReshape {
		return nil
	}
	x := d.Args[0]
	if v := sameType(x, in); v != nil {
		return v
	}
	t := in.Result().Type
	return r.builder().Typed(ir.OpReshape, nil, &t, x)
}

// Pattern: broadcast(X) {dims=[0,1,...]} : typeof(X) -> X
func broadcastNoop(r *rewriter, in *ir.Instr) *ir.Value {
	if a, ok := in.Attr.(*ir.DimsAttr); ok && isIdentity(a.Dims) {
		return sameType(in.Args[0], in)
	}
	return nil
}

// Pattern: convert(X) : typeof(X) -> X
func convertNoop(r *rewriter, in *ir.Instr) *ir.Value {
	return sameType(in.Args[0], in)
}

// takeOfConvert converts the rows taken instead of the whole table: a
// model's embedding lookup in a bf16 checkpoint converted all 151936 rows
// of the table to f32 on every step to take one. take only moves elements
// and convert maps each one alone, so the two commute exactly for every
// dtype; the rule fires only when the take has no more elements than the
// table, so it never converts more. The convert stays for its other users.
// Pattern: take(convert(X), I) {axis=A} -> convert(take(X, I) {axis=A})   (static, |result| <= |X|)
func takeOfConvert(r *rewriter, in *ir.Instr) *ir.Value {
	c := in.Args[0].Def
	if c == nil || c.Op != ir.OpConvert {
		return nil
	}
	x, res := c.Args[0], in.Results[0].Type
	nx, okx := x.Type.NumElements()
	nr, okr := res.NumElements()
	if !okx || !okr || nr > nx {
		return nil
	}
	narrow := res
	narrow.DType = x.Type.DType
	b := r.builder()
	t := b.Typed(ir.OpTake, in.Attr, &narrow, x, in.Args[1])
	return b.Typed(ir.OpConvert, nil, &res, t)
}

// Pattern: slice(X) {start=[0,...], limit=shape(X)} -> X   (a stride only matters on a dimension of size above 1, where the equal result type rules it out)
func sliceNoop(r *rewriter, in *ir.Instr) *ir.Value {
	a, ok := in.Attr.(*ir.SliceAttr)
	if !ok {
		return nil
	}
	for _, s := range a.Start {
		if s != 0 {
			return nil
		}
	}
	return sameType(in.Args[0], in)
}
