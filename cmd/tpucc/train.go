package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models"
	"github.com/tpucc/tpucc/models/safetensors"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/train"
)

var trainCommand = &command{
	name:    "train",
	summary: "train a Hugging Face model directory on token rows",
	about: fill("Trains every weight of a Hugging Face text model directory (the families generate runs) "+
		"with transformers' causal-LM loss: the mean cross-entropy of each next token, labels = the tokens "+
		"(or --labels, where -100 is ignored). Step i trains on rows i·B … i·B+B−1 of T.npy (i32 [rows, L]), "+
		"modulo its rows; the loss, its gradient and the optimizer's update are one compiled step, in f32. "+
		"It writes OUT/losses.npy (f32 [N]: each step's loss before its update), OUT/model.safetensors "+
		"(the checkpoint's own tensor names, dtype and layout) and config.json, with the generation config "+
		"and tokenizer files copied, and prints a line per step on stderr. Nothing is written when it fails. "+
		"With --mesh the step is split over a device's chips: tp splits the weights and their optimizer state "+
		"as generate's, dp the batch rows (XLA sums the gradients), and --fsdp also the weights over dp.", 95) + "\n",
	flags: []flagSpec{
		{name: "model", kind: valueFlag, arg: "DIR", doc: "the model directory"},
		{name: "tokens", kind: valueFlag, arg: "T.npy", doc: "the token rows, i32 [rows, L]"},
		{name: "labels", kind: valueFlag, arg: "L.npy", doc: "the labels, i32 [rows, L] (default: the tokens; -100 is ignored)"},
		{name: "steps", kind: valueFlag, arg: "N", doc: "the number of steps"},
		{name: "batch", kind: valueFlag, arg: "B", doc: "rows per step"},
		{name: "optimizer", kind: valueFlag, arg: "sgd|adamw", doc: "torch.optim.SGD or torch.optim.AdamW"},
		{name: "lr", kind: valueFlag, arg: "LR", doc: "the learning rate"},
		{name: "weight-decay", kind: valueFlag, arg: "WD", doc: "weight decay (default 0 for sgd, 0.01 for adamw, as torch)"},
		{name: "betas", kind: valueFlag, arg: "B1,B2", doc: "AdamW's betas (default 0.9,0.999)"},
		{name: "eps", kind: valueFlag, arg: "E", doc: "AdamW's eps (default 1e-8)"},
		{name: "momentum", kind: valueFlag, arg: "M", doc: "SGD's momentum (default 0)"},
		{name: "clip-norm", kind: valueFlag, arg: "C", doc: "clip the gradients' global L2 norm to C (default: no clipping)"},
		{name: "lr-schedule", kind: valueFlag, arg: "constant|cosine", doc: "the learning rate's schedule (default constant); cosine: linear warm-up from 0 over --warmup steps, then half a cosine to 0 at --total-steps, as transformers' get_cosine_schedule_with_warmup"},
		{name: "warmup", kind: valueFlag, arg: "N", doc: "cosine's warm-up steps (default 0)"},
		{name: "total-steps", kind: valueFlag, arg: "N", doc: "the step at which cosine reaches 0 (default --steps)"},
		{name: "output-dir", kind: valueFlag, arg: "OUT", doc: "where the trained model and losses.npy go"},
		backendFlag,
		deviceFlag,
		precisionFlag,
		meshFlag,
		{name: "fsdp", kind: boolFlag, doc: "split the weights and the optimizer's state over --mesh's dp axis too (FSDP)"},
		{name: "unroll-layers", kind: boolFlag, doc: "run the layers unrolled instead of as loops: a larger program and a longer compile for the same\nwork (the loops' backward reads each layer's intermediates as the forward loop saved them)"},
		{name: "remat-layers", kind: boolFlag, doc: "the layer loops' backward recomputes each layer's forward from its saved input instead of\nreading the intermediates the forward saved (as jax.checkpoint): less memory, a slower step"},
		{name: "report", kind: boolFlag, doc: "train nothing: compile one step for --target through libtpu (no TPU needed) and print whether\nthe parameters, gradients, optimizer state and activations fit one chip (with --mesh: each chip\nof a topology of that many chips, the step split as training on the mesh splits it)"},
		{name: "target", kind: valueFlag, arg: "T", doc: "with --report: the TPU target (default tpu-v6e)"},
		{name: "topology", kind: valueFlag, arg: "T", doc: "with --report: the topology whose one chip the step is compiled for (default the target's first, v6e:2x2;\nwith --mesh its first of as many chips as the mesh has devices)"},
	},
	run: cmdTrain,
}

