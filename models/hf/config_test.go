package hf

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Qwen3-30B-A3B's config.json, as published (legacy rope fields).
const qwen3MoEConfig = `{
  "architectures": ["Qwen3MoeForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 151643, "decoder_sparse_step": 1, "eos_token_id": 151645, "head_dim": 128,
  "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 6144,
  "max_position_embeddings": 40960, "max_window_layers": 48, "mlp_only_layers": [],
  "model_type": "qwen3_moe", "moe_intermediate_size": 768, "norm_topk_prob": true,
  "num_attention_heads": 32, "num_experts": 128, "num_experts_per_tok": 8, "num_hidden_layers": 48,
  "num_key_value_heads": 4, "output_router_logits": false, "rms_norm_eps": 1e-06, "rope_scaling": null,
  "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001, "sliding_window": null,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.51.0",
  "use_cache": true, "use_sliding_window": false, "vocab_size": 151936}`

// summary prints a config compactly, one line per run of equal layers.
func summary(c *Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s vocab=%d hidden=%d heads=%d inter=%d eps=%g act=%s tie=%v embed=%.4g attn=%.4g softcap=%g qk=%v v=%v max=%d bias=%v/%v/%v\n",
		c.Arch, c.Vocab, c.Hidden, c.Heads, c.Intermediate, c.RMSNormEps, c.Activation, c.TieEmbed, c.EmbedScale, c.AttnScale, c.FinalSoftcap, c.QKNorm, c.VNorm, c.MaxPositions,
		c.QKVBias, c.OBias, c.MLPBias)
	if c.MoE != nil {
		fmt.Fprintf(&b, "moe %+v\n", *c.MoE)
	}
	if c.PerLayer != nil {
		fmt.Fprintf(&b, "per-layer %+v\n", *c.PerLayer)
	}
	for i := 0; i < len(c.Layers); {
		j := i
		for j < len(c.Layers) && fmt.Sprint(c.Layers[j]) == fmt.Sprint(c.Layers[i]) {
			j++
		}
		fmt.Fprintf(&b, "layers %d-%d %+v\n", i, j-1, c.Layers[i])
		i = j
	}
	return b.String()
}

// wantSummary parses cfg and requires its summary to be want.
func wantSummary(t *testing.T, cfg, want string) *Config {
	t.Helper()
	c, err := ParseConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(c); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	return c
}

func TestQwen3MoEConfig(t *testing.T) {
	wantSummary(t, qwen3MoEConfig, `qwen3_moe vocab=151936 hidden=2048 heads=32 inter=6144 eps=1e-06 act=silu tie=false embed=1 attn=0.08839 softcap=0 qk=true v=false max=40960 bias=false/false/false
moe {Experts:128 TopK:8 Intermediate:768 NormTopK:true Shared:0 Router:softmax}
layers 0-47 {Sliding:false Window:0 HeadDim:128 KVHeads:4 KEqV:false KVFrom:-1 Rope:{Type:default Theta:1e+06 Factor:1 RotaryDim:128 HeadDim:128 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:false MoE:true Intermediate:6144}
`)
}

// mlp_only_layers and decoder_sparse_step choose the dense layers.
func TestQwen3MoESparseStep(t *testing.T) {
	cfg := strings.Replace(qwen3MoEConfig, `"mlp_only_layers": []`, `"mlp_only_layers": [5]`, 1)
	cfg = strings.Replace(cfg, `"decoder_sparse_step": 1`, `"decoder_sparse_step": 2`, 1)
	cfg = strings.Replace(cfg, `"num_hidden_layers": 48`, `"num_hidden_layers": 8`, 1)
	c, err := ParseConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	var moe []int
	for i, l := range c.Layers {
		if l.MoE == l.MLP {
			t.Errorf("layer %d: MoE=%v MLP=%v, want exactly one", i, l.MoE, l.MLP)
		}
		if l.MoE {
			moe = append(moe, i)
		}
	}
	if fmt.Sprint(moe) != "[1 3 7]" {
		t.Errorf("MoE layers %v, want [1 3 7]", moe)
	}
}

// A Qwen3 with new-style rope_parameters and sliding layers.
func TestQwen3Config(t *testing.T) {
	cfg := `{"model_type": "qwen3", "vocab_size": 1000, "max_position_embeddings": 4096, "hidden_size": 64, "intermediate_size": 128,
	"num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
	"rope_parameters": {"rope_type": "linear", "rope_theta": 10000, "factor": 2.0},
	"use_sliding_window": true, "sliding_window": 16, "max_window_layers": 2, "tie_word_embeddings": true}`
	wantSummary(t, cfg, `qwen3 vocab=1000 hidden=64 heads=4 inter=128 eps=1e-06 act=silu tie=true embed=1 attn=0.1768 softcap=0 qk=true v=false max=4096 bias=false/false/false
layers 0-1 {Sliding:false Window:0 HeadDim:32 KVHeads:2 KEqV:false KVFrom:-1 Rope:{Type:linear Theta:10000 Factor:2 RotaryDim:32 HeadDim:32 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:128}
layers 2-3 {Sliding:true Window:16 HeadDim:32 KVHeads:2 KEqV:false KVFrom:-1 Rope:{Type:linear Theta:10000 Factor:2 RotaryDim:32 HeadDim:32 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:128}
`)
}

const gemma4Config = `{"model_type": "gemma4_text", "vocab_size": 512, "max_position_embeddings": 4096, "hidden_size": 64, "intermediate_size": 96,
	"num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
	"global_head_dim": 32, "num_global_key_value_heads": 1, "attention_k_eq_v": true,
	"layer_types": ["sliding_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "sliding_attention"],
	"sliding_window": 8, "final_logit_softcapping": 30.0, "hidden_size_per_layer_input": 0,
	"enable_moe_block": true, "num_experts": 8, "top_k_experts": 2, "moe_intermediate_size": 24,
	"num_kv_shared_layers": 2, "use_double_wide_mlp": true,
	"rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
	  "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0}}}`

