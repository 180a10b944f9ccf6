package hf

import (
	"encoding/json"
	"slices"
	"strconv"
)

// Gemma 4 layer types.
const (
	fullAttention    = "full_attention"
	slidingAttention = "sliding_attention"
)

// gemma4 reads a Gemma 4 text config (Gemma4ForCausalLM). Defaults are
// transformers' Gemma4TextConfig's.
func gemma4(f *fields) *Config {
	c := base(f, "gemma4_text")
	c.QKNorm = true
	f.refuse("attention_bias", "false")
	c.Activation = "gelu_pytorch_tanh"
	f.refuse("hidden_activation", `"gelu_pytorch_tanh"`)
	f.refuse("use_bidirectional_attention", "null")
	c.TieEmbed = f.bool("tie_word_embeddings", true)
	c.EmbedScale = embedScale(c.Hidden)
	c.AttnScale = 1 // the q/k norms take the place of 1/sqrt(head_dim)
	c.VNorm = true
	c.FinalSoftcap = f.float("final_logit_softcapping", 0)
	n := f.layerCount()
	types := gemmaLayerTypes(f, n)
	hd := f.int("head_dim", 256)
	kv := kvHeads(f, "num_key_value_heads", c.Heads, 4)
	kEqV := f.bool("attention_k_eq_v", false)
	dims := gemmaHeads(f, c, types, hd, kv, kEqV)
	window := f.int("sliding_window", 512)
	ropes := gemmaRopes(f, types)
	shared := f.int("num_kv_shared_layers", 0)
	doubleWide := f.bool("use_double_wide_mlp", false)
	if shared > n {
		f.fail("num_kv_shared_layers", "%d is more than num_hidden_layers %d", shared, n)
		shared = 0
	}
	if perLayer := f.int("hidden_size_per_layer_input", 256); perLayer > 0 {
		c.PerLayer = &PerLayerInput{Vocab: f.int("vocab_size_per_layer_input", 262144), Hidden: perLayer}
	} else {
		f.take("vocab_size_per_layer_input")
	}
	moe := gemmaMoE(f, c)
	c.Layers = make([]Layer, n)
	for i, t := range types {
		l := Layer{HeadDim: dims[i][0], KVHeads: dims[i][1], KVFrom: -1, MLP: true, MoE: moe, Intermediate: c.Intermediate}
		l.Rope = ropeFrom(f, "rope_parameters."+t, ropes[t], l.HeadDim, c.MaxPositions, false)
		if t == slidingAttention {
			l.Sliding, l.Window = true, window
		} else {
			l.KEqV = kEqV
		}
		if first := n - shared; i >= first && shared > 0 {
			l.KVFrom = lastOfType(types[:first], t)
			if l.KVFrom < 0 {
				f.fail("num_kv_shared_layers", "layer %d (%s) shares keys and values, but no earlier layer is %s", i, t, t)
			} else if src := c.Layers[l.KVFrom]; src.HeadDim != l.HeadDim || src.KVHeads != l.KVHeads {
				f.fail("num_kv_shared_layers", "layer %d reuses layer %d's keys and values, but its heads are %d wide, %d for keys and values, and layer %d's %d wide, %d",
					i, l.KVFrom, l.HeadDim, l.KVHeads, l.KVFrom, src.HeadDim, src.KVHeads)
			}
			if doubleWide {
				l.Intermediate *= 2
			}
		}
		c.Layers[i] = l
	}
	return c
}

