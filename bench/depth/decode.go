package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/tpucc/tpucc/backend"
	_ "github.com/tpucc/tpucc/backend/pjrt" // --device pjrt: XLA:CPU through PJRT
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models"
	"github.com/tpucc/tpucc/models/hf"
)

// decodeConfig is Qwen3's architecture (q/k norms, grouped KV heads, tied
// embeddings, Qwen3-0.6B's head dim and rope) at a size whose decode step
// takes a millisecond or two on XLA:CPU: the figure is what a dispatch per
// token costs beside the step, which a larger model hides.
const decodeConfig = `{"model_type": "qwen3", "vocab_size": 2048, "hidden_size": 256,
"intermediate_size": 768, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
"head_dim": 128, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 40960,
"tie_word_embeddings": true}`

// Decode workload: one prompt of decodePrompt tokens, then decodeNew new
// ones, greedy, each mode decodeRuns times after a warm-up.
const (
	decodePrompt = 8
	decodeNew    = 64
	decodeRuns   = 20
)

// decodeLoopSpeedup is the decode rate of the compiled decode loop over
// step by step (a dispatch and a host choice per token) on --device pjrt
// (XLA:CPU) at batch 1: tokens per second of each, from the best of
// decodeRuns generations, timed from prefill's end to Generate's return
// so that the host's choosing between steps counts.
func decodeLoopSpeedup() (float64, error) {
	steps, loop, err := decodeRates(models.Options{Device: "pjrt"})
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(os.Stderr, "bench-depth: decode on pjrt at batch 1: %.1f tokens/s step by step, %.1f in one loop\n", steps, loop)
	return loop / steps, nil
}

// decodeRates are the decode rates (tokens/s) step by step and in one loop
// with o's backend or device.
func decodeRates(o models.Options) (steps, loop float64, err error) {
	c, err := hf.ParseConfig([]byte(decodeConfig))
	if err != nil {
		return 0, 0, err
	}
	m, err := decodeModel(c)
	if err != nil {
		return 0, 0, err
	}
	rng := rand.New(rand.NewPCG(3, 4))
	prompt := make([]int32, decodePrompt)
	for i := range prompt {
		prompt[i] = int32(rng.IntN(c.Vocab))
	}
	req := models.Request{Prompts: [][]int32{prompt}, MaxNew: decodeNew}
	modes := []string{models.DecodeSteps, models.DecodeLoop}
	gens := make([]*models.Generator, len(modes))
	for k, mode := range modes {
		o.Decode, o.Cache = mode, engine.NewCache("", engine.CacheOptions{})
		if gens[k], err = models.NewGenerator(m, o); err != nil {
			return 0, 0, err
		}
		if err := gens[k].Prepare(req); err != nil {
			return 0, 0, err
		}
	}
	// The modes take turns, so that a change in the machine's load (it is
	// shared) falls on both; the first round warms up.
	best := make([]time.Duration, len(modes))
	var tokens [][]int32
	for i := range decodeRuns + 1 {
		for k, g := range gens {
			t0 := time.Now()
			res, err := g.Generate(req)
			if err != nil {
				return 0, 0, err
			}
			d := time.Since(t0) - res.PrefillTime
			if res.DecodeTokens != decodeNew-1 {
				return 0, 0, fmt.Errorf("decode %s: %d tokens decoded, want %d", modes[k], res.DecodeTokens, decodeNew-1)
			}
			if tokens == nil {
				tokens = res.Tokens
			} else if fmt.Sprint(res.Tokens) != fmt.Sprint(tokens) {
				return 0, 0, fmt.Errorf("decode %s: tokens %v, step by step %v", modes[k], res.Tokens, tokens)
			}
			if i > 0 && (best[k] == 0 || d < best[k]) {
				best[k] = d
			}
		}
	}
	return float64(decodeNew-1) / best[0].Seconds(), float64(decodeNew-1) / best[1].Seconds(), nil
}

// decodeModel is c's model with f32 weights drawn uniformly: norm scales
// around 1, matrices of standard deviation 0.02 (transformers' init).
func decodeModel(c *hf.Config) (*models.Model, error) {
	m, err := models.Abstract(c, ir.F32)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range m.Params {
		p := &m.Params[i]
		b := backend.NewLongLived(p.Type) // as a checkpoint's stacked weights are (backend.Stack)
		vals := make([]float64, b.Len())
		base, width := 0.0, 0.02*math.Sqrt(3)
		if len(p.Type.Dims()) == 1 {
			base, width = 1, 0.1
		}
		for j := range vals {
			vals[j] = base + width*(2*rng.Float64()-1)
		}
		b.WriteFloat64s(0, vals)
		p.Buffer = b
	}
	return m, nil
}
