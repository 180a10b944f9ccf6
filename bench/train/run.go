package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tpucc/tpucc/backend"
	stepreport "github.com/tpucc/tpucc/bench/internal/steps"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/train"
)

type benchModel struct {
	name   string
	config map[string]any // config.json
}

// benchModels are the two models at full size or, with quick, small.
func benchModels(quick bool) []benchModel {
	dense := map[string]any{"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 1024, "intermediate_size": 3072,
		"num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
		"tie_word_embeddings": true, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 40960}
	moe := map[string]any{"model_type": "qwen3_moe", "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
		"num_hidden_layers": 2, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
		"num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768, "norm_topk_prob": true,
		"decoder_sparse_step": 1, "mlp_only_layers": []int{}, "tie_word_embeddings": false, "rope_theta": 1000000.0,
		"rms_norm_eps": 1e-6, "max_position_embeddings": 40960}
	if quick {
		dense["vocab_size"], dense["hidden_size"], dense["intermediate_size"] = 2048, 128, 384
		dense["num_hidden_layers"], dense["num_attention_heads"], dense["num_key_value_heads"], dense["head_dim"] = 2, 4, 2, 32
		moe["vocab_size"], moe["hidden_size"], moe["num_experts"], moe["num_experts_per_tok"] = 2048, 128, 8, 2
		moe["moe_intermediate_size"], moe["num_attention_heads"], moe["num_key_value_heads"], moe["head_dim"] = 96, 4, 2, 32
	}
	if *layers > 0 {
		dense["num_hidden_layers"] = *layers
	}
	if *vocab > 0 {
		dense["vocab_size"] = *vocab
	}
	return []benchModel{{"dense", dense}, {"moe", moe}}
}

// runModel runs m's peer, then tpucc's side, each in its own process, when the
// host has the memory for it.
func runModel(m benchModel) result {
	r := result{name: m.name}
	c, err := parseConfig(m)
	check(err)
	abstract, err := models.Abstract(c, ir.F32)
	check(err)
	need := trainBytes(abstract)
	if avail := memAvailable(); avail < need {
		r.note = fmt.Sprintf("not run: training needs about %.1f GiB (f32 weights, gradients, AdamW's two states, logits), MemAvailable is %.1f GiB",
			gib(need), gib(avail))
		return r
	}
	dir, err := os.MkdirTemp("", "bench-train-")
	check(err)
	defer os.RemoveAll(dir)
	cfg, _ := json.Marshal(m.config)
	check(os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644))
	if !*skipPeer {
		runPeer(m, dir, &r)
	}
	r.tpucc = runChild(m)
	if *unroll {
		r.note = "tpucc's layers unrolled (-unroll)"
	}
	if *remat {
		r.note = "tpucc's layer loops recompute the forward (-remat)"
	}
	return r
}

func parseConfig(m benchModel) (*hf.Config, error) {
	raw, _ := json.Marshal(m.config)
	return hf.ParseConfig(raw)
}

// trainBytes estimates a training step's memory: the f32 weights four times
// (themselves, their gradients, AdamW's two states) and the logits [B, L, V]
// four times (them, their log-softmax, its gradient and the logits').
func trainBytes(m *models.Model) int64 {
	var n int64
	for _, p := range m.Params {
		e, _ := p.Type.NumElements()
		n += e
	}
	return 16*n + 16*int64(batch*tokens*m.Config.Vocab)
}

// memAvailable is /proc/meminfo's MemAvailable in bytes (0 when unknown).
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func gib(n int64) float64 { return float64(n) / (1 << 30) }

// runPeer runs peer.py with .venv-hf's interpreter and reads its JSON lines.
func runPeer(m benchModel, dir string, r *result) {
	work, _ := json.Marshal(map[string]any{"name": m.name, "batch": batch, "tokens": tokens, "repeat": *repeat, "lr": lr})
	check(os.WriteFile(filepath.Join(dir, "work.json"), work, 0o644))
	py := filepath.Join(repoRoot(), ".venv-hf", "bin", "python")
	cmd := exec.Command(py, filepath.Join(repoRoot(), "bench", "train", "peer.py"), filepath.Join(dir, "config.json"), filepath.Join(dir, "work.json"))
	cmd.Env = append(os.Environ(), "TPUCC_BENCH_THREADS="+strconv.Itoa(*threads), "OMP_NUM_THREADS="+strconv.Itoa(*threads))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench/train: %s: the peer failed (%v)\n", m.name, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var p struct {
			Mode, Error    string
			Seconds        float64
			CompileSeconds float64 `json:"compile_seconds"`
		}
		if json.Unmarshal(sc.Bytes(), &p) != nil {
			continue
		}
		switch {
		case p.Error != "":
			r.compileErr = p.Mode + ": " + p.Error
		case p.Mode == "eager":
			r.eager = p.Seconds
		default:
			r.compiled, r.compile1 = p.Seconds, p.CompileSeconds
		}
	}
}

