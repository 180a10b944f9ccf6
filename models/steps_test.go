package models

import (
	"runtime"
	"testing"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/tensor"
)

// wideQwen3Config is tinyQwen3Config with a vocabulary wide enough that a
// decode step's logits (4 rows of 4096 f32, 64 KiB) dwarf the bookkeeping
// of a call.
const wideQwen3Config = `{"model_type": "qwen3", "vocab_size": 4096, "hidden_size": 16,
"intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
"head_dim": 8, "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 128,
"tie_word_embeddings": true}`

// TestDecodeStepReusesStorage: on the cpu device a decode step writes its
// logits into the last step's storage and its cache where it lies, so a
// step allocates a few kilobytes of bookkeeping, not its results: under an
// eighth of the logits' bytes, where the same steps without storage handed
// back allocate the logits every step. Nothing is timed.
func TestDecodeStepReusesStorage(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	m := randomModel(t, wideQwen3Config, 0.5)
	g, err := NewGenerator(m, Options{Decode: DecodeSteps})
	if err != nil {
		t.Fatal(err)
	}
	const B = 4
	req := Request{Prompts: [][]int32{{3, 1, 4}, {1, 5, 9}, {2, 6, 5}, {3, 5, 8}}, MaxNew: 8}
	padded, capacity, err := g.shape(req)
	if err != nil {
		t.Fatal(err)
	}
	logitsBytes := float64(B * 4096 * 4)
	perStep := func(handBack bool) (bytes, allocs float64) {
		cache := g.spare.take(m.CacheTypes(B, int64(capacity)))
		defer g.spare.put(cache)
		var weights []engine.Arg
		for _, w := range g.weights {
			weights = append(weights, engine.TensorArg(w))
		}
		st := g.newSteps(cache, engine.TensorArg(tensor.FromSlice(make([]int32, B), B).Buffer()), weights)
		if st.into == nil {
			t.Fatal("the cpu device's decode steps are not handed storage")
		}
		if !handBack {
			st.into = nil
		}
		tokens := make([]int32, B*padded)
		if _, err := st.prefill(tokens, B, padded); err != nil {
			t.Fatal(err)
		}
		next := []int32{7, 8, 9, 10}
		step := func() {
			if _, err := st.decode(next, padded); err != nil {
				t.Fatal(err)
			}
		}
		step() // compiles, and gives the logits' storage
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		const n = 10
		for range n {
			step()
		}
		runtime.ReadMemStats(&m1)
		return float64(m1.TotalAlloc-m0.TotalAlloc) / n, testing.AllocsPerRun(n, step)
	}
	bytes, allocs := perStep(true)
	t.Logf("a decode step handed its storage back: %.0f bytes in %.0f allocations (logits %.0f bytes)", bytes, allocs, logitsBytes)
	if bytes > logitsBytes/8 {
		t.Errorf("a decode step allocates %.0f bytes, want under %.0f (an eighth of its logits)", bytes, logitsBytes/8)
	}
	fresh, freshAllocs := perStep(false)
	t.Logf("without: %.0f bytes in %.0f allocations", fresh, freshAllocs)
	if fresh < logitsBytes {
		t.Errorf("without storage handed back a step allocates %.0f bytes, less than its logits (%.0f): the test measures nothing", fresh, logitsBytes)
	}
}
