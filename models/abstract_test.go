package models

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// An abstract model has the loaded model's parameters, name for name and
// type for type, and traces the same program.
func TestAbstractMatchesLoad(t *testing.T) {
	root := oracleDirs(t)
	for _, name := range oracleModels {
		m, err := Load(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		a, err := Abstract(m.Config, m.Weights.DType)
		if err != nil {
			t.Fatal(err)
		}
		same := func(x, y Param) bool { return x.Name == y.Name && x.Type.Equal(y.Type) }
		if !slices.EqualFunc(a.Params, m.Params, same) {
			t.Errorf("%s: abstract parameters\n%v\nwant\n%v", name, a.Params, m.Params)
			continue
		}
		types := m.StepTypes(2, 1, 16)
		tm, err := m.Trace("decode", types, false)
		if err != nil {
			t.Fatal(err)
		}
		ta, err := a.Trace("decode", types, false)
		if err != nil {
			t.Fatal(err)
		}
		if ir.Print(tm) != ir.Print(ta) {
			t.Errorf("%s: the abstract model traces another program", name)
		}
	}
}

// qwen3MoE30B is Qwen3-30B-A3B's config.json with two layers (one loop):
// hidden 2048, 32 query and 4 KV heads of 128, 128 experts of 768, top-8,
// renormalised.
const qwen3MoE30B = `{"model_type": "qwen3_moe", "vocab_size": 151936, "hidden_size": 2048,
"intermediate_size": 6144, "num_hidden_layers": 2, "num_attention_heads": 32, "num_key_value_heads": 4,
"head_dim": 128, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 40960,
"num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768, "norm_topk_prob": true,
"decoder_sparse_step": 1, "mlp_only_layers": [], "tie_word_embeddings": false, "use_sliding_window": false}`

// Two full-size Qwen3-30B-A3B layers as one loop (bf16 weights as
// parameters, with the embedding and head) compile for TPU v5e and v6e,
// prefill and decode, the MoE block rewritten into ragged_dots inside the
// loop's body.
func TestFullSizeLayerCompilesForTPU(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a full-size layer for TPU")
	}
	h, err := xlacheck.FindTPU()
	if err != nil {
		t.Fatalf("the TPU compile-only harness is required: %v", err)
	}
	m := abstractModel(t, qwen3MoE30B, ir.BF16)
	for _, target := range []struct{ name, topology string }{{"tpu-v5e", "v5e:2x2"}, {"tpu-v6e", "v6e:2x2"}} {
		var mods []xlacheck.TPUModule
		for _, step := range []struct {
			name      string
			batch, tk int64
		}{{"prefill", 1, 128}, {"decode", 8, 1}} {
			mod, err := m.Trace(step.name, m.StepTypes(step.batch, step.tk, 256), false)
			if err != nil {
				t.Fatal(err)
			}
			var st passes.Stats
			exe, _, err := engine.Compile(mod, engine.Config{Target: target.name, Passes: passes.Options{Stats: &st}})
			if err != nil {
				t.Fatalf("%s for %s: %v", step.name, target.name, err)
			}
			if n := st.Get("moe-route", "combine-dot"); n != 1 {
				t.Errorf("%s for %s: moe-route rewrote %d blocks, want 1", step.name, target.name, n)
			}
			if all, looped := raggedDots(exe.Entry); all != 3 || looped != 3 {
				t.Errorf("%s for %s: %d ragged_dots, %d in the loop; want 3, all in the loop", step.name, target.name, all, looped)
			}
			mods = append(mods, xlacheck.TPUModule{ID: "qwen3_moe_30b." + step.name, Text: exe.HLO})
		}
		res, err := h.CompileTPU(mods, []string{target.topology})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if !r.OK {
				t.Errorf("%s on %s: %s", r.ID, r.Topology, r.Error)
			}
		}
	}
}