// trainArgs are train's flags, checked.
type trainArgs struct {
	dir, tokens, labels, out string
	steps, batch             int
	opt                      train.Optimizer
}

func trainErrorf(format string, args ...any) error {
	return errors.New("tpucc train: " + fmt.Sprintf(format, args...))
}

func parseTrain(p *parsed) (*trainArgs, error) {
	a := &trainArgs{dir: p.value("model", ""), tokens: p.value("tokens", ""), labels: p.value("labels", ""), out: p.value("output-dir", "")}
	required := []string{"model", "tokens", "steps", "batch", "optimizer", "lr", "output-dir"}
	if p.flag("report") { // compiles one step; trains nothing and writes nothing
		required = slices.DeleteFunc(required, func(f string) bool { return f == "steps" || f == "output-dir" })
	}
	for _, f := range required {
		if !p.has(f) {
			return nil, trainErrorf("--%s is required", f)
		}
	}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"steps", &a.steps}, {"batch", &a.batch}} {
		if !p.has(f.name) {
			*f.dst = 1 // --report's one step
			continue
		}
		v, err := strconv.Atoi(p.value(f.name, ""))
		if err != nil || v < 1 {
			return nil, trainErrorf("--%s %s: want a positive integer", f.name, p.value(f.name, ""))
		}
		*f.dst = v
	}
	num := func(name string, def float64) (float64, error) {
		if !p.has(name) {
			return def, nil
		}
		v, err := strconv.ParseFloat(p.value(name, ""), 64)
		if err != nil || v < 0 || v != v || v > 1e30 {
			return 0, trainErrorf("--%s %s: want a non-negative number", name, p.value(name, ""))
		}
		return v, nil
	}
	lr, err := num("lr", 0)
	if err != nil {
		return nil, err
	}
	switch kind := p.value("optimizer", ""); kind {
	case "sgd":
		a.opt = train.NewSGD(lr)
		for _, f := range []string{"betas", "eps"} {
			if p.has(f) {
				return nil, trainErrorf("--%s is AdamW's; --optimizer is sgd", f)
			}
		}
		if a.opt.Momentum, err = num("momentum", 0); err != nil {
			return nil, err
		}
	case "adamw":
		a.opt = train.NewAdamW(lr)
		if p.has("momentum") {
			return nil, trainErrorf("--momentum is SGD's; --optimizer is adamw")
		}
		if a.opt.Beta1, a.opt.Beta2, err = parseBetas(p.value("betas", "0.9,0.999")); err != nil {
			return nil, err
		}
		if a.opt.Eps, err = num("eps", a.opt.Eps); err != nil {
			return nil, err
		}
	default:
		return nil, trainErrorf("--optimizer %s: want sgd or adamw", kind)
	}
	if a.opt.WeightDecay, err = num("weight-decay", a.opt.WeightDecay); err != nil {
		return nil, err
	}
	if a.opt.ClipNorm, err = num("clip-norm", 0); err != nil {
		return nil, err
	}
	if a.opt.Schedule, err = parseSchedule(p, a.steps); err != nil {
		return nil, err
	}
	return a, nil
}

// parseSchedule reads --lr-schedule, --warmup and --total-steps: the warm-up
// and total are cosine's, and the warm-up ends by the total.
func parseSchedule(p *parsed, steps int) (train.Schedule, error) {
	kind := p.value("lr-schedule", "constant")
	switch kind {
	case "constant":
		for _, f := range []string{"warmup", "total-steps"} {
			if p.has(f) {
				return train.Schedule{}, trainErrorf("--%s is the cosine schedule's; --lr-schedule is constant", f)
			}
		}
		return train.Schedule{}, nil
	case "cosine":
	default:
		return train.Schedule{}, trainErrorf("--lr-schedule %s: want constant or cosine", kind)
	}
	s := train.Schedule{Total: steps}
	for _, f := range []struct {
		name string
		dst  *int
		min  int
	}{{"warmup", &s.Warmup, 0}, {"total-steps", &s.Total, 1}} {
		if !p.has(f.name) {
			continue
		}
		v, err := strconv.Atoi(p.value(f.name, ""))
		if err != nil || v < f.min {
			return train.Schedule{}, trainErrorf("--%s %s: want an integer of at least %d", f.name, p.value(f.name, ""), f.min)
		}
		*f.dst = v
	}
	if s.Warmup > s.Total {
		return train.Schedule{}, trainErrorf("--warmup %d is past --total-steps %d", s.Warmup, s.Total)
	}
	return s, nil
}

