package models

import (
	"math"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/tensor"
)

// The blocks of the decoder layers of Qwen3, Qwen3-MoE, Gemma 4, Qwen2,
// Llama and Mistral, on the tensor API, computed in f32. Each follows
// transformers' modeling file of its family operation for operation (the
// oracle tests compare them).

// linear is x Wᵀ for a weight in the Hub's [out, in] layout, over the last
// axis of x. A bf16 weight (a bf16 checkpoint's, bind) makes a bf16
// product, as transformers computes one with torch_dtype=bfloat16 and
// JAX with preferred_element_type=f32: x rounded to bf16, the products of
// bf16 values (exact in f32) summed in f32. The backends read both
// converts' bf16 operands at their width (vdpbf16ps where the CPU has it).
func linear(x, w *tensor.Tensor) *tensor.Tensor {
	if w.DType() == ir.BF16 {
		x, w = roundBF16(x), w.Convert(ir.F32)
	}
	r := int64(x.Rank() - 1)
	return x.DotGeneral(w, ir.DotAttr{LhsContract: []int64{r}, RhsContract: []int64{1}})
}

// asDType is x converted to dt (keys and values written into a cache of
// dt: a bf16 cache's rounded to bf16), or x itself when it has that dtype.
func asDType(x *tensor.Tensor, dt ir.DType) *tensor.Tensor {
	if x.DType() == dt {
		return x
	}
	return x.Convert(dt)
}

// roundBF16 is x (f32) rounded to bf16 and widened back: the operand of
// a bf16 product, which the backends read at bf16 width.
func roundBF16(x *tensor.Tensor) *tensor.Tensor { return x.Convert(ir.BF16).Convert(ir.F32) }

// toF32 is t converted to f32 when it is not.
func toF32(t *tensor.Tensor) *tensor.Tensor {
	if t.DType() != ir.F32 {
		return t.Convert(ir.F32)
	}
	return t
}

// affine is linear plus a bias over the last axis; a nil bias is none.
func affine(x, w, bias *tensor.Tensor) *tensor.Tensor {
	y := linear(x, w)
	if bias != nil {
		y = y.Add(bias)
	}
	return y
}

// rmsNorm normalises the last axis; a nil scale is a norm without one.
func rmsNorm(x, scale *tensor.Tensor, eps float64) *tensor.Tensor {
	if scale == nil {
		s := x.Shape()
		scale = tensor.Ones(ir.F32, s[len(s)-1])
	}
	return x.RMSNorm(scale, eps)
}

// activation is the family's MLP nonlinearity.
func activation(c *hf.Config, x *tensor.Tensor) *tensor.Tensor {
	if c.Activation == "gelu_pytorch_tanh" {
		return x.Gelu(true)
	}
	return x.Silu()
}

func scalar(v float64) *tensor.Tensor { return tensor.Scalar(v, ir.F32) }

// rotary returns the cos and sin tables [B, T, 1, D] of a layer's rope for
// positions [B, T] (i32): angle = position × inv_freq, repeated over both
// halves of the head, times the rope's Scale, as transformers' rotary
// embeddings build them.
func rotary(r hf.Rope, positions *tensor.Tensor) (cos, sin *tensor.Tensor) {
	inv := r.InvFreq()
	f := make([]float32, len(inv))
	for i, v := range inv {
		f[i] = float32(v)
	}
	s := positions.Shape()
	angle := positions.Convert(ir.F32).Reshape(s[0], s[1], 1).Mul(tensor.FromSlice(f, int64(len(f))))
	emb := tensor.Concat(2, angle, angle).Reshape(s[0], s[1], 1, int64(2*len(f)))
	if k := r.Scale(); k != 1 {
		// YaRN scales the tables, as transformers' attention_scaling.
		return emb.Cos().Mul(scalar(k)), emb.Sin().Mul(scalar(k))
	}
	return emb.Cos(), emb.Sin()
}

