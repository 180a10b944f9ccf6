package models

import (
	"fmt"
	"math"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/tensor"
)

// stepIn is a step's input besides the weights. A step runs T new tokens of
// each of B rows through the model and writes their keys and values into
// the cache at slots pos … pos+T-1. Rows are left-padded: row b's tokens
// start at cache slot start[b], and its position (for rope) is slot −
// start[b]. Prefill is a step at pos 0 over the padded prompts; decode is a
// step of one token. Both have one signature whatever the prompt lengths
// and wherever in the cache they land.
type stepIn struct {
	tokens *tensor.Tensor   // i32 [B, T]
	start  *tensor.Tensor   // i32 [B]
	pos    *tensor.Tensor   // i32 []
	caches []*tensor.Tensor // keys then values of each cache layer (Model.CacheLayers), [B, KVH, Cap, D]
	// fresh says the cache is empty and pos is 0 (the Generator's
	// prefill): slots from T on hold nothing a token can see, so attention
	// reads slots [0, T) only instead of the whole capacity.
	fresh bool
	// unrollStacks runs each looped group as a Go loop over its stacks'
	// rows instead of a while op (loop): the loss asks for it, since
	// autodiff does not differentiate while yet.
	unrollStacks bool
	// bf16 keeps a looped layer's bf16 product weights bf16 (layerAt):
	// the step's products are bf16 (Model.F32Products unset).
	bf16 bool
	// routerAux also computes the routers' load-balancing loss of a model
	// whose training adds it (hf.Config.RouterAuxLoss; routerStats).
	routerAux bool
}

// forward runs one step: the logits of the last token of each row [B, V]
// (or of every token [B, T, V] with all) and the caches after the step; and
// with in.routerAux, for a model whose training adds it, the routers'
// load-balancing loss (f32 []; else nil). Each looped group of layers is
// one while op (loop); the rope tables and masks are computed once, before
// any loop, and carried into them.
func forward(c *hf.Config, groups []group, w *weights, in stepIn, all bool) (logits *tensor.Tensor, caches []*tensor.Tensor, aux *tensor.Tensor) {
	s := in.tokens.Shape()
	B, T := s[0], s[1]
	x := toF32(w.Embed.Take(in.tokens, 0)) // a bf16 embedding kept bf16 (bind): its rows widened
	if c.EmbedScale != 1 {
		x = x.Mul(scalar(c.EmbedScale))
	}
	st := &stepState{c: c, in: in, refs: cacheRefs(c, groups), caches: append([]*tensor.Tensor(nil), in.caches...)}
	if c.PerLayer != nil {
		st.perLayer = perLayerInputs(c, w, in.tokens, x)
	}
	st.tables(B, T)
	if in.routerAux {
		st.router = newRouterStats(c)
	}
	for gi, g := range groups {
		if g.looped() {
			x = st.loop(g, w.Stacks[gi], x)
			continue
		}
		x = st.unrolled(g.start, &w.Layers[g.start], x)
	}

	x = rmsNorm(x, w.Norm, c.RMSNormEps)
	if !all {
		x = x.Slice([]int64{0, T - 1, 0}, []int64{B, T, int64(c.Hidden)}, nil).Reshape(B, int64(c.Hidden))
	}
	logits = linear(x, w.LMHead)
	if s := c.LogitScale; s != 0 && s != 1 {
		logits = logits.Mul(scalar(1 / s))
	}
	if sc := c.FinalSoftcap; sc != 0 {
		logits = logits.Mul(scalar(1 / sc)).Tanh().Mul(scalar(sc))
	}
	if st.router != nil {
		aux = st.router.loss(c, B*T)
	}
	return logits, st.caches, aux
}

// stepState is what a step's layers share: its input, the masks and rope
// tables, the per-layer inputs, and the caches as the layers update them.
type stepState struct {
	c        *hf.Config
	in       stepIn
	refs     []cacheRef
	caches   []*tensor.Tensor
	perLayer *tensor.Tensor // Gemma 4's [B, T, layers, P], or nil
	router   *routerStats   // the load-balancing loss's sums so far, or nil
	masks    map[int]*tensor.Tensor
	rope     map[string][2]*tensor.Tensor // by fmt.Sprint of the layer's hf.Rope (LongRoPE's factors make it no map key)
}

