package passes

import (
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// contract puts contractions in one form, dot_general, as XLA's algebraic
// simplifier does: a product summed over axes, however its operands were
// broadcast, transposed or reshaped into place, becomes a dot_general of the
// unbroadcast operands, and transposes of a dot_general's operands or result
// fold into its dimension numbers. Passes that look for matmuls (moe-route)
// then see one spelling of each.
//
// Numbers: reduce_sum(mul(a, b)) rounds each product to the dtype and sums;
// dot_general may sum in any order and, on the reference executor,
// accumulates exact products (docs/ops.md). The two agree to rounding only,
// so the product rule is limited to f32 and f64, where that is one rounding
// of each product, the difference moe-route already allows itself, and to
// integers, where both wrap to the same value. f16 and bf16 products are
// left alone: their rounding to 8 or 11 bits is part of what the program
// says. The transpose rules move no arithmetic and hold for every dtype.
var contractRules = []rule{
	{"reduce-of-product", []ir.Op{ir.OpReduceSum}, reduceOfProduct, nil},
	{"dot-of-transpose", []ir.Op{ir.OpDotGeneral}, dotOfTranspose, nil},
	{"transpose-of-dot", []ir.Op{ir.OpTranspose}, transposeOfDot, nil},
	// The product rule's transpose may meet one the program wrote (a sum
	// over experts [H,T] transposed back to [T,H]): composing them is
	// canonicalize's rule, needed here because nothing canonicalizes between
	// contract and moe-route.
	{"transpose-transpose", []ir.Op{ir.OpTranspose}, transposeTranspose, nil},
	{"transpose-identity", []ir.Op{ir.OpTranspose}, transposeIdentity, nil},
}

var contractIndex = indexRules(contractRules)

func contract(f *ir.Func, c *Context) (bool, error) {
	return sweepRules(f, c, "contract", contractIndex)
}

// maxViewDepth bounds the walk through broadcasts, transposes and reshapes.
const maxViewDepth = 8

// view says that a value v is x moved into v's shape: x's dim k is v's dim
// dims[k], and every element of v along the dims no k names repeats x. A
// dims[k] of -1 is a unit dim of x that v does not have (a reshape drops
// it, or a broadcast expands it).
type view struct {
	x    *ir.Value
	dims []int64
}

// viewOf sees through broadcasts, transposes and reshapes that only add or
// remove unit dims, down to the value they move.
func viewOf(v *ir.Value, depth int) view {
	d := v.Def
	if d == nil || depth >= maxViewDepth || len(d.Args) != 1 {
		return identityView(v)
	}
	var step func(k int64) int64 // the operand's dim k -> v's dim
	switch d.Op {
	case ir.OpBroadcast:
		bd := d.Attr.(*ir.DimsAttr).Dims
		in := d.Args[0].Type.Shape
		step = func(k int64) int64 {
			if in[k].Size == 1 && v.Type.Shape[bd[k]].Size != 1 {
				return -1
			}
			return bd[k]
		}
	case ir.OpTranspose:
		perm := d.Attr.(*ir.PermAttr).Perm
		inv := make([]int64, len(perm))
		for i, p := range perm {
			inv[p] = int64(i)
		}
		step = func(k int64) int64 { return inv[k] }
	case ir.OpReshape:
		m, ok := unitReshape(d.Args[0].Type, v.Type)
		if !ok {
			return identityView(v)
		}
		step = func(k int64) int64 { return m[k] }
	default:
		return identityView(v)
	}
	inner := viewOf(d.Args[0], depth+1)
	for k, j := range inner.dims {
		if j >= 0 {
			inner.dims[k] = step(j)
		}
	}
	return inner
}

func identityView(v *ir.Value) view {
	dims := make([]int64, v.Type.Rank())
	for i := range dims {
		dims[i] = int64(i)
	}
	return view{x: v, dims: dims}
}

// unitReshape maps the dims of from to those of to when the reshape only
// inserts or removes unit dims (-1 for a unit dim of from that goes).
func unitReshape(from, to ir.Type) ([]int64, bool) {
	if !from.IsStatic() || !to.IsStatic() {
		return nil, false
	}
	a, b := from.Dims(), to.Dims()
	m := make([]int64, len(a))
	j := 0
	for i := range a {
		switch {
		case j < len(b) && a[i] == b[j]:
			m[i] = int64(j)
			j++
		case a[i] == 1:
			m[i] = -1
		default:
			for j < len(b) && b[j] == 1 {
				j++
			}
			if j == len(b) || a[i] != b[j] {
				return nil, false
			}
			m[i] = int64(j)
			j++
		}
	}
	for ; j < len(b); j++ {
		if b[j] != 1 {
			return nil, false
		}
	}
	return m, true
}

// contractible: the dtypes whose products the product rule may re-associate
// (not complex: dot_general's kernels are real).
func contractible(dt ir.DType) bool {
	return dt == ir.F32 || dt == ir.F64 || (!dt.IsFloat() && dt != ir.I1 && !dt.IsComplex())
}

// Pattern: reduce_sum(mul(A, B), axes=R) -> dot_general(a, b) {batch: the dims of both not in R, contract: R}
//
//	where A and B are a and b seen through broadcasts, transposes and unit reshapes (viewOf), every
//	dim in R is a dim of both, and some kept dim is a dim of one only; a transpose follows when the
//	kept dims are in neither operand order's dot order, a reshape when unit dims or keepdims remain
//
// A product used elsewhere too is left alone: the rewrite would compute it twice.
func reduceOfProduct(r *rewriter, in *ir.Instr) *ir.Value {
	m := in.Args[0].Def
	if m == nil || m.Op != ir.OpMul || !contractible(m.Result().Type.DType) || !m.Result().Type.IsStatic() ||
		r.s.uses.Count(m.Result()) != 1 {
		return nil
	}
	p, ok := planContraction(m, in.Attr.(*ir.AxesAttr).Axes)
	if !ok {
		return nil
	}
	return p.build(r, in.Result().Type)
}

// contraction is a planned reduce-of-product: the dot of lhs and rhs (their
// x's dims named by attr), then a transpose by perm when perm is not nil.
type contraction struct {
	lhs, rhs view
	attr     ir.DotAttr
	perm     []int64
}

// planContraction sorts the product's dims into batch, contracting and free
// dims and chooses the operand order whose dot order is the kept dims'.
func planContraction(m *ir.Instr, axes []int64) (*contraction, bool) {
	s := m.Result().Type.Dims()
	a, b := viewOf(m.Args[0], 0), viewOf(m.Args[1], 0)
	inA, inB := positions(a, len(s)), positions(b, len(s))
	summed := make([]bool, len(s))
	for _, x := range axes {
		summed[x] = true
	}
	var batch, contr, kept []int64
	free := false
	for j := range s {
		both := inA[j] >= 0 && inB[j] >= 0
		one := (inA[j] >= 0) != (inB[j] >= 0)
		switch {
		case summed[j] && both:
			contr = append(contr, int64(j))
		case summed[j] && (one || s[j] != 1):
			return nil, false // a sum over one operand's dim, or over a broadcast dim
		case summed[j]: // a unit dim of neither: summing it changes nothing
		case both:
			batch = append(batch, int64(j))
			kept = append(kept, int64(j))
		case one:
			free = true
			kept = append(kept, int64(j))
		case s[j] != 1:
			return nil, false // both operands broadcast along it
		}
	}
	if len(contr) == 0 || !free {
		return nil, false
	}
	p := &contraction{lhs: a, rhs: b}
	order := dotOrder(batch, a, b, inA, inB)
	if swapped := dotOrder(batch, b, a, inB, inA); !slices.Equal(order, kept) && slices.Equal(swapped, kept) {
		p.lhs, p.rhs, inA, inB, order = b, a, inB, inA, swapped
	}
	p.attr = ir.DotAttr{LhsBatch: pick(inA, batch), RhsBatch: pick(inB, batch), LhsContract: pick(inA, contr), RhsContract: pick(inB, contr)}
	if !slices.Equal(order, kept) {
		p.perm = make([]int64, len(kept))
		for i, j := range kept {
			p.perm[i] = int64(slices.Index(order, j))
		}
	}
	return p, true
}

// positions inverts a view: for each of n dims, the dim of x it is, or -1.
func positions(v view, n int) []int64 {
	pos := make([]int64, n)
	for i := range pos {
		pos[i] = -1
	}
	for k, j := range v.dims {
		if j >= 0 {
			pos[j] = int64(k)
		}
	}
	return pos
}

// pick maps the product's dims js to an operand's dims.
func pick(pos, js []int64) []int64 {
	out := make([]int64, len(js))
	for i, j := range js {
		out[i] = pos[j]
	}
	return out
}

// dotOrder lists, as the product's dims, the result dims of dot(l, r):
// batch, then each operand's free dims in its own order.
func dotOrder(batch []int64, l, r view, inL, inR []int64) []int64 {
	out := slices.Clone(batch)
	for _, side := range []struct {
		v     view
		other []int64
	}{{l, inR}, {r, inL}} {
		for _, j := range side.v.dims {
			if j >= 0 && side.other[j] < 0 {
				out = append(out, j)
			}
		}
	}
	return out
}

// build emits the planned dot (and transpose, and reshape) before in.
func (p *contraction) build(r *rewriter, result ir.Type) *ir.Value {
	b := r.builder()
	attr := p.attr
	lhs := dropUnitDims(b, p.lhs, attr.LhsBatch, attr.LhsContract)
	rhs := dropUnitDims(b, p.rhs, attr.RhsBatch, attr.RhsContract)
	v := b.Op1(ir.OpDotGeneral, &attr, lhs, rhs)
	if p.perm != nil {
		v = b.Op1(ir.OpTranspose, &ir.PermAttr{Perm: p.perm}, v)
	}
	if !v.Type.Equal(result) {
		v = b.Typed(ir.OpReshape, nil, &result, v)
	}
	return v
}

// dropUnitDims returns the view's x without the unit dims the view does not
// place (a reshape), renumbering the dim lists batch and contract in place.
func dropUnitDims(b *ir.Builder, v view, batch, contract []int64) *ir.Value {
	if !slices.Contains(v.dims, -1) {
		return v.x
	}
	renumber := make([]int64, len(v.dims))
	var shape []ir.Dim
	for k, j := range v.dims {
		renumber[k] = int64(len(shape))
		if j >= 0 {
			shape = append(shape, v.x.Type.Shape[k])
		}
	}
	for _, list := range [][]int64{batch, contract} {
		for i, k := range list {
			list[i] = renumber[k]
		}
	}
	t := v.x.Type.WithShape(shape)
	return b.Typed(ir.OpReshape, nil, &t, v.x)
}

// Pattern: dot_general(transpose(x, perm), y) -> dot_general(x, y) with x's batch and contracting dims perm[d]
//
//	when the free dims keep their order (either operand)
func dotOfTranspose(r *rewriter, in *ir.Instr) *ir.Value {
	a := *in.Attr.(*ir.DotAttr)
	args := slices.Clone(in.Args)
	folded := false
	for side, x := range in.Args {
		tr := x.Def
		if tr == nil || tr.Op != ir.OpTranspose || tr.Block != in.Block {
			continue
		}
		batch, contr := &a.LhsBatch, &a.LhsContract
		if side == 1 {
			batch, contr = &a.RhsBatch, &a.RhsContract
		}
		nb, nc, ok := permuteDotDims(tr.Attr.(*ir.PermAttr).Perm, *batch, *contr)
		if !ok {
			continue
		}
		*batch, *contr, args[side], folded = nb, nc, tr.Args[0], true
	}
	if !folded {
		return nil
	}
	t := in.Result().Type
	return r.builder().Typed(ir.OpDotGeneral, &a, &t, args...)
}

// Pattern: transpose(dot_general(a, b), perm) -> dot_general(a, b) with the batch dims reordered,
//
//	or dot_general(b, a), when perm keeps each operand's free dims in order
//
// A dot used elsewhere too is left alone: the rewrite would compute it twice.
func transposeOfDot(r *rewriter, in *ir.Instr) *ir.Value {
	d := in.Args[0].Def
	if d == nil || d.Op != ir.OpDotGeneral || r.s.uses.Count(d.Result()) != 1 {
		return nil
	}
	a := d.Attr.(*ir.DotAttr)
	perm := in.Attr.(*ir.PermAttr).Perm
	nb := len(a.LhsBatch)
	nl := int(d.Args[0].Type.Rank()) - nb - len(a.LhsContract)
	n := len(perm)
	na := ir.DotAttr{LhsBatch: make([]int64, nb), RhsBatch: make([]int64, nb), LhsContract: a.LhsContract, RhsContract: a.RhsContract}
	for i := 0; i < nb; i++ {
		if perm[i] >= int64(nb) {
			return nil
		}
		na.LhsBatch[i], na.RhsBatch[i] = a.LhsBatch[perm[i]], a.RhsBatch[perm[i]]
	}
	args := slices.Clone(d.Args)
	switch rest := perm[nb:]; {
	case isRun(rest, nb, n):
	case isRun(rest[:n-nb-nl], nb+nl, n) && isRun(rest[n-nb-nl:], nb, nb+nl):
		args[0], args[1] = args[1], args[0]
		na.LhsBatch, na.RhsBatch = na.RhsBatch, na.LhsBatch
		na.LhsContract, na.RhsContract = a.RhsContract, a.LhsContract
	default:
		return nil
	}
	t := in.Result().Type
	return r.builder().Typed(ir.OpDotGeneral, &na, &t, args...)
}

// isRun reports whether p is lo, lo+1, ..., hi-1.
func isRun(p []int64, lo, hi int) bool {
	if len(p) != hi-lo {
		return false
	}
	for i, x := range p {
		if x != int64(lo+i) {
			return false
		}
	}
	return true
}