// rope rotates x [B, T, heads, D] in rotate-half form:
// x cos + rotate_half(x) sin, rotate_half(a, b) = (-b, a). Tables narrower
// than D (Phi-3's partial_rotary_factor) turn the first channels only and
// pass the others, as transformers' Phi-3 apply_rotary_pos_emb.
func rope(x, cos, sin *tensor.Tensor) *tensor.Tensor {
	s := x.Shape()
	if r := cos.Shape()[3]; r < s[3] {
		turn := x.Slice([]int64{0, 0, 0, 0}, []int64{s[0], s[1], s[2], r}, nil)
		pass := x.Slice([]int64{0, 0, 0, r}, s, nil)
		return tensor.Concat(3, rope(turn, cos, sin), pass)
	}
	half := s[3] / 2
	a := x.Slice([]int64{0, 0, 0, 0}, []int64{s[0], s[1], s[2], half}, nil)
	b := x.Slice([]int64{0, 0, 0, half}, s, nil)
	return x.Mul(cos).Add(tensor.Concat(3, b.Neg(), a).Mul(sin))
}

// attnIn is what one layer's attention reads besides its weights.
type attnIn struct {
	cos, sin *tensor.Tensor // the layer's rope tables [B, T, 1, D]
	mask     *tensor.Tensor // i1 [B, T, Cap]: which cache slots each token sees
	pos      *tensor.Tensor // i32 []: the cache slot of the step's first token
	k, v     *tensor.Tensor // the cache [B, KVH, Cap, D], before this step (or a source layer's, after it)
	shared   bool           // keys and values come from another layer: k and v are used as they are
	// store, when set, writes the step's keys and values [B, KVH, T, D]
	// where they belong (a loop's stacked cache) and returns the layer's
	// cache after the write; nil writes them into k and v at pos.
	store func(k, v *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor)
	fresh bool // stepIn.fresh: attend over slots [0, T) only
}

// attention is grouped-query attention over the KV cache. The step's keys
// and values are written into the cache at pos with dynamic_update_slice,
// so that a step of T tokens has one signature wherever it lands; queries
// attend to every cache slot and the mask hides the others. It returns the
// output [B, T, hidden] and the cache after the step.
func attention(c *hf.Config, l hf.Layer, w *layerWeights, h *tensor.Tensor, in attnIn) (out, k, v *tensor.Tensor) {
	s := h.Shape()
	B, T := s[0], s[1]
	H, KV, D := int64(c.Heads), int64(l.KVHeads), int64(l.HeadDim)
	eps := c.RMSNormEps
	// The q/k norms: per head (Qwen3, Gemma), over the whole projection
	// before the heads are split (OLMo 2: full), or none (Llama, Mistral,
	// Qwen2).
	qkNorm := func(x, scale *tensor.Tensor, full bool) *tensor.Tensor {
		if !c.QKNorm || c.QKNormFull != full {
			return x
		}
		return rmsNorm(x, scale, eps)
	}
	q := qkNorm(affine(h, w.Q, w.QBias), w.QNorm, true).Reshape(B, T, H, D)
	q = rope(qkNorm(q, w.QNorm, false), in.cos, in.sin).Transpose(0, 2, 1, 3)
	k, v = in.k, in.v
	var kFresh, vFresh *tensor.Tensor // the step's keys and values as the cache holds them
	if !in.shared {
		kr := qkNorm(affine(h, w.K, w.KBias), w.KNorm, true).Reshape(B, T, KV, D)
		vr := kr // Gemma 4's attention_k_eq_v: the values are the raw keys
		if w.V != nil {
			vr = affine(h, w.V, w.VBias).Reshape(B, T, KV, D)
		}
		kn := rope(qkNorm(kr, w.KNorm, false), in.cos, in.sin).Transpose(0, 2, 1, 3)
		if c.VNorm {
			vr = rmsNorm(vr, nil, eps)
		}
		vn := vr.Transpose(0, 2, 1, 3)
		if in.store != nil {
			k, v = in.store(kn, vn)
		} else {
			zero := tensor.Scalar(0, ir.I32)
			at := []*tensor.Tensor{zero, zero, in.pos, zero}
			k = k.DynamicUpdateSlice(asDType(kn, k.DType()), at)
			v = v.DynamicUpdateSlice(asDType(vn, v.DType()), at)
		}
		// The same converts as the stores' (cse makes them one).
		kFresh, vFresh = asDType(kn, k.DType()), asDType(vn, v.DType())
	}
	kA, vA, mask := k, v, in.mask // what the queries attend over
	if in.fresh && kFresh != nil {
		// On an empty cache the slots a fresh prefill sees are the keys
		// and values it just wrote (pos is 0): read where they were
		// computed rather than out of the cache. A 512-token prefill has
		// 1024 slots, half of them hidden by the mask, and a bf16 cache's
		// slots widened to f32 were one fused copy of the cache (f32
		// products at twice the bytes) where the keys as written are the
		// narrow operand of the bf16 products.
		kA, vA = kFresh, vFresh
		mask = mask.Slice([]int64{0, 0, 0}, []int64{B, T, T}, nil)
	} else if in.fresh && T < k.Shape()[2] {
		kA = k.Slice([]int64{0, 0, 0, 0}, []int64{B, KV, T, D}, nil)
		vA = v.Slice([]int64{0, 0, 0, 0}, []int64{B, KV, T, D}, nil)
		mask = mask.Slice([]int64{0, 0, 0}, []int64{B, T, T}, nil)
	}
	G := H / KV
	var ctx *tensor.Tensor
	if blk := causalBlock; in.fresh && T >= 2*blk {
		// On an empty cache the token at slot t sees slots ≤ t only, so
		// the queries of slots [t0, t1) attend over slots [0, t1): the
		// products and the softmax skip what the mask would hide (a
		// 512-token prefill in blocks of 128 computes 10/16 of them). The
		// skipped probabilities are exactly 0, so the result is the same.
		qg := q.Reshape(B, KV, G, T, D)
		var parts []*tensor.Tensor
		for t0 := int64(0); t0 < T; t0 += blk {
			t1 := min(t0+blk, T)
			qb := qg.Slice([]int64{0, 0, 0, t0, 0}, []int64{B, KV, G, t1, D}, nil).Reshape(B, KV, G*(t1-t0), D)
			kb := kA.Slice([]int64{0, 0, 0, 0}, []int64{B, KV, t1, D}, nil)
			vb := vA.Slice([]int64{0, 0, 0, 0}, []int64{B, KV, t1, D}, nil)
			mb := mask.Slice([]int64{0, t0, 0}, []int64{B, t1, t1}, nil)
			parts = append(parts, heads(attend(c, qb, kb, vb, mb, G), G))
		}
		ctx = tensor.Concat(1, parts...)
	} else {
		ctx = heads(attend(c, q.Reshape(B, KV, G*T, D), kA, vA, mask, G), G)
	}
	return affine(ctx, w.O, w.OBias), k, v
}

