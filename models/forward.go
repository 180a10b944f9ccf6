package models

import (
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
}

// forward runs one step: the logits of the last token of each row [B, V]
// (or of every token [B, T, V] with all) and the caches after the step.
func forward(c *hf.Config, w *weights, in stepIn, all bool) (*tensor.Tensor, []*tensor.Tensor) {
	s := in.tokens.Shape()
	B, T := s[0], s[1]
	x := w.Embed.Take(in.tokens, 0)
	if c.EmbedScale != 1 {
		x = x.Mul(scalar(c.EmbedScale))
	}
	var perLayer *tensor.Tensor
	if c.PerLayer != nil {
		perLayer = perLayerInputs(c, w, in.tokens, x)
	}

	// Slots and positions of the step's tokens.
	slot := tensor.Iota(ir.I32, 0, T).Add(in.pos)               // [T]
	positions := slot.Reshape(1, T).Sub(in.start.Reshape(B, 1)) // [B, T]
	capacity := in.caches[0].Shape()[2]
	masks := map[int]*tensor.Tensor{}
	tables := map[hf.Rope][2]*tensor.Tensor{}

	caches := append([]*tensor.Tensor(nil), in.caches...)
	cacheOf := cacheLayers(c)
	for i, l := range c.Layers {
		lw := &w.Layers[i]
		window := 0
		if l.Sliding {
			window = l.Window
		}
		if masks[window] == nil {
			masks[window] = mask(slot, in.start, capacity, window)
		}
		if _, ok := tables[l.Rope]; !ok {
			cos, sin := rotary(l.Rope, positions)
			tables[l.Rope] = [2]*tensor.Tensor{cos, sin}
		}
		src := i
		if l.KVFrom >= 0 {
			src = l.KVFrom
		}
		ci := cacheOf[src]
		ai := attnIn{cos: tables[l.Rope][0], sin: tables[l.Rope][1], mask: masks[window], pos: in.pos,
			k: caches[2*ci], v: caches[2*ci+1], shared: l.KVFrom >= 0, fresh: in.fresh}
		var li *tensor.Tensor
		if perLayer != nil {
			P := int64(c.PerLayer.Hidden)
			li = perLayer.Slice([]int64{0, 0, int64(i), 0}, []int64{B, T, int64(i) + 1, P}, nil).Reshape(B, T, P)
		}
		var k, v *tensor.Tensor
		if c.Gemma() {
			x, k, v = gemmaLayer(c, l, lw, x, ai, li)
		} else if c.Arch == "olmo2" {
			x, k, v = olmoLayer(c, l, lw, x, ai)
		} else {
			x, k, v = qwenLayer(c, l, lw, x, ai)
		}
		if !ai.shared {
			caches[2*ci], caches[2*ci+1] = k, v
		}
	}

	x = rmsNorm(x, w.Norm, c.RMSNormEps)
	if !all {
		x = x.Slice([]int64{0, T - 1, 0}, []int64{B, T, int64(c.Hidden)}, nil).Reshape(B, int64(c.Hidden))
	}
	logits := linear(x, w.LMHead)
	if s := c.LogitScale; s != 0 && s != 1 {
		logits = logits.Mul(scalar(1 / s))
	}
	if sc := c.FinalSoftcap; sc != 0 {
		logits = logits.Mul(scalar(1 / sc)).Tanh().Mul(scalar(sc))
	}
	return logits, caches
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
// and MLP (or MoE), both residual.
func qwenLayer(c *hf.Config, l hf.Layer, w *layerWeights, x *tensor.Tensor, ai attnIn) (out, k, v *tensor.Tensor) {
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
		return x.Add(branch(moe(c, w, flat, flat).Reshape(s...))), k, v
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
		experts := moe(c, w, rmsNorm(flat, w.PreMoENorm, eps), flat).Reshape(s...)
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

// cacheLayers maps each layer that owns keys and values to its index among
// them; layers sharing another's (KVFrom ≥ 0) have none.
func cacheLayers(c *hf.Config) map[int]int {
	out := map[int]int{}
	for i, l := range c.Layers {
		if l.KVFrom < 0 {
			out[i] = len(out)
		}
	}
	return out
}
