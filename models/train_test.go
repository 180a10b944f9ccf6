package models

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/safetensors"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/train"
)

// trainRows are the training tokens of the oracle tests: 6 rows of 12 (past
// the sliding windows of the tiny models), ids below every tiny vocabulary.
func trainRows() ([]int32, []int64) {
	out := make([]int32, 6*12)
	for i := range out {
		out[i] = int32((i*37 + i/12*11 + 5) % 64)
	}
	return out, []int64{6, 12}
}

func writeNpy(t *testing.T, path string, dtype string, shape []int64, data any) {
	t.Helper()
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, data)
	if err := npy.WriteFile(path, &npy.Array{DType: dtype, Shape: shape, Data: b.Bytes()}); err != nil {
		t.Fatal(err)
	}
}

// trainRun is one training run's flags, as `tpucc train` and
// tools/hf/train_oracle.py take them.
type trainRun struct {
	opt   train.Optimizer
	steps int
	batch int64
}

func (r trainRun) flags() []string {
	f := []string{"--steps", fmt.Sprint(r.steps), "--batch", fmt.Sprint(r.batch), "--optimizer", string(r.opt.Kind),
		"--lr", fmt.Sprint(r.opt.LR), "--weight-decay", fmt.Sprint(r.opt.WeightDecay)}
	if r.opt.Kind == train.SGD {
		return append(f, "--momentum", fmt.Sprint(r.opt.Momentum))
	}
	return append(f, "--betas", fmt.Sprintf("%v,%v", r.opt.Beta1, r.opt.Beta2), "--eps", fmt.Sprint(r.opt.Eps))
}

// torchTrain runs the run with transformers and torch.optim, returning its
// losses and its trained checkpoint's tensors by name.
func torchTrain(t *testing.T, dir, tokens string, r trainRun) ([]float32, map[string][]float32) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "torch")
	args := append([]string{"../tools/hf/train_oracle.py", "train", "--model", dir, "--tokens", tokens, "--output-dir", out}, r.flags()...)
	if b, err := exec.Command(hfPython, args...).CombinedOutput(); err != nil {
		t.Fatalf("train_oracle.py: %v\n%s", err, b)
	}
	l, err := npy.ReadFile(filepath.Join(out, "losses.npy"))
	if err != nil {
		t.Fatal(err)
	}
	losses := make([]float32, len(l.Data)/4)
	binary.Read(bytes.NewReader(l.Data), binary.LittleEndian, losses)
	return losses, readF32s(t, filepath.Join(out, "model.safetensors"))
}

// readF32s reads every tensor of a safetensors file as f32.
func readF32s(t *testing.T, path string) map[string][]float32 {
	t.Helper()
	f, err := safetensors.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]float32{}
	for _, name := range f.Names() {
		b, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = slices.Clone(tensor.FromBuffer(b).Convert(ir.F32).Float32s())
	}
	return out
}

