package models

import (
	"slices"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/train"
)

// shardTrainSteps runs steps training steps of m on batches of 4 rows of
// 6 tokens (labels: the tokens with every fifth one ignored, when labels)
// and returns the losses and the trainer.
func shardTrainSteps(t *testing.T, m *Model, opt train.Optimizer, o TrainOptions, steps int) ([]float32, *Trainer) {
	t.Helper()
	tr, err := NewTrainer(m, opt, o)
	if err != nil {
		t.Fatal(err)
	}
	var losses []float32
	for i := range steps {
		tok := make([]int32, 24)
		lab := make([]int32, 24)
		for j := range tok {
			tok[j] = int32((7*i + 5*j + j*j) % 64)
			lab[j] = tok[j]
			if j%5 == 3 {
				lab[j] = IgnoreLabel
			}
		}
		var labels *backend.Buffer
		if o.Labels {
			labels = tensor.FromSlice(lab, 4, 6).Buffer()
		}
		old := slices.Clone(tr.state)
		loss, err := tr.Step(tensor.FromSlice(tok, 4, 6).Buffer(), labels)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		losses = append(losses, loss)
		for k, b := range old { // updated in place: the step took the old ones
			if o.Device != "" && b.Donated() == "" {
				t.Fatalf("step %d: weight or state %d was not donated to the step", i, k)
			}
		}
	}
	return losses, tr
}

// TestTrainerSplit: three steps of SGD (with momentum) and of AdamW (with
// labels) of the tiny qwen3 split over 4 XLA:CPU devices (tp=4, and dp=2,
// tp=2 with the batch rows split, and that with FSDP) give the losses of the unsplit run on
// the reference executor within 1e-5 relative, and its weights within 1e-5
// of the largest (the unsplit run is TestTrainOracle's, tied to torch's).
// Between steps each weight and each state tensor is held as four pieces
// on the devices, split like the Generator's weights.
func TestTrainerSplit(t *testing.T) {
	m := randomModel(t, tinyQwen3Config, 0.5)
	sgd := train.NewSGD(0.05)
	sgd.Momentum = 0.9
	for _, c := range []struct {
		name   string
		opt    train.Optimizer
		labels bool
	}{{"sgd", sgd, false}, {"adamw", train.NewAdamW(0.01), true}} {
		cache := engine.NewCache("", engine.CacheOptions{})
		want, host := shardTrainSteps(t, m, c.opt, TrainOptions{Backend: backend.CPUFallback, Cache: cache, Labels: c.labels}, 3)
		wantW := host.Weights()
		for _, sc := range splitCases {
			spec := sc.spec
			if sc.fsdp {
				spec += " fsdp"
			}
			o := TrainOptions{Device: "pjrt", Precision: "highest", Cache: cache, Labels: c.labels, Mesh: mustMesh(t, sc.spec), FSDP: sc.fsdp}
			got, tr := shardTrainSteps(t, m, c.opt, o, 3)
			for i := range want {
				if d := float64(got[i] - want[i]); d*d > 1e-10*float64(want[i]*want[i]) {
					t.Errorf("%s %s: step %d: loss %g, unsplit %g", c.name, spec, i, got[i], want[i])
				}
			}
			for i, w := range tr.Weights() {
				if d, s := maxDiff(w.Float32s(), wantW[i].Float32s()); d > 1e-5*s {
					t.Errorf("%s %s: weight %s differs by %g (largest %g)", c.name, spec, m.Params[i].Name, d, s)
				}
			}
			checkSplitState(t, c.name+" "+spec, sc.q, sc.norm, m, tr)
		}
	}
}

// splitCases are the meshes TestTrainerSplit trains on, with the piece a
// device holds of the q projections [2 layers, 16, 16] and of the
// attention norms [2 layers, 16]: tp splits q's rows; FSDP splits both
// over dp too, on their first dimension that is not the layers'.
var splitCases = []struct {
	spec    string
	fsdp    bool
	q, norm []int64
}{
	{"tp=4", false, []int64{2, 4, 16}, []int64{2, 16}},
	{"dp=2,tp=2", false, []int64{2, 8, 16}, []int64{2, 16}},
	{"dp=2,tp=2", true, []int64{2, 8, 8}, []int64{2, 8}},
}

// checkSplitState: every weight and state tensor of tr is four pieces on
// the devices, the q projections' and the attention norms' of the shapes
// given.
func checkSplitState(t *testing.T, what string, q, norm []int64, m *Model, tr *Trainer) {
	t.Helper()
	order, nTrained := m.lossOrder()
	k1 := len(tr.state) / nTrained
	for i, b := range tr.state {
		p := m.Params[order[i%nTrained]]
		if i >= nTrained {
			p = m.Params[order[(i-nTrained)/(k1-1)]]
		}
		sb, ok := b.Device().(*pjrt.ShardedBuffer)
		if !ok || len(sb.Shards) != 4 {
			t.Fatalf("%s: %s (tensor %d of the state) is not four pieces on the devices (%T)", what, p.Name, i, b.Device())
		}
		want := map[string][]int64{"Q": q, "AttnNorm": norm}[fieldName(p.Name)]
		if piece := sb.Shards[0].Type(); want != nil && !slices.Equal(piece.Dims(), want) {
			t.Errorf("%s: a device holds %s of %s %s, want %v", what, piece, p.Name, p.Type, want)
		}
	}
}

// TestTrainerSplitErrors: a mesh needs a device, and FSDP a mesh with dp.
func TestTrainerSplitErrors(t *testing.T) {
	m := randomModel(t, tinyQwen3Config, 0.5)
	for _, c := range []struct {
		o    TrainOptions
		want string
	}{
		{TrainOptions{Mesh: mustMesh(t, "tp=2")}, "models: a mesh (tp=2) splits training over a device's chips: name the device (TrainOptions.Device)"},
		{TrainOptions{FSDP: true}, "models: FSDP splits the weights over a mesh's dp axis: give TrainOptions.Mesh with dp"},
		{TrainOptions{Device: "pjrt", Mesh: mustMesh(t, "tp=4"), FSDP: true}, "models: FSDP splits the weights over a mesh's dp axis: give TrainOptions.Mesh with dp"},
	} {
		if _, err := NewTrainer(m, train.NewSGD(0.1), c.o); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %s", c.o, err, c.want)
		}
	}
}
