package models

import (
	"math"
	"slices"
	"testing"
)

// tinyQwen3Config is a two-layer Qwen3 small enough to generate with in
// milliseconds.
const tinyQwen3Config = `{"model_type": "qwen3", "vocab_size": 64, "hidden_size": 16,
"intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
"head_dim": 8, "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 128,
"tie_word_embeddings": true}`

// A generation keeps its KV cache for the next one of the same shape and
// zeroes it first: storage left full of NaN by the last generation gives
// the tokens and logits of new storage; ReleaseCache drops it, and a cache
// of another shape is new.
func TestGeneratorReusesCache(t *testing.T) {
	m := randomModel(t, tinyQwen3Config, 0.5)
	g, err := NewGenerator(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Prompts: [][]int32{{3, 1, 4, 1, 5}, {9, 2, 6}}, MaxNew: 4}
	first, err := g.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	kept := slices.Clone(g.spare.bufs)
	if n := len(m.CacheTypes(2, 8)); len(kept) != n {
		t.Fatalf("kept %d cache buffers, want %d", len(kept), n)
	}
	for _, b := range kept {
		vals := make([]float64, b.Len())
		for j := range vals {
			vals[j] = math.NaN()
		}
		b.WriteFloat64s(0, vals)
	}
	_, capacity, _ := req.Shape()
	took := g.spare.take(m.CacheTypes(2, int64(capacity)))
	if !slices.Equal(took, kept) {
		t.Fatal("a generation of the same shape did not take the kept cache")
	}
	for _, b := range took {
		if slices.ContainsFunc(b.Bytes(), func(x byte) bool { return x != 0 }) {
			t.Fatalf("the kept cache %s was not zeroed", b.Type())
		}
		b.WriteFloat64s(0, []float64{math.NaN()})
	}
	g.spare.put(took)
	again, err := g.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(first.Tokens, again.Tokens, slices.Equal) {
		t.Fatalf("tokens on a reused cache %v, on a new one %v", again.Tokens, first.Tokens)
	}
	if a, b := again.FirstLogits.Float32s(), first.FirstLogits.Float32s(); !slices.Equal(a, b) {
		t.Fatalf("first logits on a reused cache differ from a new one's")
	}
	g.ReleaseCache()
	if len(g.spare.bufs) != 0 {
		t.Fatal("ReleaseCache kept the cache")
	}
	other := g.spare.take(m.CacheTypes(1, int64(capacity)))
	for i, b := range other {
		if slices.Contains(kept, b) || !b.Type().Equal(m.CacheTypes(1, int64(capacity))[i]) {
			t.Fatalf("a cache of another shape reused storage or has type %s", b.Type())
		}
	}
}