// tables makes every layer's mask and rope tables, once per window and
// rope, outside any loop.
func (st *stepState) tables(B, T int64) {
	slot := tensor.Iota(ir.I32, 0, T).Add(st.in.pos)               // [T]
	positions := slot.Reshape(1, T).Sub(st.in.start.Reshape(B, 1)) // [B, T]
	capacity := st.in.caches[0].Shape()[len(st.in.caches[0].Shape())-2]
	st.masks, st.rope = map[int]*tensor.Tensor{}, map[string][2]*tensor.Tensor{}
	for _, l := range st.c.Layers {
		if st.masks[window(l)] == nil {
			st.masks[window(l)] = mask(slot, st.in.start, capacity, window(l))
		}
		if _, ok := st.rope[fmt.Sprint(l.Rope)]; !ok {
			cos, sin := rotary(l.Rope, positions)
			st.rope[fmt.Sprint(l.Rope)] = [2]*tensor.Tensor{cos, sin}
		}
	}
}

func window(l hf.Layer) int {
	if l.Sliding {
		return l.Window
	}
	return 0
}

// attnIn is layer i's attention input over the cache k, v (the layer's
// [B, KVH, Cap, D]).
func (st *stepState) attnIn(i int, k, v *tensor.Tensor) attnIn {
	l := st.c.Layers[i]
	t := st.rope[fmt.Sprint(l.Rope)]
	return attnIn{cos: t[0], sin: t[1], mask: st.masks[window(l)], pos: st.in.pos,
		k: k, v: v, shared: l.KVFrom >= 0, fresh: st.in.fresh}
}

// layer runs layer i's block (its family's) on x; li is its per-layer
// input [B, T, P] or nil.
func (st *stepState) layer(i int, lw *layerWeights, x *tensor.Tensor, ai attnIn, li *tensor.Tensor) (out, k, v *tensor.Tensor) {
	c, l := st.c, st.c.Layers[i]
	switch {
	case c.Gemma():
		return gemmaLayer(c, l, lw, x, ai, li)
	case c.Arch == "olmo2":
		return olmoLayer(c, l, lw, x, ai)
	}
	return qwenLayer(c, l, lw, x, ai, st.router)
}

// perLayerAt is layer i's per-layer input [B, T, P] (i an int or an i32[]
// tensor), or nil.
func (st *stepState) perLayerAt(i any) *tensor.Tensor {
	if st.perLayer == nil {
		return nil
	}
	s := st.perLayer.Shape()
	B, T, P := s[0], s[1], s[3]
	at, ok := i.(*tensor.Tensor)
	if !ok {
		at = tensor.Scalar(float64(i.(int)), ir.I32)
	}
	zero := tensor.Scalar(0, ir.I32)
	return st.perLayer.DynamicSlice([]*tensor.Tensor{zero, zero, at, zero}, []int64{B, T, 1, P}).Reshape(B, T, P)
}

// unrolled runs layer i, updating its cache entry (or reading its source's
// when it shares keys and values, from the source's stack row if looped).
func (st *stepState) unrolled(i int, lw *layerWeights, x *tensor.Tensor) *tensor.Tensor {
	r := st.refs[i]
	k, v := st.caches[2*r.entry], st.caches[2*r.entry+1]
	if r.row >= 0 {
		k, v = row{n: r.row}.of(k), row{n: r.row}.of(v)
	}
	x, k, v = st.layer(i, lw, x, st.attnIn(i, k, v), st.perLayerAt(i))
	if st.c.Layers[i].KVFrom < 0 {
		st.caches[2*r.entry], st.caches[2*r.entry+1] = k, v
	}
	return x
}

// loop runs group g's trips, each st.trip: the g.period layers of its
// body, each reading its weights' row and writing its new keys and values
// into its stacked cache. It is one while op carrying the trip, x and the
// group's stacked caches; or, when the step unrolls the stacks
// (stepIn.unrollStacks), a Go loop over the trips reading the rows with
// static slices, which autodiff differentiates (it refuses while).
func (st *stepState) loop(g group, stacks []layerWeights, x *tensor.Tensor) *tensor.Tensor {
	entries := make([]int, g.period)
	cv := []*tensor.Tensor{x}
	for s := range g.period {
		entries[s] = st.refs[g.layer(s, 0)].entry
		cv = append(cv, st.caches[2*entries[s]], st.caches[2*entries[s]+1])
	}
	cv = st.router.carry(cv) // last, after the caches
	if st.in.unrollStacks {
		for it := range g.count {
			cv = st.trip(g, stacks, row{n: it}, cv)
		}
	} else {
		cv = tensor.While(func(c []*tensor.Tensor) *tensor.Tensor {
			return c[0].Lt(tensor.Scalar(float64(g.count), ir.I32))
		}, func(c []*tensor.Tensor) []*tensor.Tensor {
			return append([]*tensor.Tensor{c[0].Add(tensor.Scalar(1, ir.I32))}, st.trip(g, stacks, row{at: c[0]}, c[1:])...)
		}, append([]*tensor.Tensor{tensor.Scalar(0, ir.I32)}, cv...)...)[1:]
	}
	for s, e := range entries {
		st.caches[2*e], st.caches[2*e+1] = cv[1+2*s], cv[2+2*s]
	}
	st.router.uncarry(cv)
	return cv[0]
}