// causalBlock is the query block of a fresh prefill's attention (slots);
// a step of fewer than two blocks attends in one piece.
var causalBlock int64 = 128

// attend is grouped-query attention of q [B, KV, G*Tq, D] (the G query
// heads of each key head, Tq slots each) over k and v [B, KV, Tk, D], where
// mask [B, Tq, Tk] says which slots each query slot sees: [B, KV, G*Tq, D].
//
// Over a bf16 cache (Model.CacheDType) both products are bf16 products, as
// PyTorch's CPU attention (sdpa's flash kernel) computes a bf16 model's:
// the queries rounded to bf16 times the bf16 keys, summed in f32; the
// softmax in f32; the probabilities rounded to bf16 times the bf16
// values, summed in f32 (the layers' bf16 form, linear's). Over an f16
// cache both products are f32 products of the widened keys and values.
func attend(c *hf.Config, q, k, v, mask *tensor.Tensor, G int64) *tensor.Tensor {
	qs, ks := q.Shape(), k.Shape()
	B, KV, Tq, Tk := qs[0], qs[1], qs[2]/G, ks[2]
	narrow := k.DType() == ir.BF16
	if k.DType() != ir.F32 { // a bf16 or f16 cache, widened as the products read it
		k, v = k.Convert(ir.F32), v.Convert(ir.F32)
	}
	if narrow {
		q = roundBF16(q)
	}
	scores := q.DotGeneral(k, ir.DotAttr{
		LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1}, LhsContract: []int64{3}, RhsContract: []int64{3}})
	if c.AttnScale != 1 {
		scores = scores.Mul(scalar(c.AttnScale))
	}
	if sc := c.AttnSoftcap; sc != 0 {
		scores = scores.Mul(scalar(1 / sc)).Tanh().Mul(scalar(sc))
	}
	scores = tensor.Where(mask.Reshape(B, 1, 1, Tq, Tk), scores.Reshape(B, KV, G, Tq, Tk), scalar(math.Inf(-1)))
	probs := scores.Softmax(-1).Reshape(B, KV, G*Tq, Tk)
	if narrow {
		probs = roundBF16(probs)
	}
	return probs.DotGeneral(v, ir.DotAttr{
		LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1}, LhsContract: []int64{3}, RhsContract: []int64{2}})
}

