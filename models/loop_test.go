package models

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/tensor"
)

// gemma3Alternating has every other layer full, then two sliding layers: a
// loop over the pattern (sliding, full) three times, then a loop over the
// last two.
const gemma3Alternating = `{"model_type": "gemma3_text", "vocab_size": 64, "hidden_size": 32,
"intermediate_size": 48, "num_hidden_layers": 8, "num_attention_heads": 4, "num_key_value_heads": 2,
"head_dim": 16, "query_pre_attn_scalar": 24, "rms_norm_eps": 1e-6, "max_position_embeddings": 128,
"sliding_window": 3, "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention",
"sliding_attention", "full_attention", "sliding_attention", "sliding_attention"],
"rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1000000.0},
"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}`

// gemma3Pattern26 has Gemma 3 1B's 26 layers in its pattern (five sliding,
// one full) at a tiny size: one loop over the pattern four times, one over
// the last two sliding layers.
var gemma3Pattern26 = strings.NewReplacer(`"num_hidden_layers": 8`, `"num_hidden_layers": 26`,
	`"layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention",
"sliding_attention", "full_attention", "sliding_attention", "sliding_attention"],`, `"sliding_window_pattern": 6,`).Replace(gemma3Alternating)

// gemma4Shared has per-layer inputs and its last two layers reading the
// keys and values of layers 4 and 5 (KV sharing) with a double-wide MLP:
// layers 0–5 loop over (sliding, full), 6 and 7 run unrolled after the loop
// on rows 2 of its stacked caches.
const gemma4Shared = `{"model_type": "gemma4_text", "vocab_size": 64, "hidden_size": 32,
"intermediate_size": 48, "num_hidden_layers": 8, "num_attention_heads": 4, "num_key_value_heads": 2,
"head_dim": 16, "rms_norm_eps": 1e-6, "max_position_embeddings": 128, "attention_k_eq_v": true,
"enable_moe_block": false, "final_logit_softcapping": 30.0, "hidden_size_per_layer_input": 8,
"vocab_size_per_layer_input": 64, "num_kv_shared_layers": 2, "use_double_wide_mlp": true, "sliding_window": 4,
"layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention",
"sliding_attention", "full_attention", "sliding_attention", "full_attention"],
"per_layer_config": {"1": {"head_dim": 32, "num_key_value_heads": 1}, "3": {"head_dim": 32, "num_key_value_heads": 1},
"5": {"head_dim": 32, "num_key_value_heads": 1}, "7": {"head_dim": 32, "num_key_value_heads": 1}},
"rope_parameters": {"full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0, "rope_type": "proportional"},
"sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}}}`

// qwen3MoESparse has MoE layers 1 and 3 between dense ones: one loop over
// the pair (dense, MoE) twice.
const qwen3MoESparse = `{"model_type": "qwen3_moe", "vocab_size": 64, "hidden_size": 16,
"intermediate_size": 24, "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1,
"head_dim": 8, "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 128,
"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 8, "norm_topk_prob": true,
"decoder_sparse_step": 2, "mlp_only_layers": [], "tie_word_embeddings": true, "use_sliding_window": false}`

// qwen3MoEAll has only MoE layers, as Qwen3-30B-A3B: one loop over them.
var qwen3MoEAll = strings.Replace(qwen3MoESparse, `"decoder_sparse_step": 2`, `"decoder_sparse_step": 1`, 1)

// qwen2MoEShared has four MoE layers with Qwen2-MoE's gated shared expert
// beside the routed ones: one loop.
const qwen2MoEShared = `{"model_type": "qwen2_moe", "vocab_size": 64, "hidden_size": 32,
"intermediate_size": 48, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
"qkv_bias": true, "rms_norm_eps": 1e-6, "max_position_embeddings": 128,
"rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}, "num_experts": 8,
"num_experts_per_tok": 2, "moe_intermediate_size": 24, "shared_expert_intermediate_size": 40,
"norm_topk_prob": false, "decoder_sparse_step": 1, "mlp_only_layers": [], "tie_word_embeddings": false,
"use_sliding_window": false}`

func qwen3Layers(n int) string {
	return strings.Replace(tinyQwen3Config, `"num_hidden_layers": 2`, fmt.Sprintf(`"num_hidden_layers": %d`, n), 1)
}