// trip runs trip r of group g on cv (x, then each slot's stacked keys and
// values, then the router's sums when the step counts them) and returns cv
// after it.
func (st *stepState) trip(g group, stacks []layerWeights, r row, cv []*tensor.Tensor) []*tensor.Tensor {
	x := cv[0]
	st.router.uncarry(cv)
	next := append([]*tensor.Tensor{nil}, cv[1:]...)
	for s := range g.period {
		i := g.layer(s, 0) // the slot's facts: every trip's layer has them
		lw := layerAt(&stacks[s], r, st.c.NormOffset, st.in.bf16)
		ks, vs := next[1+2*s], next[2+2*s]
		ai := st.attnIn(i, nil, nil) // the cache comes from store
		ai.store = func(kn, vn *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor) {
			ks, vs = storeRow(ks, kn, r.index(), st.in.pos), storeRow(vs, vn, r.index(), st.in.pos)
			return r.of(ks), r.of(vs)
		}
		x, _, _ = st.layer(i, lw, x, ai, st.perLayerAt(r.layer(g, s)))
		next[1+2*s], next[2+2*s] = ks, vs
	}
	next[0] = x
	if r := st.router; r != nil { // in carry's places
		next[len(next)-2], next[len(next)-1] = r.probs, r.picks
	}
	return next
}

// row is a row of stacked tensors [count, …]: at (an i32[] tensor) inside a
// while's body, read with dynamic_slice; or, when at is nil, the static row
// n, read with slice (whose gradient is a pad).
type row struct {
	at *tensor.Tensor
	n  int
}

// of is the row of t.
func (r row) of(t *tensor.Tensor) *tensor.Tensor {
	s := t.Shape()
	if r.at != nil {
		return t.DynamicSlice(rowStarts(r.at, len(s)), append([]int64{1}, s[1:]...)).Reshape(s[1:]...)
	}
	lo := make([]int64, len(s))
	lo[0] = int64(r.n)
	hi := append([]int64{int64(r.n) + 1}, s[1:]...)
	return t.Slice(lo, hi, nil).Reshape(s[1:]...)
}

// index is the row as an i32[] tensor.
func (r row) index() *tensor.Tensor {
	if r.at != nil {
		return r.at
	}
	return tensor.Scalar(float64(r.n), ir.I32)
}

// layer is the layer that slot s of group g is in this row's trip: an int,
// or an i32[] tensor inside a while (perLayerAt takes either).
func (r row) layer(g group, s int) any {
	if r.at != nil {
		return r.at.Mul(tensor.Scalar(float64(g.period), ir.I32)).Add(tensor.Scalar(float64(g.layer(s, 0)), ir.I32))
	}
	return g.layer(s, r.n)
}

// storeRow writes a step's keys or values [B, KVH, T, D] into row it of a
// stacked cache at slot pos, in the cache's dtype.
func storeRow(t, kv, it, pos *tensor.Tensor) *tensor.Tensor {
	zero := tensor.Scalar(0, ir.I32)
	s := kv.Shape()
	kv = asDType(kv, t.DType()).Reshape(1, s[0], s[1], s[2], s[3])
	return t.DynamicUpdateSlice(kv, []*tensor.Tensor{it, zero, zero, pos, zero})
}

// mask says which cache slots each token of the step sees [B, T, Cap]: slot
// j is visible from the token at slot i of row b when start[b] ≤ j ≤ i and,
// in a sliding layer, i − j < window. A padding token (i < start[b]) sees
// only itself, so that its row of scores is never empty.
func mask(slot, start *tensor.Tensor, capacity int64, window int) *tensor.Tensor {
	T, B := slot.Shape()[0], start.Shape()[0]
	// An iota made in its final shape: a trace records it as an iota op,
	// whereas a reshaped one would be captured element by element (a
	// constant the size of the cache in every decode program).
	j := tensor.Iota(ir.I32, 2, 1, 1, capacity)
	i := slot.Reshape(1, T, 1)
	causal := j.Le(i).And(j.Ge(start.Reshape(B, 1, 1)))
	if window > 0 {
		causal = causal.And(i.Sub(j).Lt(tensor.Scalar(float64(window), ir.I32)))
	}
	return causal.Or(j.Eq(i)).BroadcastTo(B, T, capacity)
}

