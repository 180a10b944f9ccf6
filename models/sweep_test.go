package models

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/train"
)

// TestConfigSweep compares tpucc with transformers and torch on the config
// variants of tools/hf/sweep.py: run `tools/hf/sweep.py DIR` (minutes),
// then this test with TPUCC_CFGSWEEP=DIR (TPUCC_CFGSWEEP_ONLY, a regular
// expression, limits it to the variants it matches; torch's training runs
// are kept beside DIR). Each variant that loads must give transformers'
// logits of the prompts within 1e-4 of the largest and its greedy tokens
// (when no step is a near tie), and train as torch does: one SGD step
// (momentum, weight decay) whose update agrees within 1e-3 of its largest
// element, and three AdamW steps (betas, weight decay, clipping, labels with
// -100) whose losses agree within 1e-3 and weights within 0.1·lr for
// 99.9% of them, as TestTrainOracle (the output_router_logits variants
// with the routers' load-balancing loss). A variant tpucc refuses is logged
// with its error, and so is one whose training torch makes random
// (dropout, router noise). Not run
// otherwise: the tiny oracle models of tools/hf/oracle.py are CI's.
func TestConfigSweep(t *testing.T) {
	root := os.Getenv("TPUCC_CFGSWEEP")
	if root == "" {
		t.Skip("TPUCC_CFGSWEEP names no directory of tools/hf/sweep.py's checkpoints")
	}
	var names []string
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "oracle.json")); err == nil {
			names = append(names, e.Name())
		}
	}
	if only := os.Getenv("TPUCC_CFGSWEEP_ONLY"); only != "" {
		re, err := regexp.Compile(only)
		if err != nil {
			t.Fatal(err)
		}
		names = slices.DeleteFunc(names, func(n string) bool { return !re.MatchString(n) })
	}
	var loaded []string
	for _, name := range names {
		if m, err := Load(filepath.Join(root, name)); err != nil {
			t.Logf("%s: refused: %v", name, err)
		} else {
			m.Close()
			loaded = append(loaded, name)
		}
	}
	if len(loaded) == 0 {
		return
	}
	runs := sweepRuns()
	torchOf := torchTrain(t, root, loaded, sweepTokens(), []int64{6, 12}, runs...)
	for _, name := range loaded {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name)
			sweepGenerate(t, dir)
			c, err := hf.LoadConfig(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.TrainNoise) > 0 {
				t.Logf("training not compared: torch's is random (%s)", strings.Join(c.TrainNoise, ", "))
			} else {
				sweepTrain(t, dir, runs, torchOf(name))
			}
		})
	}
}

// sweepTokens are trainRows' tokens, which are below every variant's vocabulary.
func sweepTokens() []int32 {
	tokens, _ := trainRows()
	return tokens
}

// sweepRuns: SGD with momentum and weight decay, one step of 2 rows; AdamW
// with its own betas, eps, weight decay and clipping, three steps of 3 rows,
// with labels of which a few are -100.
func sweepRuns() []trainRun {
	sgd := train.NewSGD(0.1)
	sgd.Momentum, sgd.WeightDecay = 0.9, 0.01
	adamw := train.NewAdamW(0.01)
	adamw.Beta1, adamw.Beta2, adamw.Eps, adamw.WeightDecay, adamw.ClipNorm = 0.8, 0.95, 1e-6, 0.1, 0.5
	labels := sweepTokens()
	for _, i := range []int{0, 5, 13, 14, 30, 47, 71} {
		labels[i] = IgnoreLabel
	}
	be := sweepBackend()
	return []trainRun{{opt: sgd, steps: 1, batch: 2, backend: be}, {opt: adamw, steps: 3, batch: 3, labels: labels, backend: be}}
}

// sweepBackend runs generate and train: TPUCC_CFGSWEEP_BACKEND (llvm: what
// tpucc generate and train run by default), or the reference executor.
func sweepBackend() string {
	if b := os.Getenv("TPUCC_CFGSWEEP_BACKEND"); b != "" {
		return b
	}
	return backend.CPUFallback
}

func sweepGenerate(t *testing.T, dir string) {
	t.Helper()
	o := readOracle(t, dir)
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	g, err := NewGenerator(m, Options{Backend: sweepBackend(), AllLogits: true, Cache: engine.NewCache("", engine.CacheOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Generate(Request{Prompts: o.Prompts, MaxNew: len(o.Greedy[0])})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("logits within %.2g of the largest", checkLogits(t, res.PromptLogits, res.Pad, o))
	if o.Margin < 1e-3 {
		t.Logf("greedy tokens not compared: transformers' choices are near ties (margin %g)", o.Margin)
		return
	}
	for b := range o.Prompts {
		if !slices.Equal(res.Tokens[b], o.Greedy[b]) {
			t.Errorf("prompt %d: greedy tokens\n%v\nwant (transformers)\n%v", b, res.Tokens[b], o.Greedy[b])
		}
	}
}

func sweepTrain(t *testing.T, dir string, runs []trainRun, torch []torchRun) {
	t.Helper()
	tokens, shape := trainRows()
	before := readF32s(t, filepath.Join(dir, "model.safetensors"))
	gl, out := tpuccTrain(t, dir, tokens, shape, runs[0])
	gw := readF32s(t, filepath.Join(out, "model.safetensors"))
	checkTrainLosses(t, "sgd", gl, torch[0].losses)
	checkNames(t, gw, torch[0].weights)
	worst := checkSGDUpdate(t, before, gw, torch[0].weights)
	gl, out = tpuccTrain(t, dir, tokens, shape, runs[1])
	gw = readF32s(t, filepath.Join(out, "model.safetensors"))
	checkTrainLosses(t, "adamw", gl, torch[1].losses)
	checkNames(t, gw, torch[1].weights)
	lr := runs[1].opt.LR
	largest := checkAdamWWeights(t, gw, torch[1].weights, lr)
	t.Logf("sgd update error %.2g of the largest; adamw losses %v torch %v, largest weight difference %.2g·lr", worst, gl, torch[1].losses, largest/lr)
}
