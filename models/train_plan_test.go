package models

import (
	"math"
	"slices"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/llvm"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/train"
)

// TestTrainStepVocabPasses: on the llvm backend, a tied-embedding Qwen3's
// training step picks each label's log-probability in one pass over the
// log-probabilities (a `reduce_sum of select`, not a loop storing a
// [B·L, V] select and a reduction reading it), and scatters the tokens' gradient into the
// embedding's zero table without a `loop constant` storing the zeros
// before it; its losses over two AdamW steps are the reference executor's.
func TestTrainStepVocabPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a training step with clang")
	}
	m := randomModel(t, tinyQwen3Config, 0.5)
	opt := train.NewAdamW(0.01)
	toks := make([]int32, 2*9)
	for i := range toks {
		toks[i] = int32((i*37 + 5) % 64)
	}
	run := func(name string, cache *engine.Cache) []float32 {
		tr, err := NewTrainer(m, opt, TrainOptions{Backend: name, Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		var losses []float32
		for range 2 {
			l, err := tr.Step(tensor.FromSlice(toks, 2, 9).Buffer(), nil)
			if err != nil {
				t.Fatal(err)
			}
			losses = append(losses, l)
		}
		return losses
	}
	cache := engine.NewCache("", engine.CacheOptions{})
	got := run("llvm", cache)
	want := run(backend.CPUFallback, engine.NewCache("", engine.CacheOptions{}))
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-5 {
			t.Errorf("step %d: loss %g, the reference's %g", i, got[i], want[i])
		}
	}
	var whats []string
	for _, exe := range cache.Executables() {
		if x, ok := exe.Exec.(*llvm.Executable); ok {
			for _, s := range x.StepTimes() {
				whats = append(whats, s.What)
			}
		}
	}
	if !slices.Contains(whats, "reduce_sum of select") {
		t.Errorf("the label's pick is not one reduction over the log-probabilities: steps %q", whats)
	}
	i := slices.Index(whats, "scatter_add")
	if i < 0 {
		t.Fatalf("no scatter_add step: %q", whats)
	}
	if i > 0 && whats[i-1] == "loop constant" {
		t.Errorf("the embedding's zero table is stored before its scatter_add: steps %q", whats[max(0, i-3):i+1])
	}
}

// TestTrainUnrollLayers: with TrainOptions.UnrollLayers the llvm backend's
// training step has no while (the layers run unrolled) and multiplies less
// per step than the looped step, whose reverse loop runs each layer's
// forward products again; its losses over three AdamW steps are the looped
// step's.
func TestTrainUnrollLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles two training steps with clang")
	}
	m := randomModel(t, tinyQwen3Config, 0.5)
	toks := make([]int32, 2*9)
	for i := range toks {
		toks[i] = int32((i*37 + 5) % 64)
	}
	const steps = 3
	run := func(unroll bool) (losses []float32, whiles int, macs int64) {
		cache := engine.NewCache("", engine.CacheOptions{})
		tr, err := NewTrainer(m, train.NewAdamW(0.01), TrainOptions{Backend: "llvm", Cache: cache, UnrollLayers: unroll})
		if err != nil {
			t.Fatal(err)
		}
		for range steps {
			l, err := tr.Step(tensor.FromSlice(toks, 2, 9).Buffer(), nil)
			if err != nil {
				t.Fatal(err)
			}
			losses = append(losses, l)
		}
		for _, exe := range cache.Executables() {
			if x, ok := exe.Exec.(*llvm.Executable); ok {
				for _, s := range x.StepTimes() {
					if s.What == "while" {
						whiles++
					}
					macs += s.MACs * s.Calls
				}
			}
		}
		return losses, whiles, macs / steps
	}
	loopL, loopW, loopM := run(false)
	unL, unW, unM := run(true)
	for i := range loopL {
		if math.Abs(float64(unL[i]-loopL[i])) > 1e-5 {
			t.Errorf("step %d: loss %g unrolled, %g looped", i, unL[i], loopL[i])
		}
	}
	if loopW == 0 || unW != 0 {
		t.Errorf("while steps: %d looped, %d unrolled; want some and none", loopW, unW)
	}
	if unM >= loopM {
		t.Errorf("multiply-adds per step: %d unrolled, %d looped; want fewer unrolled (no recomputed forward)", unM, loopM)
	}
	t.Logf("multiply-adds per step: %d unrolled, %d looped", unM, loopM)
}