// heads puts attention's output [B, KV, G*T, D] back in token order, the
// heads of a token side by side: [B, T, KV*G*D].
func heads(x *tensor.Tensor, G int64) *tensor.Tensor {
	s := x.Shape()
	B, H, T, D := s[0], s[1]*G, s[2]/G, s[3]
	return x.Reshape(B, H, T, D).Transpose(0, 2, 1, 3).Reshape(B, T, H*D)
}

// mlp is the gated MLP: down(act(gate(x)) · up(x)).
func mlp(c *hf.Config, w *layerWeights, x *tensor.Tensor) *tensor.Tensor {
	return affine(activation(c, affine(x, w.Gate, w.GateBias)).Mul(affine(x, w.Up, w.UpBias)), w.Down, w.DownBias)
}

// moe is the mixture-of-experts block over tokens x [N, hidden], written
// densely: every expert runs on every token and a one-hot combine keeps each
// token's top-k. This is the form the moe-route pass proves sparse and
// rewrites into grouped matmuls; unrewritten it computes the same numbers.
// routerIn is what the router reads (x for Qwen3-MoE; Gemma 4 routes on the
// residual stream before its pre-MoE norm). stats, when not nil, counts the
// layer's routing for the load-balancing loss (routerStats).
func moe(c *hf.Config, w *layerWeights, x, routerIn *tensor.Tensor, stats *routerStats) *tensor.Tensor {
	m := c.MoE
	N, E, K := x.Shape()[0], int64(m.Experts), int64(m.TopK)
	if m.Router == "gemma4" {
		routerIn = rmsNorm(routerIn, nil, c.RMSNormEps).Mul(w.RouterScale).Mul(scalar(1 / math.Sqrt(float64(c.Hidden))))
	}
	probs := linear(routerIn, w.Router).Softmax(1)
	topW, topI := probs.TopK(m.TopK)
	stats.add(probs, topI)
	if m.NormTopK {
		topW = topW.Div(topW.SumKeep(1))
	}
	if m.Router == "gemma4" {
		topW = topW.Mul(w.ExpertScale.Take(topI, 0))
	}
	combine := topI.OneHot(E, ir.F32).Mul(topW.Reshape(N, K, 1)).Sum(1)

	// Stacked [E, I, H] projections of all tokens: [N, E, I]. bf16 experts
	// (a bf16 checkpoint's, bind) make bf16 products as linear's do: the
	// tokens and the activation rounded to bf16, the sums in f32.
	xe := x
	if w.GateExperts.DType() == ir.BF16 {
		xe = roundBF16(x)
	}
	proj := func(w *tensor.Tensor) *tensor.Tensor {
		return xe.DotGeneral(toF32(w), ir.DotAttr{LhsContract: []int64{1}, RhsContract: []int64{2}})
	}
	act := activation(c, proj(w.GateExperts)).Mul(proj(w.UpExperts))
	if w.DownExperts.DType() == ir.BF16 {
		act = roundBF16(act)
	}
	// Down [E, H, I], batched over experts: [E, N, H].
	out := act.DotGeneral(toF32(w.DownExperts), ir.DotAttr{LhsBatch: []int64{1}, RhsBatch: []int64{0}, LhsContract: []int64{2}, RhsContract: []int64{2}})
	routed := combine.DotGeneral(out, ir.DotAttr{LhsBatch: []int64{0}, RhsBatch: []int64{1}, LhsContract: []int64{1}, RhsContract: []int64{0}})
	if m.Shared == 0 {
		return routed
	}
	// Qwen2-MoE's shared expert, the gated MLP on every token, scaled by
	// its own gate.
	shared := mlp(c, &layerWeights{Gate: w.SharedGate, Up: w.SharedUp, Down: w.SharedDown}, x)
	return routed.Add(linear(x, w.SharedExpertGate).Sigmoid().Mul(shared))
}
