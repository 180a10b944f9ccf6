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
// training step has no while (the layers run unrolled); the looped step's
// reverse loop reads the intermediates its forward loop saved, so it
// multiplies exactly as much per step as the unrolled one, and with
// RematLayers more (each layer's forward products again). The losses over
// three AdamW steps are the unrolled step's, all three ways.
func TestTrainUnrollLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles three training steps with clang")
	}
	m := randomModel(t, tinyQwen3Config, 0.5)
	toks := make([]int32, 2*9)
	for i := range toks {
		toks[i] = int32((i*37 + 5) % 64)
	}
	const steps = 3
	run := func(o TrainOptions) (losses []float32, whiles int, macs int64) {
		cache := engine.NewCache("", engine.CacheOptions{})
		o.Backend, o.Cache = "llvm", cache
		tr, err := NewTrainer(m, train.NewAdamW(0.01), o)
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
	unL, unW, unM := run(TrainOptions{UnrollLayers: true})
	if unW != 0 {
		t.Errorf("while steps unrolled: %d, want none", unW)
	}
	for _, c := range []struct {
		name string
		o    TrainOptions
	}{{"looped", TrainOptions{}}, {"remat", TrainOptions{RematLayers: true}}} {
		l, w, macs := run(c.o)
		for i := range l {
			if math.Abs(float64(unL[i]-l[i])) > 1e-5 {
				t.Errorf("%s: step %d: loss %g, unrolled %g", c.name, i, l[i], unL[i])
			}
		}
		if w == 0 {
			t.Errorf("%s: no while step", c.name)
		}
		switch {
		case !c.o.RematLayers && macs != unM:
			t.Errorf("looped: %d multiply-adds per step, unrolled %d; want the same (the reverse reads the saved intermediates)", macs, unM)
		case c.o.RematLayers && macs <= unM:
			t.Errorf("remat: %d multiply-adds per step, unrolled %d; want more (the forward recomputed)", macs, unM)
		}
		t.Logf("multiply-adds per step: %d %s, %d unrolled", macs, c.name, unM)
	}
}