// Each family's layers form the loops the grouping promises, and the
// stacked weights and caches have their [count, …] types.
func TestLayerGroups(t *testing.T) {
	for _, c := range []struct {
		name, config string
		loops        []string
		params       []string // some parameters and their types
		cache        []string // CacheTypes(2, 16), keys of each entry
	}{
		{"qwen3", qwen3Layers(5), []string{"layers.0:5"},
			[]string{"layers.0:5.Q f32[5,16,16]", "layers.0:5.AttnNorm f32[5,16]"},
			[]string{"f32[5,2,1,16,8]"}},
		{"gemma3", gemma3Alternating, []string{"layers.0:6:2", "layers.6:8"},
			[]string{"layers.0:6:2.Q f32[3,64,32]", "layers.1:6:2.Q f32[3,64,32]", "layers.6:8.Down f32[2,32,48]"},
			[]string{"f32[3,2,2,16,16]", "f32[3,2,2,16,16]", "f32[2,2,2,16,16]"}},
		{"gemma3_1b_pattern", gemma3Pattern26, []string{"layers.0:24:6", "layers.24:26"},
			[]string{"layers.5:24:6.Q f32[4,64,32]", "layers.24:26.Q f32[2,64,32]"},
			[]string{"f32[4,2,2,16,16]", "f32[4,2,2,16,16]", "f32[4,2,2,16,16]", "f32[4,2,2,16,16]", "f32[4,2,2,16,16]", "f32[4,2,2,16,16]", "f32[2,2,2,16,16]"}},
		{"gemma4", gemma4Shared, []string{"layers.0:6:2"},
			[]string{"layers.0:6:2.K f32[3,32,32]", "layers.1:6:2.K f32[3,32,32]", "layers.6.Q f32[64,32]", "layers.7.Gate f32[96,32]"},
			[]string{"f32[3,2,2,16,16]", "f32[3,2,1,16,32]"}},
		{"qwen3_moe", qwen3MoESparse, []string{"layers.0:4:2"},
			[]string{"layers.0:4:2.Q f32[2,16,16]", "layers.0:4:2.Gate f32[2,24,16]", "layers.1:4:2.GateExperts f32[2,4,8,16]", "layers.1:4:2.Router f32[2,4,16]"},
			[]string{"f32[2,2,1,16,8]", "f32[2,2,1,16,8]"}},
		{"qwen3_moe_all", qwen3MoEAll, []string{"layers.0:4"},
			[]string{"layers.0:4.DownExperts f32[4,4,16,8]"},
			[]string{"f32[4,2,1,16,8]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := abstractModel(t, c.config, ir.F32)
			if got := m.Loops(); !slices.Equal(got, c.loops) {
				t.Errorf("loops %q, want %q", got, c.loops)
			}
			have := map[string]string{}
			for _, p := range m.Params {
				have[p.Name] = p.Name + " " + p.Type.String()
			}
			for _, want := range c.params {
				name, _, _ := strings.Cut(want, " ")
				if have[name] != want {
					t.Errorf("parameter %q, want %q", have[name], want)
				}
			}
			var keys []string
			for i, ty := range m.CacheTypes(2, 16) {
				if i%2 == 0 {
					keys = append(keys, ty.String())
				}
			}
			if !slices.Equal(keys, c.cache) {
				t.Errorf("cache keys %v, want %v", keys, c.cache)
			}
			t.Setenv(unrollEnv, "1")
			if u := abstractModel(t, c.config, ir.F32); len(u.Loops()) != 0 || len(u.CacheTypes(1, 1)) != 2*ownKV(u) {
				t.Errorf("%s=1: loops %q and %d cache tensors, want none and one pair per layer", unrollEnv, u.Loops(), len(u.CacheTypes(1, 1)))
			}
		})
	}
}

func ownKV(m *Model) int {
	n := 0
	for _, l := range m.Config.Layers {
		if l.KVFrom < 0 {
			n++
		}
	}
	return n
}