// parseBetas reads "B1,B2", each in [0, 1).
func parseBetas(s string) (float64, float64, error) {
	parts := strings.Split(s, ",")
	var b [2]float64
	for i := range b {
		if len(parts) != 2 {
			break
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(parts[i]), 64)
		if err != nil || !(v >= 0 && v < 1) {
			break
		}
		b[i] = v
		if i == 1 {
			return b[0], b[1], nil
		}
	}
	return 0, 0, trainErrorf("--betas %s: want two numbers in [0, 1), as 0.9,0.999", s)
}

// readRows reads an i32 [rows, L] .npy file whose values are ids below
// vocab (or IgnoreLabel where ignore allows it), naming the file and the
// first bad element.
func readRows(path string, vocab int, ignore bool) (*tensor.Tensor, error) {
	t, err := tensor.ReadNPY(path)
	if err != nil {
		return nil, err
	}
	if t.DType() != ir.I32 || t.Rank() != 2 || t.Shape()[1] < 2 || t.Shape()[0] < 1 {
		return nil, fmt.Errorf("%s: the array is %s; want i32[rows, L] with at least one row of at least 2 tokens", path, t.Type())
	}
	L := int(t.Shape()[1])
	for i, v := range t.Int32s() {
		if (v < 0 || int(v) >= vocab) && !(ignore && v == models.IgnoreLabel) {
			what := "token id"
			if ignore {
				what = "label"
			}
			return nil, fmt.Errorf("%s: row %d, column %d: %s %d is outside the vocabulary of %d", path, i/L, i%L, what, v, vocab)
		}
	}
	return t, nil
}

func cmdTrain(e *env, p *parsed) error {
	a, err := parseTrain(p)
	if err != nil {
		return err
	}
	precision, err := precisionValue(p)
	if err != nil {
		return err
	}
	mesh, err := meshValue(p)
	if err != nil {
		return err
	}
	if p.flag("fsdp") && (mesh == nil || mesh.Axis(models.AxisData) < 0) {
		return usagef("--fsdp splits the weights over --mesh's dp axis: give --mesh with dp, as dp=2,tp=2")
	}
	if p.flag("report") {
		return trainReport(e, p, a, mesh)
	}
	for _, f := range []string{"target", "topology"} {
		if p.has(f) {
			return trainErrorf("--%s is --report's", f)
		}
	}
	if _, err := openRunBackend("train", p.value("backend", ""), p.value("device", "")); err != nil {
		return err
	}
	if st, err := os.Stat(a.out); err == nil && !st.IsDir() {
		return fmt.Errorf("%s: --output-dir is not a directory", a.out)
	}
	m, err := loadModel(e, a.dir, false)
	if err != nil {
		return err
	}
	defer m.Close()
	tokens, err := readRows(a.tokens, m.Config.Vocab, false)
	if err != nil {
		return err
	}
	var labels *tensor.Tensor
	if a.labels != "" {
		if labels, err = readRows(a.labels, m.Config.Vocab, true); err != nil {
			return err
		}
		if !labels.Type().Equal(tokens.Type()) {
			return fmt.Errorf("%s: the labels are %s; the tokens are %s", a.labels, labels.Type(), tokens.Type())
		}
	}
	if L := int(tokens.Shape()[1]); L > m.Config.MaxPositions {
		return fmt.Errorf("%s: rows of %d tokens are longer than the model's max_position_embeddings %d", a.tokens, L, m.Config.MaxPositions)
	}
	if n := m.Config.TrainNoise; len(n) > 0 {
		fmt.Fprintf(e.stderr, "tpucc: warning: config.json's %s: transformers' training drops or perturbs at random there; "+
			"tpucc trains without it, as transformers with it set to 0\n", strings.Join(n, ", "))
	}
	tr, err := models.NewTrainer(m, a.opt, models.TrainOptions{Backend: p.value("backend", ""), Device: p.value("device", ""), Precision: precision,
		Labels: labels != nil, Mesh: mesh, FSDP: p.flag("fsdp"), UnrollLayers: p.flag("unroll-layers"),
		RematLayers: p.flag("remat-layers")})
	if err != nil {
		return err
	}
	losses, err := a.run(e, tr, tokens, labels)
	if err != nil {
		return err
	}
	named, err := m.Checkpoint(tr.Weights())
	if err != nil {
		return err
	}
	return writeTrained(a.dir, a.out, named, losses)
}

