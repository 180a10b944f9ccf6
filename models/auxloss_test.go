package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/train"
)

// withAux is config (a JSON object) with output_router_logits true and
// router_aux_loss_coef coef.
func withAux(config string, coef float64) string {
	return strings.Replace(config, "{", fmt.Sprintf(`{"output_router_logits": true, "router_aux_loss_coef": %v, `, coef), 1)
}

// auxCoefs are the coefficients of the load-balancing loss that the torch
// comparison trains each MoE family with, none the default 0.001: large
// enough that leaving the auxiliary loss out fails it far beyond its
// tolerances (qwen3_moe's first loss 0.61 off torch's).
var auxCoefs = map[string]float64{"qwen3_moe": 0.2, "mixtral": 0.3, "qwen2_moe": 0.5}

// TestTrainOracleRouterAux is TestTrainOracle for the MoE families' oracle
// models with output_router_logits true (auxCoefs), which transformers
// trains on the causal-LM loss plus the coefficient times the routers'
// load-balancing loss: one SGD step whose update agrees with torch's within
// 1e-3 of its largest element, tensor by tensor, and three AdamW steps (with
// labels of which some are IgnoreLabel: the auxiliary loss still counts every
// token) whose losses agree within 1e-3 and weights within 0.1·lr for at
// least 99.9% of the elements. Mixtral's two layers are one loop; the
// others' layers, a dense one between two MoE ones, are unrolled.
func TestTrainOracleRouterAux(t *testing.T) {
	root := auxOracleDirs(t, oracleDirs(t))
	tokens, shape := trainRows()
	labels := slices.Clone(tokens)
	for _, i := range []int{0, 5, 13, 14, 30, 47, 71} {
		labels[i] = IgnoreLabel
	}
	sgd := train.NewSGD(0.1)
	sgd.Momentum, sgd.WeightDecay = 0.9, 0.01
	adamw := train.NewAdamW(0.01)
	runs := []trainRun{{opt: sgd, steps: 1, batch: 2}, {opt: adamw, steps: 3, batch: 3, labels: labels}}
	var fams []string // sorted: torchTrain keeps its results by their order too
	for _, fam := range slices.Sorted(maps.Keys(auxCoefs)) {
		fams = append(fams, auxName(fam))
	}
	torchOf := torchTrain(t, root, fams, tokens, shape, runs...)
	for _, fam := range fams {
		t.Run(fam, func(t *testing.T) { sweepTrain(t, filepath.Join(root, fam), runs, torchOf(fam)) })
	}
}

// auxName is the directory of fam's oracle model with its auxCoefs loss.
func auxName(fam string) string { return fmt.Sprintf("%s-aux%v", fam, auxCoefs[fam]) }

