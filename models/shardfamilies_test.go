package models

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/tpucc/tpucc/engine"
)

// TestSplitAgainstTransformers: every family's checkpoint that transformers
// saved, split tp=4 over 4 XLA:CPU devices (heads, KV heads, MLP columns and
// the vocabulary over tp, whatever does not divide padded by XLA), gives
// transformers' prompt logits within the unsplit test's tolerance and its
// greedy tokens.
func TestSplitAgainstTransformers(t *testing.T) {
	root := oracleDirs(t)
	for _, name := range oracleModels {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name)
			o := readOracle(t, dir)
			m, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			m.F32Products = true // as the oracle computes a bf16 model (oracleGenerator)
			g, err := NewGenerator(m, Options{AllLogits: true, Device: "pjrt", Precision: "highest",
				Mesh: mustMesh(t, "tp=4"), Cache: engine.NewCache("", engine.CacheOptions{})})
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Generate(Request{Prompts: o.Prompts, MaxNew: len(o.Greedy[0])})
			if err != nil {
				t.Fatal(err)
			}
			checkLogits(t, res.PromptLogits, res.Pad, o)
			for b := range o.Prompts {
				if !slices.Equal(res.Tokens[b], o.Greedy[b]) {
					t.Errorf("prompt %d: greedy tokens\n%v\nwant (transformers)\n%v", b, res.Tokens[b], o.Greedy[b])
				}
			}
		})
	}
}
