package hf

import "math"

// llama reads Llama and Mistral configs (LlamaForCausalLM,
// MistralForCausalLM): Qwen3's decoder without the q/k norms, with optional
// biases (Llama's attention_bias and mlp_bias) and, for Mistral, one sliding
// window for every layer.
func llama(f *fields, arch string) *Config {
	c := siluDecoder(f, arch)
	n := f.layerCount()
	hd := headDim(f, c)
	kv := kvHeads(f, "num_key_value_heads", c.Heads, c.Heads)
	c.AttnScale = 1 / math.Sqrt(float64(hd))
	rope := ropeFrom(f, "rope_parameters", legacyRope(f), hd)
	window := 0
	if arch == "llama" {
		c.QKVBias = f.bool("attention_bias", false)
		c.OBias = c.QKVBias
		c.MLPBias = f.bool("mlp_bias", false)
		// Tensor-parallel slicing of the projections in pretraining: the
		// same products, and transformers' Llama no longer reads it.
		f.int("pretraining_tp", 1)
	} else {
		window = mistralWindow(f)
	}
	c.Layers = make([]Layer, n)
	for i := range c.Layers {
		c.Layers[i] = Layer{HeadDim: hd, KVHeads: kv, KVFrom: -1, Rope: rope, Intermediate: c.Intermediate,
			MLP: true, Sliding: window > 0, Window: window}
	}
	return c
}

// mistralWindow reads Mistral's sliding_window: every layer attends over
// that many tokens; null is full attention, and an absent field is
// MistralConfig's default, 4096.
func mistralWindow(f *fields) int {
	if _, present := f.raw["sliding_window"]; !present {
		f.take("sliding_window")
		return 4096
	}
	if !f.has("sliding_window") {
		return 0 // null
	}
	return f.need("sliding_window")
}