// runChild runs tpucc's side of m as a child of this command.
func runChild(m benchModel) sideTimes {
	args := []string{"-side", m.name, "-repeat", strconv.Itoa(*repeat), "-threads", strconv.Itoa(*threads), "-backend", *backendName, "-steps", strconv.Itoa(*steps),
		"-layers", strconv.Itoa(*layers), "-vocab", strconv.Itoa(*vocab), "-unroll=" + strconv.FormatBool(*unroll), "-remat=" + strconv.FormatBool(*remat)}
	if *quick {
		args = append(args, "-quick")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var t sideTimes
	if err != nil {
		t.Error = fmt.Sprintf("tpucc's side failed: %v", err)
		return t
	}
	if json.Unmarshal(bytes.TrimSpace(out), &t) != nil {
		t.Error = "tpucc's side printed no result"
	}
	return t
}

// runSide is tpucc's side of one model: random weights, the step compiled
// (timed), then -repeat timed steps after a warm-up step.
func runSide(name string) {
	runtime.GOMAXPROCS(*threads)
	var m benchModel
	for _, b := range benchModels(*quick) {
		if b.name == name {
			m = b
		}
	}
	c, err := parseConfig(m)
	check(err)
	model, err := randomModel(c)
	check(err)
	cache := engine.NewCache("", engine.CacheOptions{})
	tr, err := models.NewTrainer(model, train.NewAdamW(lr), models.TrainOptions{Backend: *backendName, Cache: cache, UnrollLayers: *unroll, RematLayers: *remat})
	check(err)
	t0 := time.Now()
	check(tr.Prepare(batch, tokens))
	var out sideTimes
	out.Compile = time.Since(t0).Seconds()
	fmt.Fprintf(os.Stderr, "bench/train: %s: tpucc compiled the step in %.1f s\n", name, out.Compile)
	ids := backend.New(ir.Tensor(ir.I32, batch, tokens))
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range batch * tokens {
		ids.SetInt64(i, int64(rng.IntN(c.Vocab)))
	}
	var times []float64
	var before stepreport.Profile
	for i := range *repeat + 1 {
		if i == *repeat {
			before = stepreport.Take(cache)
		}
		t1, f1 := time.Now(), minorFaults()
		loss, err := tr.Step(ids, nil)
		check(err)
		if i > 0 {
			times = append(times, time.Since(t1).Seconds())
		}
		fmt.Fprintf(os.Stderr, "bench/train: %s: tpucc step %d: loss %.4f, %.2f s, %d minor page faults\n", name, i, loss, time.Since(t1).Seconds(), minorFaults()-f1)
	}
	slices.Sort(times)
	out.Step = times[len(times)/2]
	if *steps > 0 {
		last := stepreport.Take(cache).Since(before)
		fmt.Fprintf(os.Stderr, "bench/train: %s: where tpucc's last step (step %d) went:\n", name, *repeat)
		last.Print(os.Stderr, "bench/train: ", *steps)
		last.PrintKinds(os.Stderr, "bench/train: ", *steps)
	}
	printJSON(out)
}

// randomModel is c's abstract model with f32 weights drawn uniformly: norm
// scales around 1, matrices of standard deviation 0.02 (transformers' init).
func randomModel(c *hf.Config) (*models.Model, error) {
	m, err := models.Abstract(c, ir.F32)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range m.Params {
		p := &m.Params[i]
		b := backend.New(p.Type)
		raw := b.Bytes()
		base, width := 0.0, 0.02*math.Sqrt(3)
		if len(p.Type.Dims()) == 1 {
			base, width = 1, 0.1
		}
		for j := 0; j+4 <= len(raw); j += 4 {
			binary.LittleEndian.PutUint32(raw[j:], math.Float32bits(float32(base+width*(2*rng.Float64()-1))))
		}
		p.Buffer = b
	}
	return m, nil
}

// repoRoot is the module root (where go.mod is), found from the working directory.
func repoRoot() string {
	d, err := os.Getwd()
	check(err)
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			check(fmt.Errorf("no go.mod above the working directory"))
		}
		d = up
	}
}

// minorFaults is the process's minor page faults so far: a step that keeps
// its memory from one call to the next takes none.
func minorFaults() int64 {
	var u syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &u))
	return u.Minflt
}