func TestGemma4Config(t *testing.T) {
	wantSummary(t, gemma4Config, `gemma4_text vocab=512 hidden=64 heads=4 inter=96 eps=1e-06 act=gelu_pytorch_tanh tie=true embed=8 attn=1 softcap=30 qk=true v=true max=4096 bias=false/false/false
moe {Experts:8 TopK:2 Intermediate:24 NormTopK:true Shared:0 Router:gemma4}
layers 0-1 {Sliding:true Window:8 HeadDim:16 KVHeads:2 KEqV:false KVFrom:-1 Rope:{Type:default Theta:10000 Factor:1 RotaryDim:16 HeadDim:16 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:true Intermediate:96}
layers 2-2 {Sliding:false Window:0 HeadDim:32 KVHeads:1 KEqV:true KVFrom:-1 Rope:{Type:proportional Theta:1e+06 Factor:1 RotaryDim:8 HeadDim:32 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:true Intermediate:96}
layers 3-3 {Sliding:true Window:8 HeadDim:16 KVHeads:2 KEqV:false KVFrom:-1 Rope:{Type:default Theta:10000 Factor:1 RotaryDim:16 HeadDim:16 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:true Intermediate:96}
layers 4-4 {Sliding:true Window:8 HeadDim:16 KVHeads:2 KEqV:false KVFrom:3 Rope:{Type:default Theta:10000 Factor:1 RotaryDim:16 HeadDim:16 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:true Intermediate:192}
layers 5-5 {Sliding:false Window:0 HeadDim:32 KVHeads:1 KEqV:true KVFrom:2 Rope:{Type:proportional Theta:1e+06 Factor:1 RotaryDim:8 HeadDim:32 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:true Intermediate:192}
`)
}

