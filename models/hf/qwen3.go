package hf

import (
	"encoding/json"
	"math"
	"slices"
)

// qwen3 reads Qwen3, Qwen3-MoE, Qwen2 and Qwen2-MoE configs
// (Qwen3ForCausalLM, Qwen3MoeForCausalLM, Qwen2ForCausalLM,
// Qwen2MoeForCausalLM). Qwen2 is Qwen3 without the q/k norms and with
// biases on the q, k and v projections; Qwen2-MoE adds Qwen3-MoE's experts
// and a shared expert beside them.
func qwen3(f *fields, arch string) *Config {
	c := siluDecoder(f, arch)
	switch arch {
	case "qwen2":
		c.QKVBias = true
	case "qwen2_moe":
		c.QKVBias = f.bool("qkv_bias", true)
	default:
		c.QKNorm = true
		c.QKVBias = f.bool("attention_bias", false)
		c.OBias = c.QKVBias
	}
	n := f.layerCount()
	hd := headDim(f, c)
	kv := kvHeads(f, "num_key_value_heads", c.Heads, c.Heads)
	c.AttnScale = 1 / math.Sqrt(float64(hd))
	rope := ropeFrom(f, "rope_parameters", legacyRope(f), hd, c.MaxPositions, false)
	sliding := qwenSliding(f, arch, n)
	window := 0
	if slices.Contains(sliding, true) {
		window = f.need("sliding_window")
	} else {
		f.take("sliding_window") // only read when use_sliding_window is true
	}
	isMoE := qwenMoE(f, c, arch, n)
	c.Layers = make([]Layer, n)
	for i := range c.Layers {
		l := Layer{HeadDim: hd, KVHeads: kv, KVFrom: -1, Rope: rope, Intermediate: c.Intermediate}
		if sliding[i] {
			l.Sliding, l.Window = true, window
		}
		l.MoE = isMoE(i)
		l.MLP = !l.MoE
		c.Layers[i] = l
	}
	return c
}

// siluDecoder reads what the decoders of Qwen3 and Llama share: the base
// fields, the SwiGLU activation, tied embeddings, no embedding scale.
func siluDecoder(f *fields, arch string) *Config {
	c := base(f, arch)
	c.Activation = "silu"
	f.refuse("hidden_act", `"silu"`)
	c.TieEmbed = f.bool("tie_word_embeddings", false)
	c.EmbedScale = 1
	return c
}

// legacyRope merges the old top-level rope_theta, rope_scaling and
// partial_rotary_factor into rope_parameters, refusing two that disagree.
func legacyRope(f *fields) map[string]json.RawMessage {
	params := rawObject(f, "rope_parameters")
	scaling := rawObject(f, "rope_scaling")
	if params == nil {
		params = scaling
	} else if scaling != nil {
		f.fail("rope_scaling", "given beside rope_parameters")
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	for _, k := range []string{"rope_theta", "partial_rotary_factor"} {
		v := f.take(k)
		if v == nil {
			continue
		}
		if old, ok := params[k]; ok && string(old) != string(v) {
			f.fail(k, "%s disagrees with rope_parameters' %s", v, old)
		}
		params[k] = v
	}
	return params
}

// qwenSliding resolves which layers use sliding-window attention:
// layer_types when given, else, when use_sliding_window is true, the layers
// from max_window_layers (28 when absent, as transformers has it) on for
// Qwen2 and Qwen3, and for Qwen2-MoE the even-numbered layers below it
// (Qwen2MoeConfig's rule: it once took Qwen2's, and a Qwen2-MoE config
// without layer_types slid the wrong layers).
func qwenSliding(f *fields, arch string, n int) []bool {
	use := f.bool("use_sliding_window", false)
	from := f.int("max_window_layers", 28)
	out := make([]bool, n)
	if arch == "qwen3_moe" {
		if use {
			f.fail("use_sliding_window", "true is not supported for qwen3_moe")
		}
		return out
	}
	types := f.strs("layer_types")
	if types == nil {
		for i := range out {
			if arch == "qwen2_moe" {
				out[i] = use && i%2 == 0 && i < from
			} else {
				out[i] = use && i >= from
			}
		}
		return out
	}
	if len(types) != n {
		f.fail("layer_types", "has %d entries for %d layers", len(types), n)
		return out
	}
	for i, t := range types {
		switch t {
		case "full_attention":
		case "sliding_attention":
			if !use {
				f.fail("layer_types", "layer %d is sliding_attention but use_sliding_window is false, so it has no window", i)
			}
			out[i] = true
		default:
			f.fail("layer_types", "layer %d: %q is not full_attention or sliding_attention", i, t)
		}
	}
	return out
}

// qwenMoE reads Qwen3-MoE's expert fields and returns which layers are MoE:
// a layer is when it is not in mlp_only_layers and (i+1) is a multiple of
// decoder_sparse_step.
func qwenMoE(f *fields, c *Config, arch string, n int) func(int) bool {
	if arch != "qwen3_moe" && arch != "qwen2_moe" {
		return func(int) bool { return false }
	}
	c.MoE = &MoE{
		Experts:      qwenExperts(f),
		TopK:         f.need("num_experts_per_tok"),
		Intermediate: f.need("moe_intermediate_size"),
		NormTopK:     f.bool("norm_topk_prob", false),
		Router:       "softmax",
	}
	if c.MoE.TopK > c.MoE.Experts {
		f.fail("num_experts_per_tok", "%d is more than num_experts %d", c.MoE.TopK, c.MoE.Experts)
	}
	if arch == "qwen2_moe" {
		c.MoE.Shared = f.int("shared_expert_intermediate_size", 5632)
	}
	step := f.int("decoder_sparse_step", 1)
	if step == 0 {
		f.fail("decoder_sparse_step", "must be positive")
		step = 1
	}
	// A set: the list may repeat a layer, and searching it for each layer
	// was quadratic (a 2 MB list of zeros took 9 s).
	only := map[int]bool{}
	for _, i := range f.ints("mlp_only_layers") {
		if i >= n {
			f.fail("mlp_only_layers", "layer %d does not exist (num_hidden_layers is %d)", i, n)
		}
		only[i] = true
	}
	return func(i int) bool { return !only[i] && (i+1)%step == 0 }
}

// qwenExperts reads num_experts, which transformers writes as
// num_local_experts (its attribute_map) when it saves a config.
func qwenExperts(f *fields) int {
	if !f.has("num_local_experts") {
		return f.need("num_experts")
	}
	n := f.need("num_local_experts")
	if f.has("num_experts") && f.int("num_experts", 0) != n {
		f.fail("num_experts", "%d disagrees with num_local_experts %d", f.int("num_experts", 0), n)
	}
	return n
}
