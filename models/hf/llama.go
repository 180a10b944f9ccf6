package hf

import (
	"encoding/json"
	"math"
)

// llama reads Llama, Mistral, Mixtral, Phi-3, Granite and OLMo 2 configs
// (LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM,
// Phi3ForCausalLM, GraniteForCausalLM: Llama with multipliers,
// Olmo2ForCausalLM: post-norms and whole-projection q/k norms): Qwen3's decoder
// without the q/k norms, with optional biases (Llama's attention_bias and
// mlp_bias), for Mistral, Mixtral and Phi-3 one sliding window for every
// layer, and for Mixtral a MoE block in every layer instead of the MLP.
// Phi-3 stores its q, k and v projections as one matrix, and its gate and
// up projections as another.
func llama(f *fields, arch string) *Config {
	c := siluDecoder(f, arch)
	n := f.layerCount()
	hd := headDim(f, c)
	kv := kvHeads(f, "num_key_value_heads", c.Heads, c.Heads)
	c.AttnScale = 1 / math.Sqrt(float64(hd))
	params := legacyRope(f)
	if _, ok := params["rope_theta"]; !ok && arch == "mixtral" {
		params["rope_theta"] = json.RawMessage("1000000") // MixtralConfig's default_theta
	}
	if arch == "phi3" {
		// Phi-3 keeps its original context at the top, and transformers
		// gives it priority over the rope parameters' (a context longrope
		// and yarn read); other rope types never read it.
		if v := f.take("original_max_position_embeddings"); v != nil && (ropeType(params) == "longrope" || ropeType(params) == "yarn") {
			params["original_max_position_embeddings"] = v
		}
	}
	rope := ropeFrom(f, "rope_parameters", params, hd, c.MaxPositions, arch == "phi3")
	window := 0
	switch arch {
	case "olmo2":
		// q and k normed over their whole projections; norms after the
		// attention and the MLP, none before (forward's olmoLayer).
		c.QKNorm, c.QKNormFull = true, true
		c.QKVBias = f.bool("attention_bias", false)
		c.OBias = c.QKVBias
	case "llama", "granite":
		c.QKVBias = f.bool("attention_bias", false)
		c.OBias = c.QKVBias
		c.MLPBias = f.bool("mlp_bias", false)
		if arch == "granite" {
			granite(f, c)
			break
		}
		// Tensor-parallel slicing of the projections in pretraining: the
		// same products, and transformers' Llama no longer reads it.
		f.int("pretraining_tp", 1)
	case "mistral":
		window = slidingWindow(f, 4096)
	case "mixtral":
		window = slidingWindow(f, 0)
		c.MoE = mixtralMoE(f, c)
	case "phi3":
		window = slidingWindow(f, 0)
		// Dropout in training (transformers' Phi-3 never applies
		// embd_pdrop).
		trainNoise(f, c, "resid_pdrop")
		f.float("embd_pdrop", 0)
		f.refuse("attention_bias", "false") // published configs carry it; Phi-3 has no bias
	}
	c.Layers = make([]Layer, n)
	for i := range c.Layers {
		c.Layers[i] = Layer{HeadDim: hd, KVHeads: kv, KVFrom: -1, Rope: rope, Intermediate: c.Intermediate,
			MLP: c.MoE == nil, MoE: c.MoE != nil, Sliding: window > 0, Window: window}
	}
	return c
}

// granite reads Granite's four multipliers, which replace the embedding
// scale and the attention scale and scale the residual branches and the
// logits (divided by logits_scaling).
func granite(f *fields, c *Config) {
	for _, m := range []struct {
		key string
		dst *float64
	}{
		{"embedding_multiplier", &c.EmbedScale}, {"attention_multiplier", &c.AttnScale},
		{"residual_multiplier", &c.ResidualScale}, {"logits_scaling", &c.LogitScale},
	} {
		if *m.dst = f.float(m.key, 1); !(*m.dst > 0) {
			f.fail(m.key, "%v is not positive", *m.dst)
		}
	}
}

// mixtralMoE reads Mixtral's experts: intermediate_size is each expert's
// width, and the router renormalises its top-k (Qwen3-MoE's router with
// norm_topk_prob).
func mixtralMoE(f *fields, c *Config) *MoE {
	m := &MoE{Experts: f.int("num_local_experts", 8), TopK: f.int("num_experts_per_tok", 2),
		Intermediate: c.Intermediate, NormTopK: true, Router: "softmax"}
	switch {
	case m.Experts == 0 || m.TopK == 0:
		f.fail("num_experts_per_tok", "%d of %d experts: both must be positive", m.TopK, m.Experts)
	case m.TopK > m.Experts:
		f.fail("num_experts_per_tok", "%d is more than num_local_experts %d", m.TopK, m.Experts)
	}
	// Multiplicative noise on the router's input in training only.
	trainNoise(f, c, "router_jitter_noise")
	return m
}

// slidingWindow reads sliding_window: the tokens a sliding layer attends
// over (every layer of Mistral and Mixtral); null is none, and an absent
// field is the configuration class's default (4096 for Mistral and Gemma
// 3, none for Mixtral).
func slidingWindow(f *fields, def int) int {
	if _, present := f.raw["sliding_window"]; !present {
		f.take("sliding_window")
		return def
	}
	if !f.has("sliding_window") {
		return 0 // null
	}
	return f.need("sliding_window")
}

// ropeType is a rope parameters object's rope_type (or legacy type), "" when
// neither is a string.
func ropeType(params map[string]json.RawMessage) string {
	for _, k := range []string{"rope_type", "type"} {
		var t string
		if json.Unmarshal(params[k], &t) == nil && t != "" {
			return t
		}
	}
	return ""
}
