package hf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/safetensors"
)

// tensorSpec is one tensor of a test checkpoint.
type tensorSpec struct {
	name  string
	dtype ir.DType
	shape []int64
}

// f32 lists tensors "name d0 d1 ..." as f32.
func f32(lines ...string) []tensorSpec {
	var out []tensorSpec
	for _, l := range lines {
		parts := strings.Fields(l)
		s := tensorSpec{name: parts[0], dtype: ir.F32}
		for _, p := range parts[1:] {
			var d int64
			fmt.Sscan(p, &d)
			s.shape = append(s.shape, d)
		}
		out = append(out, s)
	}
	return out
}

// fill makes a tensor whose every f32 element is seed + its index, so that
// tests can tell tensors and positions apart.
func fill(s tensorSpec, seed int) *backend.Buffer {
	b := backend.New(ir.Tensor(s.dtype, s.shape...))
	if s.dtype == ir.F32 {
		for i := range b.Len() {
			binary.LittleEndian.PutUint32(b.Bytes()[4*i:], uint32(seed+i))
		}
	}
	return b
}

// writeModel writes config.json and model.safetensors into a new directory.
func writeModel(t *testing.T, config string, specs []tensorSpec) string {
	t.Helper()
	dir := t.TempDir()
	var named []safetensors.Named
	for i, s := range specs {
		named = append(named, safetensors.Named{Name: s.name, Buf: fill(s, 1000*i)})
	}
	if err := safetensors.WriteFile(filepath.Join(dir, safetensors.SingleFile), named, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const tinyMoE = `{"model_type": "qwen3_moe", "vocab_size": 10, "max_position_embeddings": 64, "hidden_size": 4, "intermediate_size": 6,
	"num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 2,
	"num_experts": 3, "num_experts_per_tok": 2, "moe_intermediate_size": 5, "mlp_only_layers": [0],
	"norm_topk_prob": true, "rope_theta": 10000.0}`

// The tensors of tinyMoE as the Hub stores them: layer 0 dense, layer 1 MoE
// with one tensor per expert.
func tinyMoETensors() []tensorSpec {
	specs := f32("model.embed_tokens.weight 10 4", "model.norm.weight 4", "lm_head.weight 10 4")
	for i := range 2 {
		p := fmt.Sprintf("model.layers.%d.", i)
		specs = append(specs, f32(p+"input_layernorm.weight 4", p+"post_attention_layernorm.weight 4",
			p+"self_attn.q_proj.weight 4 4", p+"self_attn.k_proj.weight 2 4", p+"self_attn.v_proj.weight 2 4",
			p+"self_attn.o_proj.weight 4 4", p+"self_attn.q_norm.weight 2", p+"self_attn.k_norm.weight 2")...)
	}
	specs = append(specs, f32("model.layers.0.mlp.gate_proj.weight 6 4", "model.layers.0.mlp.up_proj.weight 6 4",
		"model.layers.0.mlp.down_proj.weight 4 6", "model.layers.1.mlp.gate.weight 3 4")...)
	for e := range 3 {
		p := fmt.Sprintf("model.layers.1.mlp.experts.%d.", e)
		specs = append(specs, f32(p+"gate_proj.weight 5 4", p+"up_proj.weight 5 4", p+"down_proj.weight 4 5")...)
	}
	return specs
}

func TestLoadQwen3MoE(t *testing.T) {
	specs := tinyMoETensors()
	dir := writeModel(t, tinyMoE, specs)
	c, w, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.DType != ir.F32 || c.Layers[0].MoE || !c.Layers[1].MoE {
		t.Fatalf("dtype %s, MoE layers %v %v", w.DType, c.Layers[0].MoE, c.Layers[1].MoE)
	}
	l0, l1 := w.Layers[0], w.Layers[1]
	if l0.Gate == nil || l0.GateExperts != nil || l1.Gate != nil || l1.Router == nil {
		t.Fatalf("layer 0 dense and layer 1 MoE: got %+v %+v", l0, l1)
	}
	// Expert e of the stack is exactly the Hub's experts.e tensor.
	stacks := map[string]*backend.Buffer{"gate_proj": l1.GateExperts, "up_proj": l1.UpExperts, "down_proj": l1.DownExperts}
	ck, err := safetensors.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	for proj, stack := range stacks {
		if got := stack.Type().String(); got != map[string]string{"gate_proj": "f32[3,5,4]", "up_proj": "f32[3,5,4]", "down_proj": "f32[3,4,5]"}[proj] {
			t.Errorf("%s stacked as %s", proj, got)
		}
		n := len(stack.Bytes()) / 3
		for e := range 3 {
			one, _ := ck.Tensor(fmt.Sprintf("model.layers.1.mlp.experts.%d.%s.weight", e, proj))
			if !bytes.Equal(stack.Bytes()[e*n:(e+1)*n], one.Bytes()) {
				t.Errorf("%s expert %d differs from the checkpoint's", proj, e)
			}
		}
	}
}

const tinyGemma = `{"model_type": "gemma4_text", "vocab_size": 10, "max_position_embeddings": 64, "hidden_size": 4, "intermediate_size": 6,
	"num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 2,
	"global_head_dim": 4, "attention_k_eq_v": true, "num_global_key_value_heads": 1,
	"layer_types": ["sliding_attention", "full_attention"], "sliding_window": 4,
	"hidden_size_per_layer_input": 0, "enable_moe_block": true, "num_experts": 3, "top_k_experts": 2,
	"moe_intermediate_size": 5}`

func tinyGemmaTensors() []tensorSpec {
	specs := f32("model.embed_tokens.weight 10 4", "model.norm.weight 4")
	for i, hd := range []string{"2", "4"} {
		q := map[string]string{"2": "4", "4": "8"}[hd]
		p := fmt.Sprintf("model.layers.%d.", i)
		specs = append(specs, f32(p+"input_layernorm.weight 4", p+"post_attention_layernorm.weight 4",
			p+"pre_feedforward_layernorm.weight 4", p+"post_feedforward_layernorm.weight 4", p+"layer_scalar 1",
			p+"self_attn.q_proj.weight "+q+" 4", p+"self_attn.k_proj.weight "+hd+" 4",
			p+"self_attn.o_proj.weight 4 "+q, p+"self_attn.q_norm.weight "+hd, p+"self_attn.k_norm.weight "+hd,
			p+"mlp.gate_proj.weight 6 4", p+"mlp.up_proj.weight 6 4", p+"mlp.down_proj.weight 4 6",
			p+"router.proj.weight 3 4", p+"router.scale 4", p+"router.per_expert_scale 3",
			p+"post_feedforward_layernorm_1.weight 4", p+"pre_feedforward_layernorm_2.weight 4",
			p+"post_feedforward_layernorm_2.weight 4",
			p+"experts.gate_up_proj 3 10 4", p+"experts.down_proj 3 4 5")...)
	}
	// Only the sliding layer has a v_proj: the full one uses its keys as values.
	return append(specs, f32("model.layers.0.self_attn.v_proj.weight 2 4")...)
}

func TestLoadGemma4(t *testing.T) {
	dir := writeModel(t, tinyGemma, tinyGemmaTensors())
	_, w, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.LMHead != w.Embed {
		t.Errorf("tied lm_head is not the embedding")
	}
	if w.Layers[1].V != nil || w.Layers[0].V == nil {
		t.Errorf("v_proj: layer 0 %v, layer 1 %v", w.Layers[0].V != nil, w.Layers[1].V != nil)
	}
	// gate_up_proj [3, 10, 4] holds per expert 5 gate rows then 5 up rows:
	// element values are seed + index, so each half starts at a known value.
	specs := tinyGemmaTensors()
	seed := 1000 * slices.IndexFunc(specs, func(s tensorSpec) bool { return s.name == "model.layers.1.experts.gate_up_proj" })
	lw := w.Layers[1]
	if lw.GateExperts.Type().String() != "f32[3,5,4]" || lw.UpExperts.Type().String() != "f32[3,5,4]" {
		t.Fatalf("stacks %s %s", lw.GateExperts.Type(), lw.UpExperts.Type())
	}
	at := func(b *backend.Buffer, i int) int { return int(binary.LittleEndian.Uint32(b.Bytes()[4*i:])) - seed }
	for e := range 3 {
		if g, u := at(lw.GateExperts, e*20), at(lw.UpExperts, e*20); g != e*40 || u != e*40+20 {
			t.Errorf("expert %d: gate starts at element %d, up at %d; want %d and %d", e, g, u, e*40, e*40+20)
		}
	}
}

// Every way a checkpoint can disagree with its config, with the exact error.
func TestWeightErrors(t *testing.T) {
	base := tinyMoETensors()
	without := func(name string) []tensorSpec {
		return slices.DeleteFunc(slices.Clone(base), func(s tensorSpec) bool { return s.name == name })
	}
	with := func(extra ...tensorSpec) []tensorSpec { return append(slices.Clone(base), extra...) }
	reshaped := func(name string, dt ir.DType, shape ...int64) []tensorSpec {
		out := slices.Clone(base)
		for i := range out {
			if out[i].name == name {
				out[i] = tensorSpec{name, dt, shape}
			}
		}
		return out
	}
	file := "DIR/model.safetensors"
	cases := []struct {
		name   string
		config string
		specs  []tensorSpec
		want   string
	}{
		{"missing expert", tinyMoE, without("model.layers.1.mlp.experts.2.up_proj.weight"),
			`DIR: missing tensor "model.layers.1.mlp.experts.2.up_proj.weight" (qwen3_moe wants it, shape [5 4])`},
		{"missing head", tinyMoE, without("lm_head.weight"), `DIR: missing tensor "lm_head.weight" (qwen3_moe wants it, shape [10 4])`},
		{"unexpected", tinyMoE, with(f32("model.layers.0.mlp.gate.weight 3 4")...),
			file + `: unexpected tensor "model.layers.0.mlp.gate.weight" (qwen3_moe does not use it)`},
		{"shape", tinyMoE, reshaped("model.layers.1.self_attn.k_proj.weight", ir.F32, 4, 4),
			file + `: tensor "model.layers.1.self_attn.k_proj.weight" has shape [4 4], but the config wants [2 4]`},
		{"dtype", tinyMoE, reshaped("model.layers.0.self_attn.q_norm.weight", ir.BF16, 2),
			file + `: tensor "model.layers.0.self_attn.q_norm.weight" is bf16, but "model.embed_tokens.weight" is f32: a checkpoint has one dtype`},
		{"int weights", tinyMoE, reshaped("model.embed_tokens.weight", ir.I32, 10, 4),
			file + `: tensor "model.embed_tokens.weight" is i32; weights must be f32, bf16 or f16`},
		{"untied head differs", strings.Replace(tinyMoE, `"norm_topk_prob"`, `"tie_word_embeddings": true, "norm_topk_prob"`, 1), base,
			file + `: tensor "lm_head.weight" (f32[10,4]) differs from the embedding, but tie_word_embeddings is true`},
	}
	for _, c := range cases {
		dir := writeModel(t, c.config, c.specs)
		_, w, err := Load(dir)
		if err == nil {
			w.Close()
		}
		want := strings.ReplaceAll(c.want, "DIR", dir)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, want)
		}
	}
}