// auxOracleDirs makes, once per oracle root, the directory beside it that
// holds each auxCoefs family's oracle checkpoint with output_router_logits
// true and its coefficient in config.json, and returns it. Its name and the
// families' say all they hold, so torchTrain's results beside it are kept.
func auxOracleDirs(t *testing.T, root string) string {
	t.Helper()
	out := root + "-aux"
	if _, err := os.Stat(filepath.Join(out, "done")); err == nil {
		return out
	}
	tmp, err := os.MkdirTemp(filepath.Dir(root), "making-aux-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for fam, coef := range auxCoefs {
		if err := auxCopy(filepath.Join(root, fam), filepath.Join(tmp, auxName(fam)), coef); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "done")); err == nil {
		return out // another process finished first
	}
	os.RemoveAll(out)
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// auxCopy copies the model directory from to to, setting config.json's
// output_router_logits and router_aux_loss_coef.
func auxCopy(from, to string, coef float64) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if e.Name() == "config.json" {
			// Numbers kept as written: transformers refuses 0 for a float.
			var cfg map[string]any
			d := json.NewDecoder(bytes.NewReader(b))
			d.UseNumber()
			if err := d.Decode(&cfg); err != nil {
				return err
			}
			cfg["output_router_logits"], cfg["router_aux_loss_coef"] = true, coef
			if b, err = json.MarshalIndent(cfg, "", "  "); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TestRouterAuxLossLoops: with the load-balancing loss, the training step
// whose layers run as a while over their stacked weights, unrolled over them
// (TrainOptions.UnrollLayers), and with the loop's reverse recomputing each
// trip (RematLayers) give the losses of two SGD steps and the updates
// after them of the model with every layer its own weights
// (TPUCC_UNROLL_LAYERS=1): within 1e-5 of the loss and 1e-4 of the largest
// element of each update (the same arithmetic summed in another order).
// The Qwen3-MoE loops over a body of a dense layer then a MoE one, twice,
// so its sums pass the dense layer by; Qwen2-MoE's four MoE layers are one
// loop. And the loss differs from the same model's without the auxiliary
// loss by more than coef/10 (the auxiliary loss is about top-k, 2).
func TestRouterAuxLossLoops(t *testing.T) {
	const coef = 0.4
	tokens := tensor.FromSlice([]int32{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3}, 2, 8).Buffer()
	for _, cfg := range []string{qwen3MoESparse, qwen2MoEShared} {
		cfg = withAux(cfg, coef)
		t.Setenv(unrollEnv, "1")
		u := randomModel(t, cfg, 0.5)
		t.Setenv(unrollEnv, "")
		l := restacked(t, u, abstractModel(t, cfg, ir.F32))
		name := l.Config.Arch
		wantL, wantU := sgdSteps(t, u, tokens, TrainOptions{})
		for _, o := range []TrainOptions{{}, {UnrollLayers: true}, {RematLayers: true}} {
			gotL, gotU := sgdSteps(t, l, tokens, o)
			for i := range wantL {
				if math.Abs(float64(gotL[i]-wantL[i])) > 1e-5*math.Abs(float64(wantL[i])) {
					t.Errorf("%s %+v: step %d: loss %g, every layer its own weights %g", name, o, i, gotL[i], wantL[i])
				}
			}
			checkStackGrads(t, l, gotU, wantU)
		}
		off := strings.Replace(cfg, `"output_router_logits": true`, `"output_router_logits": false`, 1)
		plain := restacked(t, u, abstractModel(t, off, ir.F32))
		if pl, _ := sgdSteps(t, plain, tokens, TrainOptions{}); math.Abs(float64(wantL[0]-pl[0])) < coef/10 {
			t.Errorf("%s: loss %g with the auxiliary loss, %g without", name, wantL[0], pl[0])
		}
	}
}

// sgdSteps trains m on tokens for two SGD steps (momentum, weight decay)
// on the reference executor: the losses, and each weight's update by name.
func sgdSteps(t *testing.T, m *Model, tokens *backend.Buffer, o TrainOptions) ([]float32, map[string]*tensor.Tensor) {
	t.Helper()
	opt := train.NewSGD(0.05)
	opt.Momentum, opt.WeightDecay = 0.9, 0.01
	o.Backend, o.Cache = backend.CPUFallback, engine.NewCache("", engine.CacheOptions{})
	tr, err := NewTrainer(m, opt, o)
	if err != nil {
		t.Fatal(err)
	}
	var losses []float32
	for range 2 {
		l, err := tr.Step(tokens, nil)
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, l)
	}
	upd := map[string]*tensor.Tensor{}
	for i, w := range tr.Weights() {
		p := m.Params[i]
		upd[p.Name] = tensor.FromBuffer(w).Sub(tensor.FromBuffer(f32Copy(p.Buffer)))
	}
	return losses, upd
}

// TestRouterAuxLossNoMoELayer: output_router_logits on a Qwen3-MoE whose
// every layer is dense (mlp_only_layers), where transformers' loss fails
// with an IndexError, is refused by NewTrainer and TraceLoss alike, naming
// the field; with the field false the model trains.
func TestRouterAuxLossNoMoELayer(t *testing.T) {
	cfg := withAux(strings.Replace(qwen3MoEAll, `"mlp_only_layers": []`, `"mlp_only_layers": [0, 1, 2, 3]`, 1), 0.1)
	m := randomModel(t, cfg, 0.5)
	want := "models: config.json's output_router_logits is true but no layer is a MoE layer: " +
		"transformers' load-balancing loss fails without a router (IndexError); set it to false to train"
	if _, err := NewTrainer(m, train.NewAdamW(0.01), TrainOptions{Backend: backend.CPUFallback}); err == nil || err.Error() != want {
		t.Errorf("NewTrainer: got %v\nwant %s", err, want)
	}
	if _, _, err := m.TraceLoss(2, 8, false); err == nil || err.Error() != want {
		t.Errorf("TraceLoss: got %v\nwant %s", err, want)
	}
	off := randomModel(t, strings.Replace(cfg, `"output_router_logits": true`, `"output_router_logits": false`, 1), 0.5)
	if _, _, err := off.TraceLoss(2, 8, false); err != nil {
		t.Errorf("without output_router_logits: %v", err)
	}
}