// tpuccTrain runs the run with a Trainer on the llvm backend and writes the
// trained checkpoint (and dir's config.json) to a new directory, returned
// with the losses.
func tpuccTrain(t *testing.T, dir string, tokens []int32, shape []int64, r trainRun) ([]float32, string) {
	t.Helper()
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tr, err := NewTrainer(m, r.opt, TrainOptions{Cache: engine.NewCache("", engine.CacheOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	var losses []float32
	L := shape[1]
	for i := range r.steps {
		batch := make([]int32, 0, r.batch*L)
		for j := range r.batch {
			row := (int64(i)*r.batch + j) % shape[0]
			batch = append(batch, tokens[row*L:(row+1)*L]...)
		}
		loss, err := tr.Step(tensor.FromSlice(batch, r.batch, L).Buffer(), nil)
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, loss)
	}
	named, err := m.Checkpoint(tr.Weights())
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := safetensors.WriteFile(filepath.Join(out, "model.safetensors"), named, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return losses, out
}

// trainFamilies are the oracle models trained against torch (the bf16 one
// is left out: torch would train it in bf16, tpucc trains in f32).
var trainFamilies = []string{"qwen3", "llama", "qwen3_moe", "mistral", "qwen2", "mixtral", "gemma3", "gemma3_wrapped",
	"phi3", "gemma2", "granite", "olmo2", "qwen2_moe", "gemma4", "gemma4_wrapped"}

// TestTrainOracle trains each tiny model of tools/hf/oracle.py with
// tpucc and with transformers and torch.optim (tools/hf/train_oracle.py),
// f32: one SGD step (with momentum and weight decay) whose update agrees
// with torch's within 1e-3 of its largest element, tensor by tensor, and
// three AdamW steps whose losses agree within 1e-3 and weights within
// 0.1·lr for at least 99.9% of the elements. The checkpoints are compared
// as written: tpucc's has torch's tensor names.
func TestTrainOracle(t *testing.T) {
	root := oracleDirs(t)
	tokens, shape := trainRows()
	tokFile := filepath.Join(t.TempDir(), "tokens.npy")
	writeNpy(t, tokFile, "i32", shape, tokens)
	sgd := train.NewSGD(0.1)
	sgd.Momentum, sgd.WeightDecay = 0.9, 0.01
	adamw := train.NewAdamW(0.01)
	for _, fam := range trainFamilies {
		t.Run(fam, func(t *testing.T) {
			dir := filepath.Join(root, fam)
			before := readF32s(t, filepath.Join(dir, "model.safetensors"))
			r := trainRun{sgd, 1, 2}
			tl, tw := torchTrain(t, dir, tokFile, r)
			gl, out := tpuccTrain(t, dir, tokens, shape, r)
			gw := readF32s(t, filepath.Join(out, "model.safetensors"))
			checkTrainLosses(t, "sgd", gl, tl)
			checkNames(t, gw, tw)
			for name, w := range tw {
				var maxUpd, maxErr float64
				for j := range w {
					maxUpd = math.Max(maxUpd, math.Abs(float64(w[j]-before[name][j])))
					maxErr = math.Max(maxErr, math.Abs(float64(gw[name][j]-w[j])))
				}
				if maxErr > 1e-3*maxUpd {
					t.Errorf("sgd: %s: the update differs from torch's by %g (its largest element %g)", name, maxErr, maxUpd)
				}
			}

			r = trainRun{adamw, 3, 2}
			tl, tw = torchTrain(t, dir, tokFile, r)
			gl, out = tpuccTrain(t, dir, tokens, shape, r)
			gw = readF32s(t, filepath.Join(out, "model.safetensors"))
			t.Logf("adamw losses %v, torch %v", gl, tl)
			checkTrainLosses(t, "adamw", gl, tl)
			checkNames(t, gw, tw)
			n, bad, moved := 0, 0, 0.0
			for name, w := range tw {
				for j := range w {
					n++
					if math.Abs(float64(gw[name][j]-w[j])) > 0.1*adamw.LR {
						bad++
					}
					moved = math.Max(moved, math.Abs(float64(w[j]-before[name][j])))
				}
			}
			if float64(bad) > 0.001*float64(n) {
				t.Errorf("adamw: %d of %d weights differ from torch's by more than 0.1·lr", bad, n)
			}
			if moved < adamw.LR {
				t.Errorf("adamw: torch moved the weights by at most %g: the comparison proves nothing", moved)
			}
		})
	}
}

func checkTrainLosses(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d losses, torch %d", what, len(got), len(want))
	}
	for k := range want {
		if math.Abs(float64(got[k]-want[k])) > 1e-3 || math.IsNaN(float64(got[k])) {
			t.Errorf("%s: step %d: loss %g, torch's %g", what, k, got[k], want[k])
		}
	}
}

// checkNames: tpucc's checkpoint holds exactly the tensors torch saved.
func checkNames(t *testing.T, got, want map[string][]float32) {
	t.Helper()
	var g, w []string
	for n := range got {
		g = append(g, n)
	}
	for n := range want {
		w = append(w, n)
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Fatalf("tensors:\n%s\ntorch's:\n%s", strings.Join(g, " "), strings.Join(w, " "))
	}
	for n := range want {
		if len(got[n]) != len(want[n]) {
			t.Fatalf("%s: %d elements, torch's %d", n, len(got[n]), len(want[n]))
		}
	}
}

// TestTrainedLoadsInTransformers: the checkpoint tpucc writes after
// training loads in transformers, which computes the logits that tpucc
// computes with the trained weights (within 1e-4 of the largest).
func TestTrainedLoadsInTransformers(t *testing.T) {
	root := oracleDirs(t)
	tokens, shape := trainRows()
	for _, fam := range []string{"qwen3", "phi3", "qwen3_moe"} {
		t.Run(fam, func(t *testing.T) {
			_, out := tpuccTrain(t, filepath.Join(root, fam), tokens, shape, trainRun{train.NewAdamW(0.01), 2, 3})
			tmp := t.TempDir()
			tokFile, logitsFile := filepath.Join(tmp, "tokens.npy"), filepath.Join(tmp, "logits.npy")
			writeNpy(t, tokFile, "i32", shape, tokens)
			if b, err := exec.Command(hfPython, "../tools/hf/train_oracle.py", "logits", out, tokFile, logitsFile).CombinedOutput(); err != nil {
				t.Fatalf("train_oracle.py: %v\n%s", err, b)
			}
			a, err := npy.ReadFile(logitsFile)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float32, len(a.Data)/4)
			binary.Read(bytes.NewReader(a.Data), binary.LittleEndian, want)

			m, err := Load(out)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ws := []*backend.Buffer{tensor.FromSlice(tokens, shape...).Buffer()}
			for _, p := range m.Params {
				ws = append(ws, p.Buffer)
			}
			got, err := tensor.Eval("logits", ws, func(ts []*tensor.Tensor) (_ []*tensor.Tensor, err error) {
				l, err := m.allLogits(ts[1:], ts[0])
				return []*tensor.Tensor{l}, err
			})
			if err != nil {
				t.Fatal(err)
			}
			g := tensor.FromBuffer(got[0]).Float32s()
			if len(g) != len(want) {
				t.Fatalf("%d logits, transformers %d", len(g), len(want))
			}
			var big, diff float64
			for i := range want {
				big = math.Max(big, math.Abs(float64(want[i])))
				diff = math.Max(diff, math.Abs(float64(g[i]-want[i])))
			}
			if diff > 1e-4*big {
				t.Errorf("logits differ from transformers' by %g (largest %g)", diff, big)
			}
		})
	}
}