// qwenLayer is Qwen3DecoderLayer / Qwen3MoeDecoderLayer: pre-norm attention
// and MLP (or MoE, whose routing stats counts when not nil), both residual.
func qwenLayer(c *hf.Config, l hf.Layer, w *layerWeights, x *tensor.Tensor, ai attnIn, stats *routerStats) (out, k, v *tensor.Tensor) {
	// Granite scales each branch before the residual add.
	branch := func(b *tensor.Tensor) *tensor.Tensor {
		if r := c.ResidualScale; r != 0 && r != 1 {
			return b.Mul(scalar(r))
		}
		return b
	}
	a, k, v := attention(c, l, w, rmsNorm(x, w.AttnNorm, c.RMSNormEps), ai)
	x = x.Add(branch(a))
	h := rmsNorm(x, w.MLPNorm, c.RMSNormEps)
	if l.MoE {
		s := h.Shape()
		flat := h.Reshape(s[0]*s[1], s[2])
		return x.Add(branch(moe(c, w, flat, flat, stats).Reshape(s...))), k, v
	}
	return x.Add(branch(mlp(c, w, h))), k, v
}

// olmoLayer is Olmo2DecoderLayer: attention and MLP without a norm before
// them, each normed after, both residual.
func olmoLayer(c *hf.Config, l hf.Layer, w *layerWeights, x *tensor.Tensor, ai attnIn) (out, k, v *tensor.Tensor) {
	a, k, v := attention(c, l, w, x, ai)
	x = x.Add(rmsNorm(a, w.PostAttnNorm, c.RMSNormEps))
	return x.Add(rmsNorm(mlp(c, w, x), w.PostMLPNorm, c.RMSNormEps)), k, v
}

// gemmaLayer is Gemma4TextDecoderLayer (and Gemma3DecoderLayer, which has
// no MoE block, per-layer input or layer scalar): attention with a
// post-norm; the MLP and, beside it, the MoE block, each normed, summed and
// post-normed; the per-layer input; the layer scalar.
func gemmaLayer(c *hf.Config, l hf.Layer, w *layerWeights, x *tensor.Tensor, ai attnIn, perLayer *tensor.Tensor) (out, k, v *tensor.Tensor) {
	eps := c.RMSNormEps
	a, k, v := attention(c, l, w, rmsNorm(x, w.AttnNorm, eps), ai)
	x = x.Add(rmsNorm(a, w.PostAttnNorm, eps))

	h := mlp(c, w, rmsNorm(x, w.MLPNorm, eps))
	if l.MoE {
		s := x.Shape()
		flat := x.Reshape(s[0]*s[1], s[2])
		// Gemma 4's transformers class adds no load-balancing loss.
		experts := moe(c, w, rmsNorm(flat, w.PreMoENorm, eps), flat, nil).Reshape(s...)
		h = rmsNorm(h, w.PostMLPNorm1, eps).Add(rmsNorm(experts, w.PostMoENorm, eps))
	}
	x = x.Add(rmsNorm(h, w.PostMLPNorm, eps))

	if perLayer != nil {
		g := activation(c, linear(x, w.PerLayerGate)).Mul(perLayer)
		x = x.Add(rmsNorm(linear(g, w.PerLayerProj), w.PerLayerNorm, eps))
	}
	if w.LayerScalar != nil {
		x = x.Mul(w.LayerScalar)
	}
	return x, k, v
}

// perLayerInputs is Gemma 4's per-layer embeddings [B, T, layers, P]: the
// token's own (scaled by sqrt(P)) and a projection of its embedding (scaled
// by hidden^-1/2 and normed), summed and scaled by 2^-1/2.
func perLayerInputs(c *hf.Config, w *weights, tokens, embeds *tensor.Tensor) *tensor.Tensor {
	s := tokens.Shape()
	L, P := int64(len(c.Layers)), int64(c.PerLayer.Hidden)
	own := w.PerLayerEmbed.Take(tokens, 0).Mul(scalar(math.Sqrt(float64(P)))).Reshape(s[0], s[1], L, P)
	proj := linear(embeds, w.PerLayerProj).Mul(scalar(1/math.Sqrt(float64(c.Hidden)))).Reshape(s[0], s[1], L, P)
	proj = rmsNorm(proj, w.PerLayerProjNorm, c.RMSNormEps)
	return proj.Add(own).Mul(scalar(1 / math.Sqrt2))
}