// run compiles the step and takes a.steps steps, a line on stderr each.
func (a *trainArgs) run(e *env, tr *models.Trainer, tokens, labels *tensor.Tensor) ([]float32, error) {
	rows, L := tokens.Shape()[0], tokens.Shape()[1]
	B := int64(a.batch)
	fmt.Fprintf(e.stderr, "tpucc: compiling the training step (%s, batch %d × %d tokens)\n", a.opt.Kind, B, L)
	t0 := time.Now()
	if err := tr.Prepare(B, L); err != nil {
		return nil, err
	}
	fmt.Fprintf(e.stderr, "tpucc: compiled in %.2f s\n", time.Since(t0).Seconds())
	pick := func(t *tensor.Tensor, step int) *tensor.Tensor {
		if t == nil {
			return nil
		}
		all := t.Int32s()
		out := make([]int32, 0, B*L)
		for j := range B {
			r := (int64(step)*B + j) % rows
			out = append(out, all[r*L:(r+1)*L]...)
		}
		return tensor.FromSlice(out, B, L)
	}
	var losses []float32
	for i := range a.steps {
		t0 := time.Now()
		var lab *tensor.Tensor
		if labels != nil {
			lab = pick(labels, i)
		}
		loss, err := tr.Step(pick(tokens, i).Buffer(), bufferOf(lab))
		if err != nil {
			return nil, err
		}
		losses = append(losses, loss)
		fmt.Fprintf(e.stderr, "tpucc: step %d/%d: loss %.6f, %.1f tokens/s\n", i+1, a.steps, loss, float64(B*L)/time.Since(t0).Seconds())
	}
	return losses, nil
}

func bufferOf(t *tensor.Tensor) *backend.Buffer {
	if t == nil {
		return nil
	}
	return t.Buffer()
}

// trainedFiles are the files of the model directory copied beside the
// trained checkpoint, where they exist: the generation config and the
// tokenizer's.
var trainedFiles = []string{"generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
	"tokenizer.model", "vocab.json", "merges.txt", "added_tokens.json", "chat_template.jinja", "chat_template.json"}

// writeTrained writes the outputs into a fresh directory beside out and
// moves them into out only when all are written: a failure leaves no
// partial output.
func writeTrained(src, out string, named []safetensors.Named, losses []float32) (err error) {
	parent := filepath.Dir(filepath.Clean(out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(out)+".tmp")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := safetensors.WriteFile(filepath.Join(tmp, "model.safetensors"), named, map[string]string{"format": "pt"}); err != nil {
		return err
	}
	if err := tensor.WriteNPY(filepath.Join(tmp, "losses.npy"), tensor.FromSlice(losses, int64(len(losses)))); err != nil {
		return err
	}
	files := []string{"model.safetensors", "losses.npy", "config.json"}
	for _, f := range append([]string{"config.json"}, trainedFiles...) {
		data, err := os.ReadFile(filepath.Join(src, f))
		if errors.Is(err, os.ErrNotExist) && f != "config.json" {
			continue
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, f), data, 0o644); err != nil {
			return err
		}
		if f != "config.json" {
			files = append(files, f)
		}
	}
	if _, err := os.Stat(out); errors.Is(err, os.ErrNotExist) {
		if err := os.Chmod(tmp, 0o755); err != nil {
			return err
		}
		return os.Rename(tmp, out)
	}
	for _, f := range files {
		if err := os.Rename(filepath.Join(tmp, f), filepath.Join(out, f)); err != nil {
			return err
		}
	}
	return nil
}
