package models

import (
	"os"
	"testing"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
)

func TestZZDump(t *testing.T) {
	raw := []byte(`{"model_type": "qwen3", "vocab_size": 1024, "hidden_size": 1024, "intermediate_size": 3072,
		"num_hidden_layers": 2, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
		"tie_word_embeddings": true, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 40960}`)
	c, err := hf.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Abstract(c, ir.BF16)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := m.trace("decode", m.StepTypes(64, 1, 128), false, false)
	if err != nil {
		t.Fatal(err)
	}
	exe, _, err := engine.Compile(mod, engine.Config{Target: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile("/tmp/lead-moe.ir", []byte(ir.Print(exe.Module)), 0o644)
}