// gemmaHeads resolves each layer's head dim and KV heads. per_layer_config,
// which transformers writes when it saves a config, gives them per layer;
// without it, full layers take global_head_dim (default 512) and, when keys
// are values, num_global_key_value_heads, as Gemma4TextConfig derives them.
func gemmaHeads(f *fields, c *Config, types []string, hd, kv int, kEqV bool) [][2]int {
	globalHD := f.int("global_head_dim", 512)
	globalKV := kv
	if f.has("num_global_key_value_heads") && kEqV {
		globalKV = kvHeads(f, "num_global_key_value_heads", c.Heads, kv)
	}
	dims := make([][2]int, len(types))
	perLayer := rawObject(f, "per_layer_config")
	for i, t := range types {
		dims[i] = [2]int{hd, kv}
		if t == fullAttention && perLayer == nil {
			dims[i] = [2]int{globalHD, globalKV}
		}
	}
	for _, k := range sortedKeys(perLayer) {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(types) || strconv.Itoa(i) != k {
			f.fail("per_layer_config", "%q is not a layer index", k)
			continue
		}
		sub := &fields{used: map[string]bool{}}
		if err := json.Unmarshal(perLayer[k], &sub.raw); err != nil || sub.raw == nil {
			f.fail("per_layer_config", "layer %d: %s is not an object", i, perLayer[k])
			continue
		}
		dims[i][0] = sub.int("head_dim", hd)
		dims[i][1] = kvHeads(sub, "num_key_value_heads", c.Heads, kv)
		for _, key := range sortedKeys(sub.raw) {
			if !sub.used[key] {
				sub.fail(key, "overriding it per layer is not supported")
			}
		}
		if sub.err != nil {
			f.fail("per_layer_config", "layer %d: %v", i, sub.err)
		}
	}
	for i, d := range dims {
		if d[0] == 0 || d[0]%2 != 0 {
			f.fail("head_dim", "layer %d: %d is not a positive even number", i, d[0])
		}
		if perLayer == nil || types[i] != fullAttention {
			continue
		}
		// Both spellings given: they must describe the same model.
		if f.has("global_head_dim") && d[0] != globalHD {
			f.fail("global_head_dim", "%d, but per_layer_config gives full layer %d a head dim of %d", globalHD, i, d[0])
		}
		if f.has("num_global_key_value_heads") && kEqV && d[1] != globalKV {
			f.fail("num_global_key_value_heads", "%d, but per_layer_config gives full layer %d %d", globalKV, i, d[1])
		}
	}
	return dims
}

func lastOfType(types []string, t string) int {
	for i := len(types) - 1; i >= 0; i-- {
		if types[i] == t {
			return i
		}
	}
	return -1
}

// gemmaLayerTypes resolves layer_types: given, or five sliding layers then a
// full one. As in transformers the last layer is always full attention.
func gemmaLayerTypes(f *fields, n int) []string {
	types := layerTypes(f, n, 6)
	if n > 0 {
		types[n-1] = fullAttention
	}
	return types
}

// layerTypes reads layer_types, or makes every pattern-th layer full and
// the others sliding.
func layerTypes(f *fields, n, pattern int) []string {
	types := f.strs("layer_types")
	if types == nil {
		types = make([]string, n)
		for i := range types {
			types[i] = slidingAttention
			if (i+1)%pattern == 0 {
				types[i] = fullAttention
			}
		}
	}
	if len(types) != n {
		f.fail("layer_types", "has %d entries for %d layers", len(types), n)
		return make([]string, n)
	}
	for i, t := range types {
		if t != fullAttention && t != slidingAttention {
			f.fail("layer_types", "layer %d: %q is not full_attention or sliding_attention", i, t)
		}
	}
	return types
}

// gemmaRopes reads rope_parameters, an object keyed by layer type; each
// layer resolves its entry for its own head dim.
func gemmaRopes(f *fields, types []string) map[string]map[string]json.RawMessage {
	params := rawObject(f, "rope_parameters")
	if params == nil {
		params = map[string]json.RawMessage{
			slidingAttention: json.RawMessage(`{"rope_type": "default", "rope_theta": 10000.0}`),
			fullAttention:    json.RawMessage(`{"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0}`),
		}
	}
	out := map[string]map[string]json.RawMessage{}
	for _, t := range []string{slidingAttention, fullAttention} {
		if !slices.Contains(types, t) {
			continue
		}
		v, ok := params[t]
		if !ok {
			f.fail("rope_parameters", "no entry for %s", t)
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v, &m); err != nil || m == nil {
			f.fail("rope_parameters", "%s: %s is not an object", t, v)
			continue
		}
		out[t] = m
	}
	for _, k := range sortedKeys(params) {
		if k != slidingAttention && k != fullAttention {
			f.fail("rope_parameters", "%q is not a layer type", k)
		}
	}
	return out
}

// gemmaMoE reads the MoE block's fields; the block runs beside the dense
// MLP of every layer when enable_moe_block is true.
func gemmaMoE(f *fields, c *Config) bool {
	if !f.bool("enable_moe_block", false) {
		for _, k := range []string{"num_experts", "top_k_experts", "moe_intermediate_size"} {
			f.take(k) // unused without the block, as in transformers
		}
		return false
	}
	c.MoE = &MoE{
		Experts:      f.need("num_experts"),
		TopK:         f.need("top_k_experts"),
		Intermediate: f.need("moe_intermediate_size"),
		NormTopK:     true,
		Router:       "gemma4",
	}
	if c.MoE.TopK > c.MoE.Experts {
		f.fail("top_k_experts", "%d is more than num_experts %d", c.MoE.TopK, c.MoE.Experts)
	}
	return true
}
