package hf

import "testing"

// FuzzParseConfig: any bytes give a config whose layers are consistent, or an
// error; never a panic.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(qwen3MoEConfig))
	f.Add([]byte(gemma4Config))
	f.Add([]byte(tinyMoE))
	f.Add([]byte(llamaConfig))
	f.Add([]byte(mixtralConfig))
	f.Add([]byte(gemma3Config))
	f.Add([]byte(phi3Config))
	f.Add([]byte(gemma2Config))
	f.Add([]byte(graniteConfig))
	f.Add([]byte(olmo2Config))
	f.Add([]byte(qwen2MoEConfig))
	f.Add([]byte(`{"model_type": "gemma3", "text_config": ` + gemma3Config + `, "vision_config": {}}`))
	f.Add([]byte(`{"model_type": "mistral", "vocab_size": 8, "hidden_size": 8, "intermediate_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "sliding_window": null}`))
	f.Add([]byte(`{"model_type": "qwen3", "rope_parameters": {"rope_type": "linear"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		for i, l := range c.Layers {
			if l.HeadDim <= 0 || l.KVHeads <= 0 || c.Heads%l.KVHeads != 0 || l.Rope.RotaryDim > l.HeadDim || l.KVFrom >= i {
				t.Fatalf("accepted an inconsistent layer %d: %+v", i, l)
			}
		}
	})
}
