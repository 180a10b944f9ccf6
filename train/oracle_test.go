package train_test

import (
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/train"
)

// hfPython is the interpreter of `make venv-hf` (torch).
const hfPython = "../.venv-hf/bin/python"

var mlpNames = []string{"w1", "b1", "w2", "b2", "x", "y"}
var mlpShapes = [][]int64{{4, 8}, {8}, {8, 3}, {3}, {6, 4}, {6, 3}}

// mlpInputs are fixed weights and a batch for testdata/mlp.tir.
func mlpInputs() [][]float32 {
	r := rand.New(rand.NewSource(31))
	out := make([][]float32, len(mlpShapes))
	for i, s := range mlpShapes {
		n := int64(1)
		for _, d := range s {
			n *= d
		}
		out[i] = make([]float32, n)
		for j := range out[i] {
			out[i][j] = float32(r.NormFloat64() * 0.7)
		}
	}
	return out
}

// runTorch writes the inputs as .npy, runs tools/optim_oracle.py on cfg and returns
// torch's losses and final weights.
func runTorch(t *testing.T, cfg map[string]any, in [][]float32) ([]float32, [][]float32) {
	t.Helper()
	if _, err := os.Stat(hfPython); err != nil {
		msg := "torch is not installed (" + hfPython + "): run `make venv-hf` at the repository root"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; under CI this test never skips")
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	for i, n := range mlpNames {
		if err := tensor.WriteNPY(filepath.Join(dir, n+".npy"), tensor.FromSlice(in[i], mlpShapes[i]...)); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(dir, "cfg.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(hfPython, "../tools/optim_oracle.py", dir, cfgPath).CombinedOutput(); err != nil {
		t.Fatalf("optim_oracle.py: %v\n%s", err, out)
	}
	read := func(n string) []float32 {
		x, err := tensor.ReadNPY(filepath.Join(dir, n+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		return x.Float32s()
	}
	var ws [][]float32
	for _, n := range mlpNames[:4] {
		ws = append(ws, read("torch_"+n))
	}
	return read("torch_losses"), ws
}

// runSteps builds the step of testdata/mlp.tir, runs it steps times on the reference
// executor from zero state, and returns the losses and the final weights.
func runSteps(t *testing.T, opt train.Optimizer, steps int, in [][]float32) ([]float32, [][]float32) {
	t.Helper()
	src, err := os.ReadFile("testdata/mlp.tir")
	if err != nil {
		t.Fatal(err)
	}
	m, err := tir.Parse("mlp.tir", src)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := train.Step(m, 4, opt)
	if err != nil {
		t.Fatal(err)
	}
	buf := func(x []float32, s []int64) *backend.Buffer {
		return tensor.FromSlice(append([]float32{}, x...), s...).Buffer()
	}
	var params, state []*backend.Buffer
	for i := 0; i < 4; i++ {
		params = append(params, buf(in[i], mlpShapes[i]))
		for range opt.StateNames() {
			state = append(state, buf(make([]float32, len(in[i])), mlpShapes[i]))
		}
	}
	var losses []float32
	for k := 0; k < steps; k++ {
		args := append(append(append([]*backend.Buffer{}, params...), state...), tensor.FromSlice([]int32{int32(k)}).Buffer())
		args = append(args, buf(in[4], mlpShapes[4]), buf(in[5], mlpShapes[5]))
		res, err := cpu.Run(sm, sm.Funcs[0], args)
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, tensor.FromBuffer(res[0]).Float32s()[0])
		params, state = res[1:5], res[5:]
	}
	var ws [][]float32
	for _, p := range params {
		ws = append(ws, tensor.FromBuffer(p).Float32s())
	}
	return losses, ws
}

// TestOracleSGD: one SGD step with momentum 0.9 and weight decay; the update agrees with
// torch.optim.SGD's within 1e-3 of its largest element.
func TestOracleSGD(t *testing.T) {
	in := mlpInputs()
	for _, nesterov := range []bool{false, true} {
		opt := train.NewSGD(0.1)
		opt.Momentum, opt.Nesterov, opt.WeightDecay = 0.9, nesterov, 0.01
		cfg := map[string]any{"optimizer": "sgd", "lr": 0.1, "momentum": 0.9, "nesterov": nesterov, "weight_decay": 0.01, "steps": 2}
		tl, tw := runTorch(t, cfg, in)
		gl, gw := runSteps(t, opt, 2, in)
		checkLosses(t, gl, tl)
		for i := range tw {
			var maxUpd, maxErr float64
			for j := range tw[i] {
				maxUpd = math.Max(maxUpd, math.Abs(float64(tw[i][j]-in[i][j])))
				maxErr = math.Max(maxErr, math.Abs(float64(gw[i][j]-tw[i][j])))
			}
			if maxUpd == 0 || maxErr > 1e-3*maxUpd {
				t.Errorf("nesterov=%v %s: update differs from torch's by %g (largest update %g)", nesterov, mlpNames[i], maxErr, maxUpd)
			}
		}
	}
}

// TestOracleAdamW: five AdamW steps with torch's defaults, then with clipping and a
// warm-up/cosine schedule: losses within 1e-3 and weights within 0.1·lr of torch's for
// at least 99.9% of the elements.
func TestOracleAdamW(t *testing.T) {
	in := mlpInputs()
	const lr = 0.01
	plain := train.NewAdamW(lr)
	sched := train.NewAdamW(lr)
	sched.ClipNorm, sched.Schedule = 0.5, train.Schedule{Warmup: 2, Total: 5}
	cases := []struct {
		name string
		opt  train.Optimizer
		cfg  map[string]any
	}{
		{"defaults", plain, map[string]any{"optimizer": "adamw", "lr": lr, "steps": 5}},
		{"clip+cosine", sched, map[string]any{"optimizer": "adamw", "lr": lr, "steps": 5, "clip_norm": 0.5, "warmup": 2, "total": 5}},
	}
	for _, c := range cases {
		tl, tw := runTorch(t, c.cfg, in)
		gl, gw := runSteps(t, c.opt, 5, in)
		checkLosses(t, gl, tl)
		n, bad := 0, 0
		for i := range tw {
			for j := range tw[i] {
				n++
				if math.Abs(float64(gw[i][j]-tw[i][j])) > 0.1*lr {
					bad++
				}
			}
		}
		if float64(bad) > 0.001*float64(n) {
			t.Errorf("%s: %d of %d weights differ from torch's by more than 0.1·lr", c.name, bad, n)
		}
		moved := 0.0
		for i := range tw {
			for j := range tw[i] {
				moved = math.Max(moved, math.Abs(float64(gw[i][j]-in[i][j])))
			}
		}
		if moved < lr {
			t.Errorf("%s: the weights moved by at most %g: the comparison proves nothing", c.name, moved)
		}
	}
}

func checkLosses(t *testing.T, got, want []float32) {
	t.Helper()
	for k := range want {
		if math.Abs(float64(got[k]-want[k])) > 1e-3 {
			t.Errorf("step %d: loss %g, torch's %g", k, got[k], want[k])
		}
	}
}
