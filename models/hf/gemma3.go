package hf

import (
	"encoding/json"
	"math"
)

// gemma3 reads a Gemma 3 text config (Gemma3ForCausalLM, model_type
// gemma3_text) or a Gemma 2 config (Gemma2ForCausalLM, gemma2). Defaults
// are transformers' Gemma3TextConfig's and Gemma2Config's. Gemma 3 is
// Gemma 4's dense decoder without keys as values, KV sharing, per-layer
// inputs, the v norm and the layer scalar; its RMSNorms scale by 1 + weight
// (NormOffset) and its attention by query_pre_attn_scalar^-1/2. Gemma 2 is
// Gemma 3 without the q/k norms, with one rope for all layers, every other
// layer sliding, and its attention scores and logits softcapped.
func gemma3(f *fields, arch string) *Config {
	c := base(f, arch)
	c.QKNorm, c.NormOffset = arch == "gemma3_text", true
	c.QKVBias = f.bool("attention_bias", false)
	c.OBias = c.QKVBias
	c.Activation = "gelu_pytorch_tanh"
	f.refuse("hidden_activation", `"gelu_pytorch_tanh"`)
	f.refuse("hidden_act", `"gelu_pytorch_tanh"`) // Gemma 2's published config carries both spellings
	if arch == "gemma2" {
		c.AttnSoftcap = nullable(f, "attn_logit_softcapping", 50)
		c.FinalSoftcap = nullable(f, "final_logit_softcapping", 30)
	} else {
		f.refuse("attn_logit_softcapping", "null")
		c.FinalSoftcap = f.float("final_logit_softcapping", 0)
	}
	if f.bool("use_bidirectional_attention", false) {
		f.fail("use_bidirectional_attention", "true is not supported (tpucc computes causal attention)")
	}
	c.TieEmbed = f.bool("tie_word_embeddings", true)
	c.EmbedScale = embedScale(c.Hidden)
	if s := f.float("query_pre_attn_scalar", 256); s > 0 {
		c.AttnScale = 1 / math.Sqrt(s)
	} else {
		f.fail("query_pre_attn_scalar", "%v is not positive", s)
	}
	n := f.layerCount()
	var types []string
	var ropes map[string]map[string]json.RawMessage
	if arch == "gemma2" {
		types = layerTypes(f, n, 2)
		one := legacyRope(f)
		ropes = map[string]map[string]json.RawMessage{fullAttention: one, slidingAttention: one}
	} else {
		types = gemma3LayerTypes(f, n)
	}
	hd := f.int("head_dim", 256)
	if hd == 0 || hd%2 != 0 {
		f.fail("head_dim", "%d is not a positive even number", hd)
	}
	kv := kvHeads(f, "num_key_value_heads", c.Heads, 4)
	window := slidingWindow(f, 4096) // null: none
	if ropes == nil {
		ropes = gemma3Ropes(f, types)
	}
	c.Layers = make([]Layer, n)
	for i, t := range types {
		l := Layer{HeadDim: hd, KVHeads: kv, KVFrom: -1, MLP: true, Intermediate: c.Intermediate}
		l.Rope = ropeFrom(f, "rope_parameters."+t, ropes[t], hd, c.MaxPositions, false)
		if t == slidingAttention {
			if window == 0 {
				f.fail("sliding_window", "null, but layer %d is sliding_attention", i)
			}
			l.Sliding, l.Window = true, window
		}
		c.Layers[i] = l
	}
	return c
}

// nullable reads a number whose absence means def and whose null means
// none (0): the softcaps of Gemma 2.
func nullable(f *fields, key string, def float64) float64 {
	if _, present := f.raw[key]; !present {
		f.take(key)
		return def
	}
	v := f.float(key, 0)
	if v < 0 {
		f.fail(key, "%v is negative", v)
	}
	return v
}

// gemma3LayerTypes resolves layer_types: given, or every
// sliding_window_pattern-th layer (6) full and the others sliding.
// transformers saves the pattern as _sliding_window_pattern.
func gemma3LayerTypes(f *fields, n int) []string {
	pattern := f.int("sliding_window_pattern", f.int("_sliding_window_pattern", 6))
	if pattern == 0 {
		f.fail("sliding_window_pattern", "must be positive")
		pattern = 6
	}
	return layerTypes(f, n, pattern)
}

// gemma3Ropes reads rope_parameters keyed by layer type, or the legacy
// fields: rope_theta and rope_scaling for full layers, rope_local_base_freq
// for sliding ones. A missing theta is Gemma3TextConfig's: 1000000 for full
// layers, 10000 for sliding ones.
func gemma3Ropes(f *fields, types []string) map[string]map[string]json.RawMessage {
	legacy := map[string]json.RawMessage{}
	for _, k := range []string{"rope_local_base_freq", "rope_scaling", "rope_theta"} {
		if v := f.take(k); v != nil {
			legacy[k] = v
		}
	}
	var out map[string]map[string]json.RawMessage
	if f.has("rope_parameters") {
		for _, k := range sortedKeys(legacy) {
			f.fail(k, "given beside rope_parameters")
			break
		}
		out = gemmaRopes(f, types)
	} else {
		full := rawObject(f, "rope_scaling") // refused unless an object
		if full == nil {
			full = map[string]json.RawMessage{}
		}
		if v, ok := legacy["rope_theta"]; ok {
			full["rope_theta"] = v
		}
		sliding := map[string]json.RawMessage{}
		if v, ok := legacy["rope_local_base_freq"]; ok {
			sliding["rope_theta"] = v
		}
		out = map[string]map[string]json.RawMessage{fullAttention: full, slidingAttention: sliding}
	}
	def := map[string]string{fullAttention: "1000000", slidingAttention: "10000"}
	for t, m := range out {
		if _, ok := m["rope_theta"]; !ok {
			m["rope_theta"] = json.RawMessage(def[t])
		}
	}
	return out
}