// restacked is looped's model with the weights of unrolled (the same
// config, TPUCC_UNROLL_LAYERS=1), stacked: the two builds of one model.
func restacked(t *testing.T, unrolled, looped *Model) *Model {
	t.Helper()
	byName := map[string]*backend.Buffer{}
	for _, p := range unrolled.Params {
		byName[p.Name] = p.Buffer
	}
	for i, p := range looped.Params {
		if b, ok := byName[p.Name]; ok {
			looped.Params[i].Buffer = b
			continue
		}
		spec, field, _ := strings.Cut(strings.TrimPrefix(p.Name, "layers."), ".")
		g := looped.groups[looped.slots[spec][0]]
		s := looped.slots[spec][1]
		buf := backend.New(p.Type)
		n := len(buf.Bytes()) / g.count
		for it := range g.count {
			copy(buf.Bytes()[it*n:], byName[fmt.Sprintf("layers.%d.%s", g.layer(s, it), field)].Bytes())
		}
		looped.Params[i].Buffer = buf
	}
	return looped
}

// A model's layers as loops compute what they compute unrolled: the prompt
// logits and greedy tokens of a generation (prefill, then decode steps on
// the stacked cache), compiled, and a prefill step run eagerly (each while
// a Go loop). The alternating Gemma 3 and the KV-sharing Gemma 4 with
// per-layer inputs read caches, weights and inputs by trip; the MoE
// models' experts are rows of [L,E,…] stacks, routed inside the body
// (moe-route), and Qwen2-MoE's shared expert runs beside them.
func TestLoopsMatchUnrolled(t *testing.T) {
	for _, c := range []struct{ name, config string }{
		{"qwen3", qwen3Layers(4)}, {"gemma3", gemma3Alternating}, {"gemma4", gemma4Shared},
		{"qwen3_moe", qwen3MoESparse}, {"qwen2_moe", qwen2MoEShared},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(unrollEnv, "1")
			u := randomModel(t, c.config, 0.3)
			t.Setenv(unrollEnv, "")
			l := restacked(t, u, abstractModel(t, c.config, ir.F32))
			if len(l.Loops()) == 0 {
				t.Fatal("no loop")
			}
			req := Request{Prompts: [][]int32{{3, 1, 4, 1, 5, 9, 2}, {6, 5, 3}}, MaxNew: 5}
			want, got := generate(t, u, req), generate(t, l, req)
			if !slices.EqualFunc(got.Tokens, want.Tokens, slices.Equal) {
				t.Errorf("tokens looped %v, unrolled %v", got.Tokens, want.Tokens)
			}
			agree(t, "compiled prompt logits", got.PromptLogits, want.PromptLogits)
			agree(t, "eager prefill logits", eagerPrefill(t, l), eagerPrefill(t, u))
		})
	}
}