// Every field that changes the computation and is not supported is refused
// by name; so is every field tpucc does not know.
func TestConfigErrors(t *testing.T) {
	q := func(old, new string) string { return strings.Replace(qwen3MoEConfig, old, new, 1) }
	g := func(old, new string) string { return strings.Replace(gemma4Config, old, new, 1) }
	cases := []struct{ cfg, want string }{
		{`{"model_type": "falcon"}`, `field "model_type": architecture "falcon" is not supported (tpucc loads qwen3, qwen3_moe, qwen2, qwen2_moe, llama, mistral, mixtral, phi3, granite, olmo2, gemma2, gemma3_text, gemma4_text and the text models of gemma3 and gemma4)`},
		{`{"hidden_size": 3}`, `field "model_type": missing`},
		{`[1]`, `a JSON array where an object is expected`},
		{`{"model_type": "qwen3", "model_type": "qwen3"}`, `duplicate key "model_type" in the object at $`},
		{q(`"vocab_size": 151936`, `"vocab_size": 151936, "attn_logit_softcapping": 50.0`), `field "attn_logit_softcapping": not known to tpucc for model_type "qwen3_moe", so it cannot be honoured`},
		{q(`"hidden_act": "silu"`, `"hidden_act": "gelu"`), `field "hidden_act": "gelu" is not supported (tpucc computes only "silu")`},
		{g(`"sliding_window": 8`, `"sliding_window": 8, "attention_bias": true`), `field "attention_bias": true is not supported (tpucc computes only false)`},
		{q(`"attention_bias": false`, `"attention_bias": 1`), `field "attention_bias": 1 is not true or false`},
		{q(`"rope_scaling": null`, `"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768, "attention_factor": 1.2}`), `field "rope_parameters": rope parameter "attention_factor" is not supported for rope type "yarn"`},
		{q(`"rope_scaling": null`, `"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768, "truncate": false}`), `field "rope_parameters": yarn rope with truncate false is not supported`},
		{q(`"rope_scaling": null`, `"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "beta_fast": 0}`), `field "rope_parameters": yarn rope needs a positive original_max_position_embeddings, beta_fast and beta_slow`},
		{q(`"rope_scaling": null`, `"rope_scaling": {"type": "linear", "factor": 4.0, "beta": 1}`), `field "rope_parameters": rope parameter "beta" is not supported for rope type "linear"`},
		{q(`"rope_scaling": null`, `"rope_parameters": {"rope_theta": 10000.0}`), `field "rope_theta": 1000000.0 disagrees with rope_parameters' 10000.0`},
		{q(`"num_experts_per_tok": 8`, `"num_experts_per_tok": 200`), `field "num_experts_per_tok": 200 is more than num_experts 128`},
		{q(`"num_hidden_layers": 48`, `"num_hidden_layers": 48151936`), `field "num_hidden_layers": 48151936 is more layers than this loader takes (4096)`},
		{g(`"num_hidden_layers": 6`, `"num_hidden_layers": 2147483647`), `field "num_hidden_layers": 2147483647 is more layers than this loader takes (4096)`},
		{q(`"mlp_only_layers": []`, `"mlp_only_layers": [48]`), `field "mlp_only_layers": layer 48 does not exist (num_hidden_layers is 48)`},
		{q(`"mlp_only_layers": []`, `"mlp_only_layers": "all"`), `field "mlp_only_layers": "all" is not a list of non-negative integers`},
		{q(`"decoder_sparse_step": 1`, `"decoder_sparse_step": 0`), `field "decoder_sparse_step": must be positive`},
		{q(`"use_sliding_window": false`, `"use_sliding_window": true`), `field "use_sliding_window": true is not supported for qwen3_moe`},
		{q(`"num_key_value_heads": 4`, `"num_key_value_heads": 5`), `field "num_key_value_heads": 5 does not divide num_attention_heads 32`},
		{q(`"num_experts": 128`, `"num_experts": 1.5`), `field "num_experts": 1.5 is not a non-negative integer`},
		{q(`"moe_intermediate_size": 768,`, ``), `field "moe_intermediate_size": missing`},
		{q(`"head_dim": 128`, `"head_dim": 127`), `field "head_dim": 127 is not a positive even number`},
		{q(`"norm_topk_prob": true`, `"norm_topk_prob": 1`), `field "norm_topk_prob": 1 is not true or false`},
		{g(`"hidden_size_per_layer_input": 0`, `"hidden_size_per_layer_input": 0, "use_bidirectional_attention": "all"`), `field "use_bidirectional_attention": "all" is not supported (tpucc computes only null)`},
		{g(`"sliding_window": 8`, `"sliding_window": 8, "per_layer_config": {"2": {"sliding_window": 4}}`), `field "per_layer_config": layer 2: field "sliding_window": overriding it per layer is not supported`},
		{g(`"sliding_window": 8`, `"sliding_window": 8, "per_layer_config": {"6": {"head_dim": 4}}`), `field "per_layer_config": "6" is not a layer index`},
		{g(`"sliding_window": 8`, `"sliding_window": 8, "layers_per_step": 2`), `field "layers_per_step": not known to tpucc for model_type "gemma4_text", so it cannot be honoured`},
		{g(`"sliding_window": 8`, `"sliding_window": 8, "per_layer_config": {"2": {"head_dim": 32, "num_key_value_heads": 1}, "5": {"head_dim": 32}}`), `field "num_global_key_value_heads": 1, but per_layer_config gives full layer 5 2`},
		{g(`"sliding_window": 8`, `"sliding_window": 8, "per_layer_config": {"2": {"head_dim": 64}}`), `field "global_head_dim": 32, but per_layer_config gives full layer 2 a head dim of 64`},
		{g(`"num_global_key_value_heads": 1,`, `"per_layer_config": {"2": {"head_dim": 32, "num_key_value_heads": 1}, "5": {"head_dim": 32, "num_key_value_heads": 2}},`), `field "num_kv_shared_layers": layer 5 reuses layer 2's keys and values, but its heads are 32 wide, 2 for keys and values, and layer 2's 32 wide, 1`},
		{q(`"num_experts": 128`, `"num_experts": 128, "num_local_experts": 64`), `field "num_experts": 128 disagrees with num_local_experts 64`},
		{g(`"rope_type": "proportional"`, `"rope_type": "su"`), `field "rope_parameters.full_attention": rope type "su" is not supported (tpucc computes default, linear, proportional, llama3, yarn, longrope, dynamic)`},
		{g(`"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},`, ``), `field "rope_parameters": no entry for sliding_attention`},
		{g(`"full_attention", "sliding_attention"`, `"full_attention", "global"`), `field "layer_types": layer 3: "global" is not full_attention or sliding_attention`},
		{g(`"num_kv_shared_layers": 2`, `"num_kv_shared_layers": 5`), `field "num_kv_shared_layers": layer 2 (full_attention) shares keys and values, but no earlier layer is full_attention`},
		{g(`"top_k_experts": 2`, `"top_k_experts": 9`), `field "top_k_experts": 9 is more than num_experts 8`},
		{g(`"rope_theta": 10000.0}`, `"rope_theta": 10000.0, "partial_rotary_factor": 0.01}`), `field "rope_parameters.sliding_attention": partial_rotary_factor 0.01 is not supported for rope type "default"`},
		{q(`"max_position_embeddings": 40960`, `"max_position_embeddings": 0`), `field "max_position_embeddings": must be positive`},
		{q(`"max_position_embeddings": 40960`, `"max_position_embeddings": -1`), `field "max_position_embeddings": -1 is not a non-negative integer`},
		{q(`"max_position_embeddings": 40960,`, ``), `field "max_position_embeddings": missing`},
		{g(`"max_position_embeddings": 4096`, `"max_position_embeddings": 0`), `field "max_position_embeddings": must be positive`},
		{`{"model_type":"qwen3","id2label":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, `invalid JSON: nested deeper than 64 levels at byte 96`},
	}
	for _, c := range cases {
		_, err := ParseConfig([]byte(c.cfg))
		if err == nil || err.Error() != c.want {
			t.Errorf("%.60s...:\n got %v\nwant %s", c.cfg, err, c.want)
		}
	}
}

// per_layer_config, as transformers saves it, gives full layers their head
// dim instead of global_head_dim; num_local_experts is num_experts.
func TestSavedSpellings(t *testing.T) {
	cfg := strings.Replace(gemma4Config, `"global_head_dim": 32, "num_global_key_value_heads": 1, "attention_k_eq_v": true,`,
		`"per_layer_config": {"2": {"head_dim": 64, "num_key_value_heads": 4}, "5": {"head_dim": 64, "num_key_value_heads": 4}},`, 1)
	c, err := ParseConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range c.Layers {
		got = append(got, fmt.Sprintf("%d/%d/%d", l.HeadDim, l.KVHeads, l.Rope.RotaryDim))
	}
	if g := strings.Join(got, " "); g != "16/2/16 16/2/16 64/4/16 16/2/16 16/2/16 64/4/16" {
		t.Errorf("head dim/KV heads/rotary dim per layer: %s", g)
	}
	q, err := ParseConfig([]byte(strings.Replace(qwen3MoEConfig, `"num_experts": 128`, `"num_local_experts": 128`, 1)))
	if err != nil || q.MoE.Experts != 128 {
		t.Errorf("num_local_experts: %v", err)
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(`{"model_type": "bert"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(dir)
	want := filepath.Join(dir, ConfigFile) + `: field "model_type": architecture "bert" is not supported (tpucc loads qwen3, qwen3_moe, qwen2, qwen2_moe, llama, mistral, mixtral, phi3, granite, olmo2, gemma2, gemma3_text, gemma4_text and the text models of gemma3 and gemma4)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// Llama 3.1's config as the Hub has it (sizes shrunk): the legacy
// rope_scaling of type llama3 with rope_theta beside it, attention and MLP
// biases, pretraining_tp.
const llamaConfig = `{"architectures": ["LlamaForCausalLM"], "attention_bias": true, "attention_dropout": 0.0,
	"bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009], "hidden_act": "silu", "hidden_size": 64,
	"initializer_range": 0.02, "intermediate_size": 112, "max_position_embeddings": 131072, "mlp_bias": true,
	"model_type": "llama", "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
	"pretraining_tp": 1, "rms_norm_eps": 1e-05,
	"rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
	"rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.43.0.dev0",
	"use_cache": true, "vocab_size": 256}`

func TestLlamaConfig(t *testing.T) {
	wantSummary(t, llamaConfig, `llama vocab=256 hidden=64 heads=4 inter=112 eps=1e-05 act=silu tie=false embed=1 attn=0.25 softcap=0 qk=false v=false max=131072 bias=true/true/true
layers 0-1 {Sliding:false Window:0 HeadDim:16 KVHeads:2 KEqV:false KVFrom:-1 Rope:{Type:llama3 Theta:500000 Factor:8 RotaryDim:16 HeadDim:16 LowFreq:1 HighFreq:4 OrigMax:8192 Short:[] Attn:0} MLP:true MoE:false Intermediate:112}
`)
}

// Mistral's sliding_window: a number windows every layer, null is full
// attention, absent is MistralConfig's 4096. Qwen2: no q/k norms, biases on
// q, k and v.
func TestMistralAndQwen2Config(t *testing.T) {
	const mistral = `{"model_type": "mistral", "vocab_size": 256, "max_position_embeddings": 4096, "hidden_size": 64, "intermediate_size": 96,
	"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 32, "rope_theta": 1000000.0%s}`
	for _, c := range []struct{ field, want string }{
		{`, "sliding_window": 6`, "true/6"}, {`, "sliding_window": null`, "false/0"}, {``, "true/4096"},
	} {
		cfg, err := ParseConfig(fmt.Appendf(nil, mistral, c.field))
		if err != nil {
			t.Fatal(err)
		}
		l := cfg.Layers[1]
		if got := fmt.Sprintf("%v/%d", l.Sliding, l.Window); got != c.want || cfg.QKNorm || cfg.QKVBias || l.HeadDim != 32 || l.Rope.Theta != 1e6 {
			t.Errorf("%q: sliding/window %s, want %s (config %+v)", c.field, got, c.want, cfg)
		}
	}
	qwen2 := `{"model_type": "qwen2", "vocab_size": 256, "max_position_embeddings": 4096, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 4,
	"num_attention_heads": 4, "num_key_value_heads": 2, "use_sliding_window": true, "sliding_window": 8, "max_window_layers": 3,
	"rope_theta": 1000000.0, "tie_word_embeddings": true}`
	wantSummary(t, qwen2, `qwen2 vocab=256 hidden=64 heads=4 inter=96 eps=1e-06 act=silu tie=true embed=1 attn=0.25 softcap=0 qk=false v=false max=4096 bias=true/false/false
layers 0-2 {Sliding:false Window:0 HeadDim:16 KVHeads:2 KEqV:false KVFrom:-1 Rope:{Type:default Theta:1e+06 Factor:1 RotaryDim:16 HeadDim:16 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:96}
layers 3-3 {Sliding:true Window:8 HeadDim:16 KVHeads:2 KEqV:false KVFrom:-1 Rope:{Type:default Theta:1e+06 Factor:1 RotaryDim:16 HeadDim:16 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:96}
`)
}

// The errors of the Llama family's own fields.
func TestLlamaConfigErrors(t *testing.T) {
	l := func(old, new string) string { return strings.Replace(llamaConfig, old, new, 1) }
	cases := []struct{ cfg, want string }{
		{l(`"high_freq_factor": 4.0`, `"high_freq_factor": 0.5`), `field "rope_parameters": llama3 rope needs 0 < low_freq_factor < high_freq_factor and a positive original_max_position_embeddings`},
		{l(`"original_max_position_embeddings": 8192, `, `"original_max_position_embeddings": 0, `), `field "rope_parameters": llama3 rope needs 0 < low_freq_factor < high_freq_factor and a positive original_max_position_embeddings`},
		{l(`"factor": 8.0, `, ``), `field "rope_parameters": factor is missing or not positive`},
		{l(`"rope_type": "llama3"`, `"rope_type": "su"`), `field "rope_parameters": rope type "su" is not supported (tpucc computes default, linear, proportional, llama3, yarn, longrope, dynamic)`},
		{l(`"rope_theta": 500000.0`, `"rope_theta": -1`), `field "rope_parameters": rope_theta is not positive`},
		{l(`"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"`, `"rope_type": "dynamic"`), `field "rope_parameters": factor is missing or not positive`},
		{l(`"mlp_bias": true`, `"mlp_bias": "yes"`), `field "mlp_bias": "yes" is not true or false`},
		{l(`"use_cache": true`, `"use_cache": true, "sliding_window": 8`), `field "sliding_window": not known to tpucc for model_type "llama", so it cannot be honoured`},
		{strings.Replace(l(`"model_type": "llama"`, `"model_type": "mistral"`), `"mlp_bias": true`, `"sliding_window": 4`, 1), `field "attention_bias": not known to tpucc for model_type "mistral", so it cannot be honoured`},
		{`{"model_type": "mistral", "vocab_size": 8, "max_position_embeddings": 8, "hidden_size": 8, "intermediate_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "sliding_window": 0}`, `field "sliding_window": must be positive`},
		{`{"model_type": "qwen2", "vocab_size": 8, "max_position_embeddings": 8, "hidden_size": 8, "intermediate_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "attention_bias": false}`, `field "attention_bias": not known to tpucc for model_type "qwen2", so it cannot be honoured`},
	}
	for _, c := range cases {
		_, err := ParseConfig([]byte(c.cfg))
		if err == nil || err.Error() != c.want {
			t.Errorf("%.60s...:\n got %v\nwant %s", c.cfg, err, c.want)
		}
	}
}

// Llama 3.1's inverse frequencies for head_dim 128, θ = 500000, factor 8,
// low 1, high 4, 8192 positions: transformers' _compute_llama3_parameters
// printed these: kept (wavelength under 2048), interpolated (2048 to 8192)
// and divided by 8 (over 8192). It computes in float32, hence 2e-6.
func TestLlama3InvFreq(t *testing.T) {
	r := Rope{Type: "llama3", Theta: 500000, Factor: 8, RotaryDim: 128, HeadDim: 128, LowFreq: 1, HighFreq: 4, OrigMax: 8192}
	inv := r.InvFreq()
	for i, want := range map[int]float64{0: 1, 28: 3.211446106e-03, 29: 2.166570630e-03, 32: 5.248460220e-04,
		35: 9.556212171e-05, 36: 7.784655463e-05, 63: 3.068925878e-07} {
		if d := math.Abs(inv[i]-want) / want; d > 2e-6 {
			t.Errorf("inv_freq[%d] = %.9g, want %.9g", i, inv[i], want)
		}
	}
}

// Mixtral-8x7B's config.json as published: a MoE block of 8 experts, top-2,
// in every layer.
const mixtralConfig = `{"architectures": ["MixtralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
	"hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
	"max_position_embeddings": 32768, "model_type": "mixtral", "num_attention_heads": 32, "num_experts_per_tok": 2,
	"num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8, "output_router_logits": false,
	"rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.02, "sliding_window": null,
	"tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.36.0.dev0", "use_cache": true, "vocab_size": 32000}`

func TestMixtralConfig(t *testing.T) {
	wantSummary(t, mixtralConfig, `mixtral vocab=32000 hidden=4096 heads=32 inter=14336 eps=1e-05 act=silu tie=false embed=1 attn=0.08839 softcap=0 qk=false v=false max=32768 bias=false/false/false
moe {Experts:8 TopK:2 Intermediate:14336 NormTopK:true Shared:0 Router:softmax}
layers 0-31 {Sliding:false Window:0 HeadDim:128 KVHeads:8 KEqV:false KVFrom:-1 Rope:{Type:default Theta:1e+06 Factor:1 RotaryDim:128 HeadDim:128 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:false MoE:true Intermediate:14336}
`)
	// Without rope_theta, MixtralConfig's default is 1e6; without
	// sliding_window, none.
	bare := strings.NewReplacer(`"rope_theta": 1000000.0, `, ``, `"sliding_window": null,`, ``).Replace(mixtralConfig)
	if c, err := ParseConfig([]byte(bare)); err != nil || c.Layers[0].Rope.Theta != 1e6 || c.Layers[0].Sliding {
		t.Errorf("defaults: %v, %+v", err, c)
	}
	m := func(old, new string) string { return strings.Replace(mixtralConfig, old, new, 1) }
	for _, c := range []struct{ cfg, want string }{
		{m(`"num_experts_per_tok": 2`, `"num_experts_per_tok": 9`), `field "num_experts_per_tok": 9 is more than num_local_experts 8`},
		{m(`"num_local_experts": 8`, `"num_local_experts": 0`), `field "num_experts_per_tok": 2 of 0 experts: both must be positive`},
		{m(`"use_cache": true`, `"use_cache": true, "mlp_bias": false`), `field "mlp_bias": not known to tpucc for model_type "mixtral", so it cannot be honoured`},
	} {
		if _, err := ParseConfig([]byte(c.cfg)); err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}

// Gemma 3 1B's config.json as published: legacy rope fields (rope_theta for
// full layers, rope_local_base_freq for sliding ones), the sliding pattern.
const gemma3Config = `{"architectures": ["Gemma3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
	"attn_logit_softcapping": null, "bos_token_id": 2, "cache_implementation": "hybrid", "eos_token_id": 1,
	"final_logit_softcapping": null, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152,
	"initializer_range": 0.02, "intermediate_size": 6912, "max_position_embeddings": 32768, "model_type": "gemma3_text",
	"num_attention_heads": 4, "num_hidden_layers": 26, "num_key_value_heads": 1, "pad_token_id": 0,
	"query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000, "rope_scaling": null,
	"rope_theta": 1000000, "sliding_window": 512, "sliding_window_pattern": 6, "torch_dtype": "bfloat16",
	"transformers_version": "4.50.0.dev0", "use_cache": true, "vocab_size": 262144}`

func TestGemma3Config(t *testing.T) {
	c := wantSummary(t, gemma3Config, `gemma3_text vocab=262144 hidden=1152 heads=4 inter=6912 eps=1e-06 act=gelu_pytorch_tanh tie=true embed=33.94 attn=0.0625 softcap=0 qk=true v=false max=32768 bias=false/false/false
layers 0-4 {Sliding:true Window:512 HeadDim:256 KVHeads:1 KEqV:false KVFrom:-1 Rope:{Type:default Theta:10000 Factor:1 RotaryDim:256 HeadDim:256 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:6912}
layers 5-5 {Sliding:false Window:0 HeadDim:256 KVHeads:1 KEqV:false KVFrom:-1 Rope:{Type:default Theta:1e+06 Factor:1 RotaryDim:256 HeadDim:256 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:6912}
layers 6-10 {Sliding:true Window:512 HeadDim:256 KVHeads:1 KEqV:false KVFrom:-1 Rope:{Type:default Theta:10000 Factor:1 RotaryDim:256 HeadDim:256 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:6912}
layers 11-11 {Sliding:false Window:0 HeadDim:256 KVHeads:1 KEqV:false KVFrom:-1 Rope:{Type:default Theta:1e+06 Factor:1 RotaryDim:256 HeadDim:256 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:6912}
layers 12-16 {Sliding:true Window:512 HeadDim:256 KVHeads:1 KEqV:false KVFrom:-1 Rope:{Type:default Theta:10000 Factor:1 RotaryDim:256 HeadDim:256 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:6912}
layers 17-17 {Sliding:false Window:0 HeadDim:256 KVHeads:1 KEqV:false KVFrom:-1 Rope:{Type:default Theta:1e+06 Factor:1 RotaryDim:256 HeadDim:256 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:6912}
layers 18-22 {Sliding:true Window:512 HeadDim:256 KVHeads:1 KEqV:false KVFrom:-1 Rope:{Type:default Theta:10000 Factor:1 RotaryDim:256 HeadDim:256 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:6912}
layers 23-23 {Sliding:false Window:0 HeadDim:256 KVHeads:1 KEqV:false KVFrom:-1 Rope:{Type:default Theta:1e+06 Factor:1 RotaryDim:256 HeadDim:256 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:6912}
layers 24-25 {Sliding:true Window:512 HeadDim:256 KVHeads:1 KEqV:false KVFrom:-1 Rope:{Type:default Theta:10000 Factor:1 RotaryDim:256 HeadDim:256 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:6912}
`)
	if !c.NormOffset || !c.Gemma() {
		t.Errorf("NormOffset %v, Gemma() %v", c.NormOffset, c.Gemma())
	}
	// Gemma 3 4B's text config scales the full layers' rope linearly by 8.
	scaled := strings.Replace(gemma3Config, `"rope_scaling": null`, `"rope_scaling": {"factor": 8.0, "rope_type": "linear"}`, 1)
	if c, err := ParseConfig([]byte(scaled)); err != nil || c.Layers[5].Rope.Factor != 8 || c.Layers[0].Rope.Factor != 1 {
		t.Errorf("rope_scaling: %v, %+v %+v", err, c.Layers[5].Rope, c.Layers[0].Rope)
	}
	g := func(old, new string) string { return strings.Replace(gemma3Config, old, new, 1) }
	for _, c := range []struct{ cfg, want string }{
		{g(`"attn_logit_softcapping": null`, `"attn_logit_softcapping": 50.0`), `field "attn_logit_softcapping": 50.0 is not supported (tpucc computes only null)`},
		{g(`"use_cache": true`, `"use_cache": true, "use_bidirectional_attention": true`), `field "use_bidirectional_attention": true is not supported (tpucc computes causal attention)`},
		{g(`"sliding_window": 512`, `"sliding_window": null`), `field "sliding_window": null, but layer 0 is sliding_attention`},
		{g(`"rope_scaling": null`, `"rope_parameters": {}`), `field "rope_local_base_freq": given beside rope_parameters`},
		{g(`"query_pre_attn_scalar": 256`, `"query_pre_attn_scalar": 0`), `field "query_pre_attn_scalar": 0 is not positive`},
		{g(`"sliding_window_pattern": 6`, `"sliding_window_pattern": 0`), `field "sliding_window_pattern": must be positive`},
		{g(`"rope_scaling": null`, `"rope_scaling": "linear"`), `field "rope_scaling": "linear" is not an object`},
	} {
		if _, err := ParseConfig([]byte(c.cfg)); err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}

// Phi-3-mini-4k-instruct's config.json as published: one window of 2047
// tokens for every layer, remote-code classes in auto_map.
const phi3Config = `{"_name_or_path": "Phi-3-mini-4k-instruct", "architectures": ["Phi3ForCausalLM"], "attention_bias": false,
	"attention_dropout": 0.0, "auto_map": {"AutoConfig": "configuration_phi3.Phi3Config", "AutoModelForCausalLM": "modeling_phi3.Phi3ForCausalLM"},
	"bos_token_id": 1, "embd_pdrop": 0.0, "eos_token_id": 32000, "hidden_act": "silu", "hidden_size": 3072,
	"initializer_range": 0.02, "intermediate_size": 8192, "max_position_embeddings": 4096, "model_type": "phi3",
	"num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32, "original_max_position_embeddings": 4096,
	"pad_token_id": 32000, "resid_pdrop": 0.0, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000.0,
	"sliding_window": 2047, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.40.2",
	"use_cache": true, "vocab_size": 32064}`

func TestPhi3Config(t *testing.T) {
	wantSummary(t, phi3Config, `phi3 vocab=32064 hidden=3072 heads=32 inter=8192 eps=1e-05 act=silu tie=false embed=1 attn=0.1021 softcap=0 qk=false v=false max=4096 bias=false/false/false
layers 0-31 {Sliding:true Window:2047 HeadDim:96 KVHeads:32 KEqV:false KVFrom:-1 Rope:{Type:default Theta:10000 Factor:1 RotaryDim:96 HeadDim:96 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:8192}
`)
	p := func(old, new string) string { return strings.Replace(phi3Config, old, new, 1) }
	for _, c := range []struct{ cfg, want string }{
		{p(`"rope_scaling": null`, `"rope_scaling": {"type": "longrope", "short_factor": [1.0], "long_factor": [2.0]}`),
			`field "rope_parameters": longrope needs short_factor and long_factor of rotary_dim/2 = 48 positive numbers`},
		{p(`"rope_scaling": null`, `"partial_rotary_factor": 0.7`), `field "rope_parameters": partial_rotary_factor 0.7 turns int(0.7 × 96) channels, not a positive even number`},
		{p(`"attention_bias": false`, `"attention_bias": true`), `field "attention_bias": true is not supported (tpucc computes only false)`},
	} {
		if _, err := ParseConfig([]byte(c.cfg)); err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}

// Gemma 2 2B's config.json as published: every other layer sliding, scores
// capped at 50 and logits at 30.
const gemma2Config = `{"architectures": ["Gemma2ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
	"attn_logit_softcapping": 50.0, "bos_token_id": 2, "cache_implementation": "hybrid", "eos_token_id": 1,
	"final_logit_softcapping": 30.0, "head_dim": 256, "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
	"hidden_size": 2304, "initializer_range": 0.02, "intermediate_size": 9216, "max_position_embeddings": 8192,
	"model_type": "gemma2", "num_attention_heads": 8, "num_hidden_layers": 26, "num_key_value_heads": 4, "pad_token_id": 0,
	"query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": 4096,
	"torch_dtype": "float32", "transformers_version": "4.42.4", "use_cache": true, "vocab_size": 256000}`

func TestGemma2Config(t *testing.T) {
	c, err := ParseConfig([]byte(gemma2Config))
	if err != nil {
		t.Fatal(err)
	}
	if c.AttnSoftcap != 50 || c.FinalSoftcap != 30 || c.QKNorm || !c.NormOffset || !c.Gemma() || c.AttnScale != 1.0/16 {
		t.Errorf("softcaps %v %v, qk norm %v, offset %v, scale %v", c.AttnSoftcap, c.FinalSoftcap, c.QKNorm, c.NormOffset, c.AttnScale)
	}
	for i, l := range c.Layers {
		if l.Sliding != (i%2 == 0) || l.Sliding && l.Window != 4096 || l.Rope.Theta != 10000 || l.HeadDim != 256 || l.KVHeads != 4 {
			t.Errorf("layer %d: %+v", i, l)
		}
	}
	// Absent softcaps are Gemma2Config's 50 and 30; null ones are none.
	bare := strings.NewReplacer(`"attn_logit_softcapping": 50.0, `, ``, `"final_logit_softcapping": 30.0, `, ``).Replace(gemma2Config)
	nulls := strings.NewReplacer(`"attn_logit_softcapping": 50.0`, `"attn_logit_softcapping": null`, `"final_logit_softcapping": 30.0`, `"final_logit_softcapping": null`).Replace(gemma2Config)
	for cfg, want := range map[string][2]float64{bare: {50, 30}, nulls: {0, 0}} {
		if c, err := ParseConfig([]byte(cfg)); err != nil || c.AttnSoftcap != want[0] || c.FinalSoftcap != want[1] {
			t.Errorf("softcaps: %v, want %v (%v)", c, want, err)
		}
	}
}

// Granite 3.1 8B's config.json as published: Llama with four multipliers.
const graniteConfig = `{"architectures": ["GraniteForCausalLM"], "attention_bias": false, "attention_dropout": 0.1,
	"attention_multiplier": 0.0078125, "bos_token_id": 0, "embedding_multiplier": 12.0, "eos_token_id": 0,
	"hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 12800,
	"logits_scaling": 16.0, "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "granite",
	"num_attention_heads": 32, "num_hidden_layers": 40, "num_key_value_heads": 8, "pad_token_id": 0,
	"residual_multiplier": 0.22, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000000.0,
	"tie_word_embeddings": true, "torch_dtype": "bfloat16", "transformers_version": "4.47.0", "use_cache": true, "vocab_size": 49155}`

func TestGraniteConfig(t *testing.T) {
	c := wantSummary(t, graniteConfig, `granite vocab=49155 hidden=4096 heads=32 inter=12800 eps=1e-05 act=silu tie=true embed=12 attn=0.007812 softcap=0 qk=false v=false max=131072 bias=false/false/false
layers 0-39 {Sliding:false Window:0 HeadDim:128 KVHeads:8 KEqV:false KVFrom:-1 Rope:{Type:default Theta:1e+07 Factor:1 RotaryDim:128 HeadDim:128 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:12800}
`)
	if c.ResidualScale != 0.22 || c.LogitScale != 16 {
		t.Errorf("residual %v logits %v", c.ResidualScale, c.LogitScale)
	}
	bad := strings.Replace(graniteConfig, `"logits_scaling": 16.0`, `"logits_scaling": 0`, 1)
	if _, err := ParseConfig([]byte(bad)); err == nil || err.Error() != `field "logits_scaling": 0 is not positive` {
		t.Errorf("got %v", err)
	}
}

// OLMo-2 7B's config.json as published: q and k normed over their whole
// projections.
const olmo2Config = `{"architectures": ["Olmo2ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
	"eos_token_id": 100257, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 11008,
	"max_position_embeddings": 4096, "model_type": "olmo2", "num_attention_heads": 32, "num_hidden_layers": 32,
	"num_key_value_heads": 32, "pad_token_id": 100277, "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 500000,
	"tie_word_embeddings": false, "torch_dtype": "float32", "transformers_version": "4.47.0.dev0", "use_cache": true, "vocab_size": 100352}`

func TestOlmo2Config(t *testing.T) {
	c := wantSummary(t, olmo2Config, `olmo2 vocab=100352 hidden=4096 heads=32 inter=11008 eps=1e-06 act=silu tie=false embed=1 attn=0.08839 softcap=0 qk=true v=false max=4096 bias=false/false/false
layers 0-31 {Sliding:false Window:0 HeadDim:128 KVHeads:32 KEqV:false KVFrom:-1 Rope:{Type:default Theta:500000 Factor:1 RotaryDim:128 HeadDim:128 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:true MoE:false Intermediate:11008}
`)
	if !c.QKNormFull {
		t.Error("OLMo 2's q/k norms are over the whole projections")
	}
}

// Qwen1.5-MoE-A2.7B's config.json as published: 60 experts top-4 without
// renormalising, and a shared expert of 5632.
const qwen2MoEConfig = `{"architectures": ["Qwen2MoeForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
	"decoder_sparse_step": 1, "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02,
	"intermediate_size": 5632, "max_position_embeddings": 8192, "max_window_layers": 21, "model_type": "qwen2_moe",
	"moe_intermediate_size": 1408, "norm_topk_prob": false, "num_attention_heads": 16, "num_experts": 60,
	"num_experts_per_tok": 4, "num_hidden_layers": 24, "num_key_value_heads": 16, "output_router_logits": false,
	"rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001, "shared_expert_intermediate_size": 5632,
	"sliding_window": 32768, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.36.0.dev0",
	"use_cache": true, "use_sliding_window": false, "vocab_size": 151936}`

func TestQwen2MoEConfig(t *testing.T) {
	wantSummary(t, qwen2MoEConfig, `qwen2_moe vocab=151936 hidden=2048 heads=16 inter=5632 eps=1e-06 act=silu tie=false embed=1 attn=0.08839 softcap=0 qk=false v=false max=8192 bias=true/false/false
moe {Experts:60 TopK:4 Intermediate:1408 NormTopK:false Shared:5632 Router:softmax}
layers 0-23 {Sliding:false Window:0 HeadDim:128 KVHeads:16 KEqV:false KVFrom:-1 Rope:{Type:default Theta:1e+06 Factor:1 RotaryDim:128 HeadDim:128 LowFreq:0 HighFreq:0 OrigMax:0 Short:[] Attn:0} MLP:false MoE:true Intermediate:5632}
`)
}

// TestArchitectures: every model_type of the one list has a reader, so
// what the help and the refusal name is what loads.
func TestArchitectures(t *testing.T) {
	for _, arch := range append(slices.Clone(Architectures), Wrappers...) {
		if reader(arch) == nil {
			t.Errorf("%s is listed but has no reader", arch)
		}
		_, err := ParseConfig([]byte(`{"model_type": "` + arch + `"}`))
		if err == nil || strings.Contains(err.Error(), "is not supported (tpucc loads") {
			t.Errorf("%s: %v", arch, err)
		}
	}
	if want := "qwen3, qwen3_moe, qwen2, qwen2_moe, llama, mistral, mixtral, phi3, granite, olmo2, gemma2, gemma3_text, gemma4_text and the text models of gemma3 and gemma4"; SupportedText() != want {
		t.Errorf("SupportedText() = %s, want %s", SupportedText(), want)
	}
}

// TestLongLayerList: a 2 MB mlp_only_layers of one layer repeated is read
// in linear time (it was searched once per layer: 9 s for this file at
// 4096 layers, twice that at the 4 MiB limit).
func TestLongLayerList(t *testing.T) {
	cfg := strings.Replace(qwen3MoEConfig, `"mlp_only_layers": []`, `"mlp_only_layers": [`+strings.TrimSuffix(strings.Repeat("0,", 1000000), ",")+`]`, 1)
	cfg = strings.Replace(cfg, `"num_hidden_layers": 48`, `"num_hidden_layers": 4096`, 1)
	c, err := ParseConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Layers) != 4096 || c.Layers[0].MoE || !c.Layers[1].MoE || !c.Layers[4095].MoE {
		t.Errorf("%d layers; layer 0 MoE %v, 1 %v, 4095 %v; want 4096, false, true, true", len(c.Layers), c.Layers[0].MoE, c.Layers[1].MoE, c.Layers[4095].MoE)
	}
}

// TestTrainingOnlyFields: dropout and the router's noise, which only
// transformers' training applies, are noted in TrainNoise when not 0 (Granite
// 3.1 publishes attention_dropout 0.1), and output_router_logits, which adds
// the routers' auxiliary loss to the training loss, in RouterAuxLoss.
func TestTrainingOnlyFields(t *testing.T) {
	c, err := ParseConfig([]byte(graniteConfig))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.TrainNoise, []string{"attention_dropout 0.1"}) || c.RouterAuxLoss {
		t.Errorf("granite: noise %q, aux loss %v", c.TrainNoise, c.RouterAuxLoss)
	}
	mixtral := strings.NewReplacer(`"attention_dropout": 0.0`, `"attention_dropout": 0.05`,
		`"output_router_logits": false`, `"output_router_logits": true, "router_jitter_noise": 0.01`).Replace(mixtralConfig)
	if c, err = ParseConfig([]byte(mixtral)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.TrainNoise, []string{"router_jitter_noise 0.01", "attention_dropout 0.05"}) || !c.RouterAuxLoss ||
		c.RouterAuxCoef != 0.02 {
		t.Errorf("mixtral: noise %q, aux loss %v, coefficient %v", c.TrainNoise, c.RouterAuxLoss, c.RouterAuxCoef)
	}
	phi3 := strings.NewReplacer(`"resid_pdrop": 0.0`, `"resid_pdrop": 0.1`, `"embd_pdrop": 0.0`, `"embd_pdrop": 0.1`).Replace(phi3Config)
	if c, err = ParseConfig([]byte(phi3)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.TrainNoise, []string{"resid_pdrop 0.1"}) || c.RouterAuxLoss {
		t.Errorf("phi3: noise %q, aux loss %v (transformers never applies embd_pdrop)", c.TrainNoise, c.RouterAuxLoss)
	}
	for _, cfg := range []string{qwen3MoEConfig, qwen2MoEConfig, llamaConfig, gemma3Config} {
		if c, err := ParseConfig([]byte(cfg)); err != nil || c.TrainNoise != nil || c.RouterAuxLoss {
			t.Errorf("%s: noise %q, aux loss %v, %v", c.Arch, c.TrainNoise, c.RouterAuxLoss, err)
		}
	}
}

// TestRouterAuxCoef: without router_aux_loss_coef the coefficient is the
// classes' default, 0.001 (Qwen3-MoE, Qwen2-MoE and Mixtral alike); one that
// is not a number is refused, naming the field.
func TestRouterAuxCoef(t *testing.T) {
	for _, cfg := range []string{qwen3MoEConfig, qwen2MoEConfig, mixtralConfig} {
		cfg = regexp.MustCompile(`"router_aux_loss_coef": [0-9.]+, `).ReplaceAllString(cfg, "")
		on := strings.Replace(cfg, `"output_router_logits": false`, `"output_router_logits": true`, 1)
		c, err := ParseConfig([]byte(on))
		if err != nil || !c.RouterAuxLoss || c.RouterAuxCoef != 0.001 {
			t.Errorf("aux loss %v, coefficient %v, %v; want true, 0.001", c.RouterAuxLoss, c.RouterAuxCoef, err)
		}
		bad := strings.Replace(on, `"output_router_logits": true`, `"output_router_logits": true, "router_aux_loss_coef": "x"`, 1)
		want := `field "router_aux_loss_coef": "x" is not a number`
		if _, err := ParseConfig([]byte(bad)); err == nil || err.Error() != want {
			t.Errorf("got %v; want %s", err, want)
		}
	}
}

// TestRouterLogitsNoAuxLoss: output_router_logits of a model whose
// transformers class adds no auxiliary loss (Llama, Gemma 4 with its MoE
// block) changes nothing.
func TestRouterLogitsNoAuxLoss(t *testing.T) {
	for _, cfg := range []string{llamaConfig, gemma4Config} {
		cfg = strings.Replace(cfg, `"model_type"`, `"output_router_logits": true, "model_type"`, 1)
		if c, err := ParseConfig([]byte(cfg)); err != nil || c.RouterAuxLoss {
			t.Errorf("aux loss %v, %v", c.RouterAuxLoss, err)
		}
	}
}

// TestDynamicRope: dynamic NTK rope raises theta only past
// max_position_embeddings, which generate and train refuse, so within it its
// frequencies are the default ones, whatever the factor.
func TestDynamicRope(t *testing.T) {
	cfg := strings.Replace(llamaConfig, `"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"`,
		`"factor": 4.0, "rope_type": "dynamic"`, 1)
	c, err := ParseConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Layers[0].Rope
	want := Rope{Type: "default", Theta: 500000, Factor: 1, RotaryDim: 16, HeadDim: 16}
	if r.Type != "dynamic" || !slices.Equal(r.InvFreq(), want.InvFreq()) || r.Scale() != 1 {
		t.Errorf("%+v: frequencies %v scale %v, want %v and 1", r, r.InvFreq(), r.Scale(), want.InvFreq())
	}
}

// TestPhi3LongRope: the 128k variants' longrope (Phi-3-mini-128k's form:
// legacy rope_scaling, the original context at the top) divides each
// frequency by its short factor, scales cos and sin by
// sqrt(1 + ln(131072/4096) / ln 4096), and bounds the positions by the
// original context, past which transformers switches to the long factors.
func TestPhi3LongRope(t *testing.T) {
	short, long := make([]string, 48), make([]string, 48)
	for i := range short {
		short[i], long[i] = fmt.Sprint(1+float64(i)/100), fmt.Sprint(2+float64(i))
	}
	cfg := strings.NewReplacer(`"rope_scaling": null`, `"rope_scaling": {"type": "longrope", "short_factor": [`+strings.Join(short, ", ")+
		`], "long_factor": [`+strings.Join(long, ", ")+`]}`, `"max_position_embeddings": 4096`, `"max_position_embeddings": 131072`).Replace(phi3Config)
	c, err := ParseConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Layers[0].Rope
	inv := r.InvFreq()
	for i, x := range inv {
		want := 1 / (1 + float64(i)/100) / math.Pow(10000, float64(2*i)/96)
		if math.Abs(x-want) > 1e-15*want {
			t.Errorf("inv_freq[%d] = %v, want %v", i, x, want)
		}
	}
	if want := math.Sqrt(1 + math.Log(32)/math.Log(4096)); r.Scale() != want || c.MaxPositions != 4096 {
		t.Errorf("scale %v, max positions %d; want %v, 4096", r.Scale(), c.MaxPositions, want)
	}
}

// TestPhi3PartialRotary: Phi-3's partial_rotary_factor (Phi-4-mini's 0.75)
// turns the first int(0.75 × 96) = 72 channels of each head, with
// frequencies over those 72; Llama's attention turns whole heads, so there
// it is refused.
func TestPhi3PartialRotary(t *testing.T) {
	c, err := ParseConfig([]byte(strings.Replace(phi3Config, `"rope_scaling": null`, `"partial_rotary_factor": 0.75`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Layers[0].Rope
	inv := r.InvFreq()
	if r.RotaryDim != 72 || len(inv) != 36 || inv[1] != 1/math.Pow(10000, 2.0/72) {
		t.Errorf("%+v: %d frequencies, the second %v", r, len(inv), inv[1])
	}
	_, err = ParseConfig([]byte(strings.Replace(llamaConfig, `"rope_theta": 500000.0`, `"rope_theta": 500000.0, "partial_rotary_factor": 0.5`, 1)))
	if want := `field "rope_parameters": partial_rotary_factor 0.5 is not supported for rope type "llama3"`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
