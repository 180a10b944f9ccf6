package passes

import (
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// moe-route finds mixture-of-experts layers computed densely (every expert on
// every token, then a sum over experts weighted by combine weights) and
// rewrites each into the dropless grouped form: the routed rows are sorted by
// expert, every projection is a ragged_dot that reads each expert's weights
// once, and the rows are unsorted and summed over the k choices.
//
// The rewrite is correct only when combine[t,e] is zero for every expert e
// that is not among token t's top-k ids, so the match keys on that proof, not
// on one spelling: the combine weights must be built from the indices of a
// top_k over the E experts through a one-hot (one_hot, or a compare of an iota
// with the indices), or be a dense [T,E] tensor masked by such a one-hot.
// Whatever computes the weights (softmax then top-k, with or without
// renormalisation, top-k of logits then softmax, sigmoid scores) is kept as it
// is. A soft MoE or a dense mixture has no such proof and is left alone.
//
// Each expert's FFN is an elementwise expression (SwiGLU, GeGLU, GELU, ReLU,
// ...) of per-expert projections of the same tokens x [T,H] by stacked
// weights [E,H,F] or [E,F,H] (either operand order), followed by a down
// projection by [E,F,H] or [E,H,F] batched over experts. Anything added beside
// the routed sum (a shared expert) is outside the match and stays dense.
//
// The pass runs inside while and case regions as in a function (Pass.Regions):
// a region is closed, so every value a match reaches (tokens, ids, weights)
// is the region's own, and an expert weight may be any value of the stacked
// shape there: a region parameter carried in, or a row of a stack of layers
// ([L,E,…], read with dynamic_slice and reshaped), as models' layer loops
// write it. The rewrite builds the grouped form beside the root, in its
// region, so a MoE layer in a loop's body stays in the body.
//
// Every contraction is matched in one form, dot_general: the contract pass,
// which runs before this one, turns products summed over an axis (however
// broadcast, transposed or reshaped) into dot_generals and folds transposes
// into their dimension numbers, so each sum over experts, one-hot weighting
// and projection has one spelling here, whatever its dims' order.

// moeLayer is one matched layer: everything the rewrite needs.
type moeLayer struct {
	root    *ir.Instr                     // the sum over experts; its result is replaced
	x       *ir.Value                     // the tokens [T,H]
	ids     *ir.Value                     // expert ids [T,K] (top_k indices over E experts)
	weights func(b *ir.Builder) *ir.Value // builds the [T,K] weights
	act     *ir.Value                     // the expert activation [.., F], roles actRoles
	roles   []byte                        // roles of act's dims, a permutation of "TEF"
	leaves  map[*ir.Value]projection
	down    projection // the down projection's weights
	e, k    int64
}

// projection is a stack of expert weights w [E,a,b] contracted on dim
// contract (1 or 2).
type projection struct {
	w        *ir.Value
	contract int
}

// Pattern: dot_general(combine[T,E], experts batch T contract E) -> ragged_dot form   (either operand order, experts' dims in any order)
func moeRoute(f *ir.Func, c *Context) (bool, error) {
	changed := false
	for _, in := range slices.Clone(f.Body.Instrs) {
		l, rule := matchMoE(in)
		if l == nil {
			continue
		}
		rewriteMoE(f, l)
		c.Count(rule)
		changed = true
	}
	return changed, nil
}

// matchMoE matches a layer rooted at in, naming the rule that matched.
func matchMoE(in *ir.Instr) (*moeLayer, string) {
	if len(in.Results) != 1 || !in.Result().Type.DType.IsFloat() || in.Result().Type.Rank() != 2 {
		return nil, ""
	}
	var l *moeLayer
	rule := ""
	switch in.Op {
	case ir.OpDotGeneral:
		l, rule = matchCombineDot(in), "combine-dot"
	case ir.OpAdd:
		l, rule = matchPerExpertSum(in), "per-expert-sum"
	}
	if l == nil {
		return nil, ""
	}
	return l, rule
}

// matchCombineDot: dot_general of combine [T,E] and expert outputs (their
// dims T, E and H in any order), batched over T and contracted over E, in
// either operand order. contract makes every sum over experts this.
func matchCombineDot(in *ir.Instr) *moeLayer {
	a := in.Attr.(*ir.DotAttr)
	if len(a.LhsBatch) != 1 || len(a.LhsContract) != 1 {
		return nil
	}
	for _, swap := range []bool{false, true} {
		comb, eo := in.Args[0], in.Args[1]
		cb, cc, eb, ec := a.LhsBatch[0], a.LhsContract[0], a.RhsBatch[0], a.RhsContract[0]
		if swap {
			comb, eo = eo, comb
			cb, cc, eb, ec = eb, ec, cb, cc
		}
		if comb.Type.Rank() != 2 || cb != 0 || cc != 1 || eo.Type.Rank() != 3 {
			continue
		}
		l := matchExperts(eo)
		if l == nil || l.outRoles[eb] != 'T' || l.outRoles[ec] != 'E' {
			continue
		}
		return l.finish(in, comb) // [T,H]: batch, then the free dim of either operand
	}
	return nil
}

// expertsMatch is a matched expert computation before the combine is known.
type expertsMatch struct {
	moeLayer
	outRoles []byte // roles of the expert outputs' dims: a permutation of "ETH"
}

// finish checks combine against the experts and proves it sparse.
func (m *expertsMatch) finish(root *ir.Instr, comb *ir.Value) *moeLayer {
	l := m.moeLayer
	t := l.x.Type.Shape[0].Size
	if comb.Type.Dims()[0] != t || comb.Type.Dims()[1] != l.e || comb.Type.DType != root.Result().Type.DType {
		return nil
	}
	ids, weights, ok := sparseCombine(comb, l.e)
	if !ok || ids.Type.Dims()[0] != t {
		return nil
	}
	l.root, l.ids, l.weights = root, ids, weights
	l.k = ids.Type.Dims()[1]
	return &l
}

// matchExperts matches eo = down(act), or a transpose of it, where act is
// an elementwise expression of per-expert projections of one x, and down is
// batched over experts: dot_general(act, wd) or dot_general(wd, act).
func matchExperts(eo *ir.Value) *expertsMatch {
	if d := eo.Def; d != nil && d.Op == ir.OpTranspose {
		m := matchDownOrStacked(d.Args[0])
		if m != nil {
			perm := d.Attr.(*ir.PermAttr).Perm
			roles := make([]byte, len(perm))
			for i, p := range perm {
				roles[i] = m.outRoles[p]
			}
			m.outRoles = roles
		}
		return m
	}
	return matchDownOrStacked(eo)
}

func matchDownOrStacked(eo *ir.Value) *expertsMatch {
	if m := matchStacked(eo); m != nil {
		return m
	}
	return matchDown(eo)
}

// matchDown matches the down projection of matchExperts.
func matchDown(eo *ir.Value) *expertsMatch {
	d := eo.Def
	if d == nil || d.Op != ir.OpDotGeneral || eo.Type.Rank() != 3 {
		return nil
	}
	a := d.Attr.(*ir.DotAttr)
	if len(a.LhsBatch) != 1 || len(a.LhsContract) != 1 {
		return nil
	}
	for _, swap := range []bool{false, true} {
		act, wd := d.Args[0], d.Args[1]
		ab, ac, wb, wc := a.LhsBatch[0], a.LhsContract[0], a.RhsBatch[0], a.RhsContract[0]
		if swap {
			act, wd = wd, act
			ab, ac, wb, wc = wb, wc, ab, ac
		}
		if wd.Type.Rank() != 3 || wb != 0 || (wc != 1 && wc != 2) || act.Type.Rank() != 3 {
			continue
		}
		m := &expertsMatch{}
		if !m.matchAct(act) || m.roles[ab] != 'E' || m.roles[ac] != 'F' {
			continue
		}
		m.down = projection{w: wd, contract: int(wc)}
		if wd.Type.Dims()[0] != m.e || wd.Type.Dims()[wc] != act.Type.Dims()[ac] ||
			wd.Type.DType != act.Type.DType {
			continue
		}
		// Result dims: batch (E), act's free dim (T), wd's free dim (H); swapped,
		// wd's free dim comes before act's.
		m.outRoles = []byte("ETH")
		if swap {
			m.outRoles = []byte("EHT")
		}
		return m
	}
	return nil
}

// matchAct matches the expert activation: an elementwise expression whose
// leaves are per-expert projections of one x (all with the same dimension
// roles) and scalars.
func (m *expertsMatch) matchAct(act *ir.Value) bool {
	m.leaves = map[*ir.Value]projection{}
	m.act = act
	return walkAct(act, act.Type, 0, m.stackedLeaf) && len(m.leaves) > 0
}

// stackedLeaf records v when it is a projection by stacked weights
// (expertProjection) of the same x, with the same roles, as the others.
func (m *expertsMatch) stackedLeaf(v *ir.Value) (isLeaf, ok bool) {
	p, x, roles, found := transposedProjection(v)
	if !found {
		return false, true
	}
	e := p.w.Type.Dims()[0]
	switch {
	case m.x == nil:
		m.x, m.roles, m.e = x, roles, e
	case m.x != x || string(m.roles) != string(roles) || m.e != e:
		return true, false
	}
	m.leaves[v] = p
	return true, true
}

// maxActDepth bounds the expression walk: real activations are a few ops.
const maxActDepth = 16

// walkAct checks that v, of t's shape, is an elementwise expression whose
// leaves are scalars or values leaf accepts; leaf reports whether v is a
// leaf, and if so whether it is acceptable.
func walkAct(v *ir.Value, t ir.Type, depth int, leaf func(*ir.Value) (isLeaf, ok bool)) bool {
	if depth > maxActDepth {
		return false
	}
	if scalarLike(v) {
		return true
	}
	if !v.Type.SameShape(t) {
		return false
	}
	if isLeaf, ok := leaf(v); isLeaf {
		return ok
	}
	d := v.Def
	if d == nil || !d.Op.Info().Elementwise || len(d.Results) != 1 || d.Op == ir.OpCopy || len(d.Regions) > 0 {
		return false
	}
	for _, a := range d.Args {
		if !walkAct(a, t, depth+1, leaf) {
			return false
		}
	}
	return true
}

// scalarLike: a rank-0 value, a broadcast of one, or a splat constant; the
// rewrite can make it again at any shape.
func scalarLike(v *ir.Value) bool {
	if v.Type.Rank() == 0 {
		return true
	}
	d := v.Def
	if d == nil {
		return false
	}
	switch d.Op {
	case ir.OpBroadcast:
		return d.Args[0].Type.Rank() == 0
	case ir.OpConstant:
		return d.Attr.(*ir.ConstAttr).Value.Len() == 1
	}
	return false
}

// transposedProjection is expertProjection, or a transpose of one: contract
// leaves one after the dot_general where no operand order of a summed
// product gives the product's dim order.
func transposedProjection(v *ir.Value) (p projection, x *ir.Value, roles []byte, ok bool) {
	d := v.Def
	if d == nil || d.Op != ir.OpTranspose {
		return expertProjection(v)
	}
	p, x, inner, ok := expertProjection(d.Args[0])
	if !ok {
		return p, nil, nil, false
	}
	perm := d.Attr.(*ir.PermAttr).Perm
	roles = make([]byte, len(perm))
	for i, q := range perm {
		roles[i] = inner[q]
	}
	return p, x, roles, true
}

// expertProjection matches v = x·w for every expert: dot_general of tokens x
// [T,H] (contracted on H) and stacked weights w [E,H,F] or [E,F,H] (contracted
// on their H), in either order, or batched over experts with x broadcast to
// [E,T,H]. roles names v's dims: T tokens, E experts, F features.
func expertProjection(v *ir.Value) (p projection, x *ir.Value, roles []byte, ok bool) {
	d := v.Def
	if d == nil || d.Op != ir.OpDotGeneral || v.Type.Rank() != 3 {
		return p, nil, nil, false
	}
	a := d.Attr.(*ir.DotAttr)
	if len(a.LhsContract) != 1 || len(a.LhsBatch) > 1 {
		return p, nil, nil, false
	}
	for _, swap := range []bool{false, true} {
		xv, w := d.Args[0], d.Args[1]
		xc, wc := a.LhsContract[0], a.RhsContract[0]
		var xb, wb int64 = -1, -1
		if len(a.LhsBatch) == 1 {
			xb, wb = a.LhsBatch[0], a.RhsBatch[0]
		}
		if swap {
			xv, w, xc, wc, xb, wb = w, xv, wc, xc, wb, xb
		}
		if w.Type.Rank() != 3 || (wc != 1 && wc != 2) || xv.Type.DType != w.Type.DType {
			continue
		}
		p = projection{w: w, contract: int(wc)}
		if xb < 0 && xv.Type.Rank() == 2 && xc == 1 {
			// Result: lhs free then rhs free.
			if swap {
				return p, xv, []byte("EFT"), true
			}
			return p, xv, []byte("TEF"), true
		}
		if xb == 0 && wb == 0 && xc == 2 && xv.Def != nil && xv.Def.Op == ir.OpBroadcast {
			x0 := xv.Def.Args[0]
			if dims := xv.Def.Attr.(*ir.DimsAttr).Dims; x0.Type.Rank() == 2 && slices.Equal(dims, []int64{1, 2}) {
				if swap {
					return p, x0, []byte("EFT"), true
				}
				return p, x0, []byte("ETF"), true
			}
		}
	}
	return p, nil, nil, false
}

// sparseCombine proves comb [T,E] zero outside each token's top-k expert ids
// and returns those ids [T,K] and a builder of the weight of each choice
// [T,K]. The forms, each with its pattern:
//
// Pattern: dot_general(w[T,K], one_hot(ids)[T,K,E], batch T, contract K)   (either operand order)
// Pattern: mul(dense[T,E], reduce_sum|reduce_max(one_hot(ids), axes=[1]))
//
// (one_hot may be spelled as a compare of the ids with an iota.)
func sparseCombine(comb *ir.Value, e int64) (*ir.Value, func(*ir.Builder) *ir.Value, bool) {
	d := comb.Def
	if d == nil {
		return nil, nil, false
	}
	switch d.Op {
	case ir.OpDotGeneral:
		return combineDotOfOneHot(d, e)
	case ir.OpMul:
		for _, swap := range []bool{false, true} {
			dense, mask := d.Args[0], d.Args[1]
			if swap {
				dense, mask = mask, dense
			}
			if ids, ok := oneHotMask(mask, e); ok {
				return ids, gatherWeights(ids, dense, e), true
			}
		}
	}
	return nil, nil, false
}

// combineDotOfOneHot: w [T,K] contracted with one_hot(ids) [T,K,E] over K,
// batched over T, in either order.
func combineDotOfOneHot(d *ir.Instr, e int64) (*ir.Value, func(*ir.Builder) *ir.Value, bool) {
	a := d.Attr.(*ir.DotAttr)
	if !slices.Equal(a.LhsBatch, []int64{0}) || !slices.Equal(a.RhsBatch, []int64{0}) ||
		!slices.Equal(a.LhsContract, []int64{1}) || !slices.Equal(a.RhsContract, []int64{1}) {
		return nil, nil, false
	}
	for _, swap := range []bool{false, true} {
		w, oh := d.Args[0], d.Args[1]
		if swap {
			w, oh = oh, w
		}
		if ids, ok := oneHotIDs(oh, e); ok && w.Type.Rank() == 2 {
			return ids, func(*ir.Builder) *ir.Value { return w }, true
		}
	}
	return nil, nil, false
}

// oneHotMask: a [T,E] mask that is 1 exactly at each token's ids: the sum or
// the maximum over K of one_hot(ids). top_k's ids are distinct within a row,
// so both are 0 or 1.
func oneHotMask(v *ir.Value, e int64) (*ir.Value, bool) {
	d := v.Def
	if d == nil || (d.Op != ir.OpReduceSum && d.Op != ir.OpReduceMax) {
		return nil, false
	}
	ax := d.Attr.(*ir.AxesAttr)
	if !slices.Equal(ax.Axes, []int64{1}) || ax.KeepDims {
		return nil, false
	}
	return oneHotIDs(d.Args[0], e)
}

// oneHotIDs matches v [T,K,E] = one_hot(ids){depth=E}, or the same spelled
// convert(compare eq of the ids broadcast with an iota over the last axis),
// where ids are the indices of a top_k over E experts (so every id is a
// valid, distinct expert of its row).
func oneHotIDs(v *ir.Value, e int64) (*ir.Value, bool) {
	d := v.Def
	if d == nil || v.Type.Rank() != 3 || v.Type.Shape[2].Size != e {
		return nil, false
	}
	var ids *ir.Value
	switch d.Op {
	case ir.OpOneHot:
		ids = d.Args[0]
	case ir.OpConvert:
		ids = compareWithIota(d.Args[0])
	}
	if ids == nil || ids.Type.Rank() != 2 {
		return nil, false
	}
	tk := ids.Def
	if tk == nil || tk.Op != ir.OpTopK || tk.Results[1] != ids {
		return nil, false
	}
	xs := tk.Args[0].Type.Shape
	return ids, xs[len(xs)-1].Size == e
}

// compareWithIota returns ids when p is compare eq of broadcast(ids,
// dims=[0,1]) and an iota along axis 2, in either order.
func compareWithIota(p *ir.Value) *ir.Value {
	d := p.Def
	if d == nil || d.Op != ir.OpCompare || d.Attr.(*ir.CompareAttr).Dir != ir.CmpEQ {
		return nil
	}
	for _, swap := range []bool{false, true} {
		bc, io := d.Args[0], d.Args[1]
		if swap {
			bc, io = io, bc
		}
		if io.Def == nil || io.Def.Op != ir.OpIota || io.Def.Attr.(*ir.AxisAttr).Axis != 2 ||
			bc.Def == nil || bc.Def.Op != ir.OpBroadcast {
			continue
		}
		if slices.Equal(bc.Def.Attr.(*ir.DimsAttr).Dims, []int64{0, 1}) {
			return bc.Def.Args[0]
		}
	}
	return nil
}