func generate(t *testing.T, m *Model, req Request) *Result {
	t.Helper()
	g, err := NewGenerator(m, Options{AllLogits: true, Cache: engine.NewCache("", engine.CacheOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// eagerPrefill runs a prefill step of 6 tokens of 2 rows (one padded) on
// the tensors, uncompiled.
func eagerPrefill(t *testing.T, m *Model) *tensor.Tensor {
	t.Helper()
	args := []*tensor.Tensor{tensor.FromSlice([]int32{0, 0, 7, 8, 9, 10, 1, 2, 3, 4, 5, 6}, 2, 6),
		tensor.FromSlice([]int32{2, 0}, 2), tensor.FromSlice([]int32{0})}
	for _, ty := range m.CacheTypes(2, 8) {
		args = append(args, tensor.Zeros(ty.DType, ty.Dims()...))
	}
	for _, p := range m.Params {
		args = append(args, tensor.FromBuffer(p.Buffer))
	}
	out, err := m.step(args, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return out[0]
}

// agree requires logits to agree within 1e-4 (relative to 1 + |want|): the
// same operations in the same order, but XLA-style fusion may differ
// around a loop's boundary.
func agree(t *testing.T, what string, got, want *tensor.Tensor) {
	t.Helper()
	g, w := got.Float32s(), want.Float32s()
	if len(g) != len(w) {
		t.Fatalf("%s: %d values, want %d", what, len(g), len(w))
	}
	for i := range w {
		if math.Abs(float64(g[i]-w[i])) > 1e-4*(1+math.Abs(float64(w[i]))) {
			t.Fatalf("%s: element %d is %g looped, %g unrolled", what, i, g[i], w[i])
		}
	}
}

// The exported StableHLO of a step has one while per loop, and a 96-layer
// Qwen3 (and Qwen3-MoE, its experts routed inside the loop) exports to
// about the size of a 24-layer one (only the stacked types' leading
// dimension differs).
func TestExportOneWhilePerLoop(t *testing.T) {
	for _, c := range []struct {
		name   string
		config func(layers int) string
	}{{"qwen3", qwen3Layers}, {"qwen3_moe", qwen3MoELayers}} {
		t.Run(c.name, func(t *testing.T) {
			export := func(layers int) string {
				m := abstractModel(t, c.config(layers), ir.BF16)
				mod, err := m.Trace("decode", m.StepTypes(2, 1, 64), false)
				if err != nil {
					t.Fatal(err)
				}
				exe, _, err := engine.Compile(mod, engine.Config{})
				if err != nil {
					t.Fatal(err)
				}
				return exe.HLO
			}
			small, big := export(24), export(96)
			for _, text := range []string{small, big} {
				if n := strings.Count(text, "stablehlo.while"); n != 1 {
					t.Errorf("%d stablehlo.while ops, want 1", n)
				}
			}
			if r := float64(len(big)) / float64(len(small)); r > 1.2 || r < 1/1.2 {
				t.Errorf("96 layers export %d bytes, 24 layers %d: ratio %.2f, want within 1.2", len(big), len(small), r)
			}
			t.Setenv(unrollEnv, "1")
			if n := strings.Count(export(24), "stablehlo.while"); n != 0 {
				t.Errorf("unrolled: %d stablehlo.while ops, want 0", n)
			}
		})
	}
}

func qwen3MoELayers(n int) string {
	return strings.Replace(qwen3MoEAll, `"num_hidden_layers": 4`, fmt.Sprintf(`"num_hidden_layers": %d`, n), 1)
}

// New stacks a loop's weights once: each stack's row it holds layer it's
// tensor, and afterwards the layer's field in hf.Weights is a view of that
// row, not a second copy. Tied embeddings stay one parameter.
func TestNewStacksWeightsOnce(t *testing.T) {
	c, err := hf.ParseConfig([]byte(qwen3Layers(3)))
	if err != nil {
		t.Fatal(err)
	}
	layout := c.Layout()
	w := &hf.Weights{DType: ir.F32, Layers: make([]hf.LayerWeights, 3)}
	next := 0.0
	fill := func(dst reflect.Value, shapes map[string][]int64) {
		for name, s := range shapes {
			b := backend.New(ir.Tensor(ir.F32, s...))
			vals := make([]float64, b.Len())
			for i := range vals {
				vals[i], next = next, next+1
			}
			b.WriteFloat64s(0, vals)
			dst.FieldByName(name).Set(reflect.ValueOf(b))
		}
	}
	fill(reflect.ValueOf(w).Elem(), layout.Top)
	w.LMHead = w.Embed
	orig := make([]map[string][]byte, 3)
	for i := range w.Layers {
		fill(reflect.ValueOf(&w.Layers[i]).Elem(), layout.Layers[i])
		orig[i] = map[string][]byte{}
		for name := range layout.Layers[i] {
			b := reflect.ValueOf(&w.Layers[i]).Elem().FieldByName(name).Interface().(*backend.Buffer)
			orig[i][name] = slices.Clone(b.Bytes())
		}
	}
	m, err := New(c, w)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range m.Params {
		names = append(names, p.Name)
		field, ok := strings.CutPrefix(p.Name, "layers.0:3.")
		if !ok {
			continue
		}
		data := p.Buffer.Bytes()
		n := len(data) / 3
		for it := range 3 {
			if !slices.Equal(data[it*n:(it+1)*n], orig[it][field]) {
				t.Errorf("%s: row %d is not layer %d's tensor", p.Name, it, it)
			}
			row := reflect.ValueOf(&w.Layers[it]).Elem().FieldByName(field).Interface().(*backend.Buffer).Bytes()
			if &row[0] != &data[it*n] {
				t.Errorf("layer %d's %s is not a view of its row of %s", it, field, p.Name)
			}
		}
	}
	want := []string{"Embed", "Norm", "layers.0:3.AttnNorm", "layers.0:3.MLPNorm", "layers.0:3.Q", "layers.0:3.K",
		"layers.0:3.V", "layers.0:3.O", "layers.0:3.QNorm", "layers.0:3.KNorm", "layers.0:3.Gate", "layers.0:3.Up", "layers.0:3.Down"}
	if !slices.Equal(names, want) {
		t.Errorf("parameters %q, want %q", names, want)
	}
}
