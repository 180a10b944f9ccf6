package models

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/models/hf"
)

func TestSampler(t *testing.T) {
	logits := []float32{0.5, 2, 2, -1, 1.9}
	if got := (Sampler{}).pick(logits, 0, 0); got != 1 {
		t.Errorf("greedy picked %d, want 1 (the first of the equal largest)", got)
	}
	// top-k 1 and a tiny top-p keep only the most likely token.
	for _, s := range []Sampler{{Temperature: 1, TopK: 1, Seed: 3}, {Temperature: 5, TopP: 1e-9, Seed: 3}} {
		for i := range 20 {
			if got := s.pick(logits, i%3, i); got != 1 {
				t.Fatalf("%+v picked %d, want 1", s, got)
			}
		}
	}
	// Top-k 2 draws only among the two largest; the draws depend only on the seed.
	draw := func(seed uint64) []int {
		sm := Sampler{Temperature: 1, TopK: 2, Seed: seed}
		var out []int
		for i := range 200 {
			out = append(out, sm.pick(logits, i%2, i/2))
		}
		return out
	}
	a, b := draw(9), draw(9)
	seen := map[int]int{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d differs between two runs of seed 9: %d and %d", i, a[i], b[i])
		}
		seen[a[i]]++
	}
	if len(seen) != 2 || seen[1] == 0 || seen[2] == 0 {
		t.Errorf("top-k 2 drew %v, want only tokens 1 and 2, both", seen)
	}
	// Top-p 0.5 over probabilities (0.6, 0.3, 0.1) keeps the first alone.
	probs := []float32{-0.5108256, -1.2039728, -2.3025851} // log 0.6, log 0.3, log 0.1
	sm := Sampler{Temperature: 1, TopP: 0.5, Seed: 1}
	for i := range 50 {
		if got := sm.pick(probs, 0, i); got != 0 {
			t.Fatalf("top-p 0.5 picked %d, want 0", got)
		}
	}
}

func TestRequestShape(t *testing.T) {
	for _, c := range []struct {
		r                Request
		padded, capacity int
		err              string
	}{
		{Request{Prompts: [][]int32{{1, 2, 3}, {4}}, MaxNew: 32}, 8, 64, ""},
		{Request{Prompts: [][]int32{make([]int32, 9)}, MaxNew: 1}, 16, 16, ""},
		{Request{Prompts: [][]int32{{1}}, MaxNew: 8, Capacity: 15}, 8, 15, ""},
		{Request{Prompts: [][]int32{{1}}, MaxNew: 9, Capacity: 15}, 0, 0, "models: a cache of 15 slots cannot hold 8 prompt slots and 9 new tokens"},
		{Request{Prompts: [][]int32{{1}, {}}, MaxNew: 1}, 0, 0, "models: prompt 1 is empty"},
		{Request{MaxNew: 1}, 0, 0, "models: no prompts"},
		{Request{Prompts: [][]int32{{1}}}, 0, 0, "models: max new tokens is 0, want at least 1"},
	} {
		p, cp, err := c.r.Shape()
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if p != c.padded || cp != c.capacity || msg != c.err {
			t.Errorf("%+v: %d %d %q, want %d %d %q", c.r, p, cp, msg, c.padded, c.capacity, c.err)
		}
	}
}

func TestComputable(t *testing.T) {
	base := func() *hf.Config {
		return &hf.Config{Arch: "qwen3", Activation: "silu", QKNorm: true, Layers: []hf.Layer{{MLP: true}}}
	}
	for _, c := range []struct {
		edit func(c *hf.Config)
		err  string
	}{
		{func(c *hf.Config) {}, ""},
		{func(c *hf.Config) { c.Activation = "relu" }, `models: activation "relu" is not computed`},
		{func(c *hf.Config) { c.Arch, c.QKNorm, c.QKVBias, c.OBias, c.MLPBias = "llama", false, true, true, true }, ""},
		{func(c *hf.Config) { c.Arch = "phi4mm" }, `models: architecture "phi4mm" is not computed`},
		{func(c *hf.Config) { c.Layers[0].MoE = true }, "models: layer 0: a qwen3 layer with MLP true and MoE true is not computed"},
		{func(c *hf.Config) { c.Layers[0] = hf.Layer{MoE: true} }, "models: layer 0 is MoE but the config has no experts"},
		{func(c *hf.Config) { c.MoE = &hf.MoE{Router: "sigmoid"} }, `models: router "sigmoid" is not computed`},
	} {
		cfg := base()
		c.edit(cfg)
		msg := ""
		if err := computable(cfg); err != nil {
			msg = err.Error()
		}
		if msg != c.err {
			t.Errorf("got %q, want %q", msg, c.err)
		}
	}
}

// draw's numbers over rows and steps are uniform enough that sampling
// follows the distribution: 40000 choices among probabilities 0.5, 0.25,
// 0.15 and 0.1 (three standard deviations are under 0.008), and 2/3, 1/3
// after top-k 2.
func TestDrawDistribution(t *testing.T) {
	logits := []float32{float32(math.Log(0.5)), float32(math.Log(0.25)), float32(math.Log(0.15)), float32(math.Log(0.1))}
	for _, c := range []struct {
		s    Sampler
		want []float64
	}{
		{Sampler{Temperature: 1, Seed: 12345}, []float64{0.5, 0.25, 0.15, 0.1}},
		{Sampler{Temperature: 1, TopK: 2, Seed: 1 << 33}, []float64{2.0 / 3, 1.0 / 3, 0, 0}},
	} {
		const n = 40000
		counts := make([]float64, len(logits))
		for i := range n {
			counts[c.s.pick(logits, i%16, i/16)]++
		}
		for id, w := range c.want {
			if got := counts[id] / n; math.Abs(got-w) > 0.008 {
				t.Errorf("%+v: token %d chosen %.4f of the time, want %.4f", c.s, id, got, w)
			}
		}
	}
}
