package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/models/safetensors"
	"github.com/tpucc/tpucc/tensor"
)

// trainTokens writes an i32 [rows, L] token file of ids below 32.
func trainTokens(t *testing.T, dir string, rows, L int64) string {
	t.Helper()
	ids := make([]int32, rows*L)
	for i := range ids {
		ids[i] = int32((i*7 + 3) % 32)
	}
	p := filepath.Join(dir, "tokens.npy")
	if err := tensor.WriteNPY(p, tensor.FromSlice(ids, rows, L)); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTrain: two AdamW steps on the reference executor write losses.npy
// (f32 [2], the loss falling), a checkpoint with the source's tensor names,
// dtypes and shapes but new values, config.json and the generation config;
// a progress line per step; and the output generates.
func TestTrain(t *testing.T) {
	dir := tinyQwen3(t)
	writeFile(t, dir, "generation_config.json", []byte(`{"eos_token_id": 5}`))
	tmp := t.TempDir()
	tokens := trainTokens(t, tmp, 3, 6)
	out := filepath.Join(tmp, "out")
	r := tpucc(t, "", "train", "--model", dir, "--tokens", tokens, "--steps", "2", "--batch", "2",
		"--optimizer", "adamw", "--lr", "0.05", "--backend", "reference", "--output-dir", out)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	line := regexp.MustCompile(`(?m)^tpucc: step ([12])/2: loss ([0-9.]+), [0-9.]+ tokens/s$`)
	if got := line.FindAllStringSubmatch(r.stderr, -1); len(got) != 2 || got[0][1] != "1" || got[1][1] != "2" {
		t.Fatalf("no progress line per step in\n%s", r.stderr)
	}
	losses, err := tensor.ReadNPY(filepath.Join(out, "losses.npy"))
	if err != nil {
		t.Fatal(err)
	}
	l := losses.Float32s()
	if losses.Type().String() != "f32[2]" || !(l[1] < l[0]) || math.IsNaN(float64(l[0])) {
		t.Errorf("losses.npy is %s %v; want f32[2], falling", losses.Type(), l)
	}
	if !strings.Contains(r.stderr, fmt.Sprintf("step 1/2: loss %.6f,", l[0])) {
		t.Errorf("the printed loss is not losses.npy's %v:\n%s", l[0], r.stderr)
	}
	src, err := safetensors.OpenFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := safetensors.OpenFile(filepath.Join(out, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	a, b := slices.Sorted(slices.Values(src.Names())), slices.Sorted(slices.Values(dst.Names()))
	if !slices.Equal(a, b) {
		t.Fatalf("tensors %v, the source's %v", b, a)
	}
	for _, name := range a {
		x, _ := src.Tensor(name)
		y, _ := dst.Tensor(name)
		if !x.Type().Equal(y.Type()) || slices.Equal(x.Bytes(), y.Bytes()) {
			t.Errorf("%s: %s, the source's %s; or the same values", name, y.Type(), x.Type())
		}
	}
	for _, f := range []string{"config.json", "generation_config.json"} {
		x, _ := os.ReadFile(filepath.Join(dir, f))
		y, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || string(x) != string(y) {
			t.Errorf("%s not copied: %v", f, err)
		}
	}
	g := tpucc(t, "", "generate", "--model", out, "--prompt-ids", "1,2,3", "--max-new-tokens", "2", "--ignore-eos", "--backend", "reference")
	if g.code != 0 || len(strings.Fields(firstLine(g.stdout))) != 2 {
		t.Errorf("generate on the trained model: exit %d\n%s%s", g.code, g.stdout, g.stderr)
	}
}

// TestTrainSchedule: with --lr-schedule cosine --warmup 1 the first step's rate
// is 0 (transformers' warm-up starts from 0), so the second step's loss is the
// first's exactly, and the second step then trains at the full rate, as the
// constant schedule's first step does: the same loss after it.
func TestTrainSchedule(t *testing.T) {
	dir := tinyQwen3(t)
	tmp := t.TempDir()
	tokens := trainTokens(t, tmp, 1, 6)
	run := func(name string, flags ...string) []float32 {
		out := filepath.Join(tmp, name)
		args := append([]string{"train", "--model", dir, "--tokens", tokens, "--batch", "1", "--optimizer", "sgd",
			"--lr", "0.5", "--backend", "reference", "--output-dir", out}, flags...)
		if r := tpucc(t, "", args...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", flags, r.code, r.stderr)
		}
		l, err := tensor.ReadNPY(filepath.Join(out, "losses.npy"))
		if err != nil {
			t.Fatal(err)
		}
		return l.Float32s()
	}
	cos := run("cosine", "--steps", "3", "--lr-schedule", "cosine", "--warmup", "1", "--total-steps", "3")
	constant := run("constant", "--steps", "2")
	if cos[1] != cos[0] || cos[0] != constant[0] {
		t.Errorf("cosine losses %v: the first step moved the weights (constant's %v)", cos, constant)
	}
	if cos[2] != constant[1] {
		t.Errorf("cosine's second step gives loss %v, constant's first %v: not the full rate", cos[2], constant[1])
	}
}

// TestTrainReport: --report compiles one step for a chip of v6e:2x2 through
// libtpu and prints the report (internal/tpucompile's TestTrainStepForTPU
// checks its lines); it needs neither --steps nor --output-dir and writes
// nothing.
func TestTrainReport(t *testing.T) {
	dir := tinyQwen3(t)
	tmp := t.TempDir()
	tokens := trainTokens(t, tmp, 2, 6)
	r := tpucc(t, "", "train", "--model", dir, "--tokens", tokens, "--batch", "2", "--optimizer", "sgd", "--momentum", "0.9", "--lr", "0.1", "--report")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	if len(lines) != 10 || lines[0] != "training step: sgd, batch 2 × 6 tokens, f32, on one chip of v6e:2x2 (tpu-v6e)" ||
		!strings.HasPrefix(lines[2], "optimizer state                   26048 bytes ") || !strings.HasPrefix(lines[4], "saved by layer loops              31496 bytes ") ||
		!strings.HasPrefix(lines[8], "the step fits one tpu-v6e chip: ") {
		t.Errorf("the report:\n%s", r.stdout)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Errorf("--report wrote %d files beside the tokens", len(entries)-1)
	}
}

// TestTrainReportMesh: --report with --mesh and --fsdp compiles the step
// split as training on that mesh splits it, for the four chips of v6e:2x2
// (the target's first topology of as many chips as the mesh has devices),
// and gives one chip's figures (internal/tpucompile's
// TestTrainStepSplitForTPU derives them); a mesh no topology matches, or
// one that is not the --topology's chip count, is an error saying so.
func TestTrainReportMesh(t *testing.T) {
	dir := tinyQwen3(t)
	tmp := t.TempDir()
	tokens := trainTokens(t, tmp, 2, 6)
	args := []string{"train", "--model", dir, "--tokens", tokens, "--batch", "2", "--optimizer", "sgd", "--momentum", "0.9", "--lr", "0.1", "--report"}
	r := tpucc(t, "", append(args, "--mesh", "dp=2,tp=2", "--fsdp")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	want := []string{
		"training step: sgd, batch 2 × 6 tokens, f32, split over mesh dp=2,tp=2 with FSDP on the 4 chips of v6e:2x2 (tpu-v6e); per chip:",
		"parameters                         6624 bytes    6.47 KiB  trained, f32, donated: updated in place",
		"optimizer state                    6624 bytes    6.47 KiB  momentum_buffer per parameter, donated",
		"gradients                          6624 bytes    6.47 KiB  one per trained parameter, f32, split like it: computed within the step",
	}
	if len(lines) != 10 || !reflect.DeepEqual(lines[:4], want) || lines[6] != "batch                                24 bytes  0.0234 KiB  the tokens, i32, their rows split over dp" ||
		!strings.HasPrefix(lines[7], "compiled per chip: arguments ") || !strings.HasPrefix(lines[8], "the step fits each tpu-v6e chip: ") {
		t.Errorf("the report:\n%s", r.stdout)
	}
	tpucc(t, "", append(args, "--mesh", "tp=2")...).want(t, 1, "",
		"tpucc train: --mesh tp=2 has 2 devices: no tpu-v6e topology has as many chips (v6e:2x2 v6e:2x4 v6e:4x4 v6e:4x8 v6e:8x8 v6e:8x16 v6e:16x16)")
	tpucc(t, "", append(args, "--mesh", "dp=2,tp=2", "--topology", "v6e:2x4")...).want(t, 1, "",
		"tpucc train: --mesh dp=2,tp=2 has 4 devices and --topology v6e:2x4 has 8 chips: they must be equal")
}

// TestTrainLabels: --labels equal to the tokens gives the same losses as
// none; -100 leaves tokens out (other losses); an SGD run with momentum
// takes its flags; --unroll-layers and --remat-layers give the loops' losses.
func TestTrainLabels(t *testing.T) {
	dir := tinyQwen3(t)
	tmp := t.TempDir()
	tokens := trainTokens(t, tmp, 2, 5)
	tok, _ := tensor.ReadNPY(tokens)
	same := filepath.Join(tmp, "same.npy")
	tensor.WriteNPY(same, tok)
	ids := slices.Clone(tok.Int32s())
	ids[2], ids[8] = -100, -100
	masked := filepath.Join(tmp, "masked.npy")
	tensor.WriteNPY(masked, tensor.FromSlice(ids, 2, 5))
	run := func(extra ...string) []float32 {
		out := filepath.Join(t.TempDir(), "o")
		args := append([]string{"train", "--model", dir, "--tokens", tokens, "--steps", "2", "--batch", "1", "--optimizer", "sgd",
			"--lr", "0.1", "--momentum", "0.9", "--backend", "reference", "--output-dir", out}, extra...)
		r := tpucc(t, "", args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", extra, r.code, r.stderr)
		}
		l, err := tensor.ReadNPY(filepath.Join(out, "losses.npy"))
		if err != nil {
			t.Fatal(err)
		}
		return l.Float32s()
	}
	plain, withSame, withMasked := run(), run("--labels", same), run("--labels", masked)
	if !slices.Equal(plain, withSame) {
		t.Errorf("labels = tokens: losses %v, without labels %v", withSame, plain)
	}
	if withMasked[0] == plain[0] || withMasked[1] == plain[1] {
		t.Errorf("-100 labels change nothing: %v, %v", withMasked, plain)
	}
	// The layers unrolled train the same weights: the second step's loss
	// sees the first step's update (the sums' order differs, hence 1e-5).
	for _, flag := range []string{"--unroll-layers", "--remat-layers"} {
		other := run(flag)
		for i := range plain {
			if d := math.Abs(float64(other[i] - plain[i])); d > 1e-5*math.Abs(float64(plain[i])) {
				t.Errorf("%s: loss %d is %v, with loops %v", flag, i, other[i], plain[i])
			}
		}
	}
}

// TestTrainDevice: --device pjrt trains on XLA:CPU through PJRT (the
// parameters and state aliased to their new values), and the default
// backend (llvm) on this CPU, with the reference executor's losses and
// weights.
func TestTrainDevice(t *testing.T) {
	plugin, err := pjrt.CPUPluginDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TPUCC_PJRT_CACHE", filepath.Dir(plugin))
	dir := tinyQwen3(t)
	tmp := t.TempDir()
	tokens := trainTokens(t, tmp, 3, 6)
	run := func(where ...string) ([]float32, []float32) { return trainQ(t, dir, tokens, where...) }
	wl, ww := run("--backend", "reference")
	for _, where := range [][]string{{"--device", "pjrt", "--precision", "highest"}, {}} {
		gl, gw := run(where...)
		for i := range wl {
			if math.Abs(float64(gl[i]-wl[i])) > 1e-5 {
				t.Errorf("%v: step %d: loss %g, %g on the reference executor", where, i, gl[i], wl[i])
			}
		}
		for i := range ww {
			if math.Abs(float64(gw[i]-ww[i])) > 1e-4 {
				t.Fatalf("%v: q_proj[%d]: %g, %g on the reference executor", where, i, gw[i], ww[i])
			}
		}
	}
}

// trainQ runs three AdamW steps of batches of 2 rows of the model dir on
// tokens, with the flags where, and returns the losses and the trained
// q projection of layer 1.
func trainQ(t *testing.T, dir, tokens string, where ...string) ([]float32, []float32) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "o")
	r := tpucc(t, "", append([]string{"train", "--model", dir, "--tokens", tokens, "--steps", "3", "--batch", "2",
		"--optimizer", "adamw", "--lr", "0.05", "--clip-norm", "1", "--output-dir", out}, where...)...)
	if r.code != 0 {
		t.Fatalf("%v: exit %d\n%s", where, r.code, r.stderr)
	}
	l, err := tensor.ReadNPY(filepath.Join(out, "losses.npy"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.OpenFile(filepath.Join(out, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := f.Tensor("model.layers.1.self_attn.q_proj.weight")
	if err != nil {
		t.Fatal(err)
	}
	return l.Float32s(), slices.Clone(tensor.FromBuffer(w).Float32s())
}

// TestTrainMesh: --mesh tp=4, dp=2,tp=2 and dp=2,tp=2 --fsdp on 4 XLA:CPU
// devices made for it give the losses of the reference executor's run
// within 1e-5 relative and its q projection within 1e-5 of the largest
// element; --mesh and --fsdp without what they need are usage errors.
func TestTrainMesh(t *testing.T) {
	plugin, err := pjrt.CPUPluginDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TPUCC_PJRT_CACHE", filepath.Dir(plugin))
	dir := tinyQwen3(t)
	tokens := trainTokens(t, t.TempDir(), 3, 6)
	wl, ww := trainQ(t, dir, tokens, "--backend", "reference")
	scale := 0.0
	for _, w := range ww {
		scale = math.Max(scale, math.Abs(float64(w)))
	}
	for _, mesh := range [][]string{{"--mesh", "tp=4"}, {"--mesh", "dp=2,tp=2"}, {"--mesh", "dp=2,tp=2", "--fsdp"}} {
		gl, gw := trainQ(t, dir, tokens, append([]string{"--device", "pjrt", "--precision", "highest"}, mesh...)...)
		for i := range wl {
			if math.Abs(float64(gl[i]-wl[i])) > 1e-5*math.Abs(float64(wl[i])) {
				t.Errorf("%v: step %d: loss %g, %g on the reference executor", mesh, i, gl[i], wl[i])
			}
		}
		for i := range ww {
			if math.Abs(float64(gw[i]-ww[i])) > 1e-5*scale {
				t.Fatalf("%v: q_proj[%d]: %g, %g on the reference executor", mesh, i, gw[i], ww[i])
			}
		}
	}
	usage := "usage: tpucc train [flags]; 'tpucc help train' lists the flags\n"
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--mesh", "tp=4"}, "--mesh tp=4 splits a model over a device's chips: give --device pjrt, tpu or gpu"},
		{[]string{"--fsdp"}, "--fsdp splits the weights over --mesh's dp axis: give --mesh with dp, as dp=2,tp=2"},
		{[]string{"--fsdp", "--device", "pjrt", "--mesh", "tp=4"}, "--fsdp splits the weights over --mesh's dp axis: give --mesh with dp, as dp=2,tp=2"},
	} {
		r := tpucc(t, "", append([]string{"train", "--model", dir, "--tokens", tokens, "--steps", "1", "--batch", "2",
			"--optimizer", "sgd", "--lr", "0.1", "--output-dir", filepath.Join(t.TempDir(), "o")}, c.args...)...)
		if want := "tpucc train: " + c.msg + "\n" + usage; r.code != 2 || r.stderr != want || r.stdout != "" {
			t.Errorf("%v: exit %d\n%s\nwant 2\n%s", c.args, r.code, r.stderr, want)
		}
	}
}

// TestTrainErrors: bad flags and files fail with exit 1 and the message,
// and leave no output directory.
func TestTrainErrors(t *testing.T) {
	dir := tinyQwen3(t)
	tmp := t.TempDir()
	tokens := trainTokens(t, tmp, 2, 4)
	bad := filepath.Join(tmp, "bad.npy")
	tensor.WriteNPY(bad, tensor.FromSlice([]int32{1, 2, 40, 3}, 1, 4))
	floats := filepath.Join(tmp, "f.npy")
	tensor.WriteNPY(floats, tensor.FromSlice([]float32{1, 2}, 1, 2))
	short := filepath.Join(tmp, "short.npy")
	tensor.WriteNPY(short, tensor.FromSlice([]int32{1, 2, 3}, 3, 1))
	labels := filepath.Join(tmp, "labels.npy")
	tensor.WriteNPY(labels, tensor.FromSlice([]int32{1, -100, -5, 3, 1, 1, 1, 1}, 2, 4))
	out := filepath.Join(tmp, "out")
	base := []string{"--model", dir, "--tokens", tokens, "--steps", "1", "--batch", "1", "--optimizer", "adamw", "--lr", "0.01", "--output-dir", out}
	with := func(flag, value string) []string {
		args := slices.Clone(base)
		if i := slices.Index(args, flag); i >= 0 {
			if value == "" {
				return slices.Delete(args, i, i+2)
			}
			args[i+1] = value
			return args
		}
		return append(args, flag, value)
	}
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{with("--model", ""), "tpucc train: --model is required\n"},
		{with("--output-dir", ""), "tpucc train: --output-dir is required\n"},
		{with("--steps", "0"), "tpucc train: --steps 0: want a positive integer\n"},
		{with("--batch", "x"), "tpucc train: --batch x: want a positive integer\n"},
		{with("--optimizer", "adam"), "tpucc train: --optimizer adam: want sgd or adamw\n"},
		{with("--lr", "-1"), "tpucc train: --lr -1: want a non-negative number\n"},
		{with("--betas", "0.9"), "tpucc train: --betas 0.9: want two numbers in [0, 1), as 0.9,0.999\n"},
		{with("--betas", "0.9,1"), "tpucc train: --betas 0.9,1: want two numbers in [0, 1), as 0.9,0.999\n"},
		{with("--momentum", "0.9"), "tpucc train: --momentum is SGD's; --optimizer is adamw\n"},
		{with("--eps", "nan"), "tpucc train: --eps nan: want a non-negative number\n"},
		{with("--lr-schedule", "linear"), "tpucc train: --lr-schedule linear: want constant or cosine\n"},
		{with("--warmup", "2"), "tpucc train: --warmup is the cosine schedule's; --lr-schedule is constant\n"},
		{append(with("--lr-schedule", "cosine"), "--warmup", "-1"), "tpucc train: --warmup -1: want an integer of at least 0\n"},
		{append(with("--lr-schedule", "cosine"), "--total-steps", "0"), "tpucc train: --total-steps 0: want an integer of at least 1\n"},
		{append(with("--lr-schedule", "cosine"), "--warmup", "3", "--total-steps", "2"), "tpucc train: --warmup 3 is past --total-steps 2\n"},
		{append(with("--lr-schedule", "cosine"), "--warmup", "2"), "tpucc train: --warmup 2 is past --total-steps 1\n"},
		{with("--target", "tpu-v6e"), "tpucc train: --target is --report's\n"},
		{append(with("--steps", ""), "--report", "--target", "cpu"), "tpucc train: --target cpu: --report compiles for a TPU: want one of " + strings.Join(tpuTargets(), ", ") + "\n"},
		{append(with("--steps", ""), "--report", "--topology", "v6e:3x3"), "error: tpucc train: --topology "},
		{append(with("--steps", ""), "--report", "--device", "xla-cpu"), "tpucc train: --device does not apply to --report\n"},
		{append(with("--steps", ""), "--report", "--unroll-layers"), "tpucc train: --unroll-layers does not apply to --report\n"},
		{append(with("--steps", ""), "--report", "--remat-layers"), "tpucc train: --remat-layers does not apply to --report\n"},
		{with("--tokens", bad), bad + ": row 0, column 2: token id 40 is outside the vocabulary of 32\n"},
		{with("--tokens", floats), floats + ": the array is f32[1,2]; want i32[rows, L] with at least one row of at least 2 tokens\n"},
		{with("--tokens", short), short + ": the array is i32[3,1]; want i32[rows, L] with at least one row of at least 2 tokens\n"},
		{with("--labels", labels), labels + ": row 0, column 2: label -5 is outside the vocabulary of 32\n"},
		{with("--tokens", filepath.Join(tmp, "none.npy")), "error: " + filepath.Join(tmp, "none.npy")},
	} {
		r := tpucc(t, "", append([]string{"train"}, c.args...)...)
		stderr := r.stderr
		if i := strings.LastIndex(stderr, "tpucc: loaded "); i >= 0 {
			stderr = stderr[strings.IndexByte(stderr[i:], '\n')+i+1:]
		}
		stderr = strings.TrimPrefix(stderr, "tpucc: loading "+dir+"\n")
		ok := stderr == c.stderr
		if strings.HasPrefix(c.stderr, "error: ") {
			ok = strings.Contains(stderr, strings.TrimPrefix(c.stderr, "error: "))
		}
		if r.code != 1 || !ok || r.stdout != "" {
			t.Errorf("%v: exit %d\n%s\nwant 1\n%s", c.args, r.code, stderr, c.stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: the output directory was made", c.args)
		}
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 5 {
		t.Errorf("temporary files left beside the output: %v", entries)
	}
}

// TestTrainDropoutWarning: a config whose attention_dropout is not 0 (Granite
// 3.1's 0.1) trains, without dropout, and a warning line says so.
func TestTrainDropoutWarning(t *testing.T) {
	dir := tinyQwen3(t)
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "config.json", []byte(strings.Replace(string(cfg), `"model_type"`, `"attention_dropout": 0.1, "model_type"`, 1)))
	tmp := t.TempDir()
	r := tpucc(t, "", "train", "--model", dir, "--tokens", trainTokens(t, tmp, 2, 4), "--steps", "1", "--batch", "1",
		"--optimizer", "sgd", "--lr", "0.1", "--backend", "reference", "--output-dir", filepath.Join(tmp, "out"))
	want := "tpucc: warning: config.json's attention_dropout 0.1: transformers' training drops or perturbs at random there; " +
		"tpucc trains without it, as transformers with it set to 0\n"
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr\n%s\nwant the line\n%s", r.code, r.stderr, want)
	}
}
