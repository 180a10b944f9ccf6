package main

import (
	"bufio"
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
	"time"

	"github.com/tpucc/tpucc/backend"
	stepreport "github.com/tpucc/tpucc/bench/internal/steps"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models"
	"github.com/tpucc/tpucc/models/hf"
)

// workload is one timed thing: a prefill of tokens tokens per row, or decode
// steps after a prompt of tokens tokens per row.
type workload struct {
	name   string
	kind   string // "prefill" or "decode"
	batch  int
	tokens int
	steps  int // decode steps timed per run
}

type benchModel struct {
	name      string
	config    map[string]any // config.json
	workloads []workload
}

// benchModels are the two models at full size or, with quick, small.
func benchModels(quick bool) []benchModel {
	dense := map[string]any{"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 1024, "intermediate_size": 3072,
		"num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
		"tie_word_embeddings": true, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 40960}
	moe := map[string]any{"model_type": "qwen3_moe", "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
		"num_hidden_layers": 2, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
		"num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768, "norm_topk_prob": true,
		"decoder_sparse_step": 1, "mlp_only_layers": []int{}, "tie_word_embeddings": false, "rope_theta": 1000000.0,
		"rms_norm_eps": 1e-6, "max_position_embeddings": 40960}
	prefill, prompt, steps := 512, 64, 8
	if quick {
		dense["vocab_size"], dense["hidden_size"], dense["intermediate_size"] = 8192, 256, 768
		dense["num_hidden_layers"], dense["num_attention_heads"], dense["num_key_value_heads"], dense["head_dim"] = 4, 4, 2, 64
		moe["vocab_size"], moe["hidden_size"], moe["num_experts"], moe["num_experts_per_tok"] = 8192, 512, 32, 4
		moe["moe_intermediate_size"], moe["num_attention_heads"], moe["num_key_value_heads"], moe["head_dim"] = 192, 8, 2, 64
		prefill, prompt, steps = 64, 16, 4
	}
	if *promptLen > 0 {
		prompt = *promptLen
	}
	if *layers > 0 {
		dense["num_hidden_layers"] = *layers
	}
	var out []benchModel
	for _, m := range []struct {
		name string
		cfg  map[string]any
	}{{"dense", dense}, {"moe", moe}} {
		out = append(out, benchModel{name: m.name, config: m.cfg, workloads: []workload{
			{m.name + "_prefill", "prefill", 1, prefill, 0},
			{m.name + "_decode_b1", "decode", 1, prompt, steps},
			{m.name + "_decode_b64", "decode", 64, prompt, steps},
		}})
	}
	return out
}

// peerTimes are the peer's seconds for one workload (0: not run or failed).
type peerTimes struct {
	eager, compiled float64
	// static is torch.compile's decode with a StaticCache (peer.py), 0 for prefill.
	static     float64
	compileErr string
}

// best is the faster torch.compile time (dynamic or static cache), 0 when
// neither ran.
func (p peerTimes) best() float64 {
	if p.static > 0 && (p.compiled == 0 || p.static < p.compiled) {
		return p.static
	}
	return p.compiled
}

// peerRecord is one line of peer.py's output.
type peerRecord struct {
	Mode, Name, Error string
	Seconds           float64
}

// add records r; it reports whether r closes its workload (peer.py's "done").
func (p *peerTimes) add(r peerRecord) bool {
	switch {
	case r.Mode == "done":
		return true
	case r.Mode == "eager":
		p.eager = r.Seconds
	case r.Error != "":
		p.compileErr = r.Mode + ": " + r.Error
	case r.Mode == "torch.compile static":
		p.static = r.Seconds
	default:
		p.compiled = r.Seconds
	}
	return false
}

// runPeer runs peer.py over m's workloads with .venv-hf's interpreter, in -dtype,
// and hands each workload's times to done as soon as the peer has measured it.
func runPeer(m benchModel, ws []workload, done func(name string, p peerTimes)) {
	dir, err := os.MkdirTemp("", "bench-models-")
	check(err)
	defer os.RemoveAll(dir)
	cfg, _ := json.Marshal(m.config)
	check(os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644))
	var list []map[string]any
	for _, w := range ws {
		list = append(list, map[string]any{"name": w.name, "kind": w.kind, "batch": w.batch, "tokens": w.tokens, "steps": w.steps, "repeat": *repeat})
	}
	wl, _ := json.Marshal(list)
	check(os.WriteFile(filepath.Join(dir, "workloads.json"), wl, 0o644))
	py := filepath.Join(repoRoot(), ".venv-hf", "bin", "python")
	cmd := exec.Command(py, filepath.Join(repoRoot(), "bench", "models", "peer.py"), filepath.Join(dir, "config.json"), filepath.Join(dir, "workloads.json"))
	cmd.Env = append(os.Environ(), "TPUCC_BENCH_THREADS="+strconv.Itoa(*threads), "OMP_NUM_THREADS="+strconv.Itoa(*threads),
		"TPUCC_BENCH_DTYPE="+*dtype)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	check(err)
	t0 := time.Now()
	check(cmd.Start())
	out := map[string]peerTimes{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var r peerRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		p := out[r.Name]
		if p.add(r) {
			done(r.Name, p)
		}
		out[r.Name] = p
	}
	if err := cmd.Wait(); err != nil {
		fmt.Fprintf(os.Stderr, "bench/models: the torch peer failed (%v); its rows are empty\n", err)
	}
	// A workload the peer did not close (it died in it) gets what was measured.
	for _, w := range ws {
		if p, ok := out[w.name]; ok {
			done(w.name, p)
		}
	}
	fmt.Fprintf(os.Stderr, "bench/models: %s: the torch peer took %.0f s (including torch.compile's compiles)\n", m.name, time.Since(t0).Seconds())
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

// tpuccSide is what runTpucc built for m, kept so that a workload can be timed
// again beside a peer (the llama.cpp turns); nil once dropped.
type tpuccSide struct {
	gen  *models.Generator
	ws   map[string]workload
	reqs map[string]models.Request
}

// once times one more run of workload name with the default precision.
func (s *tpuccSide) once(name string) (float64, error) {
	return timeRun(s.gen, s.reqs[name], s.ws[name])
}

// timeRun runs req once: a prefill's seconds, or a decode step's (its
// steps' time over their count; the prefill before them is not counted).
func timeRun(g *models.Generator, req models.Request, w workload) (float64, error) {
	res, err := g.Generate(req)
	if err != nil {
		return 0, err
	}
	if w.kind == "decode" {
		return res.DecodeTime.Seconds() / float64(w.steps), nil
	}
	return res.PrefillTime.Seconds(), nil
}

// runTpucc times m's workloads on tpucc: the median of -repeat runs after a
// warm-up (which compiles; the compile times are printed apart). With
// -precision default,highest each run is one of each precision in turn,
// their order swapped from run to run.
func runTpucc(m benchModel, ws []workload) (map[string]float64, *tpuccSide) {
	runtime.GOMAXPROCS(*threads)
	raw, _ := json.Marshal(m.config)
	c, err := hf.ParseConfig(raw)
	check(err)
	t0 := time.Now()
	model, err := randomModel(c)
	check(err)
	fmt.Fprintf(os.Stderr, "bench/models: %s: random weights in %.1f s\n", m.name, time.Since(t0).Seconds())
	cache := engine.NewCache("", engine.CacheOptions{})
	precs := strings.Split(*precision, ",")
	gens := make([]*models.Generator, len(precs))
	var timed *models.Model // the model of the precision whose times are kept (the first)
	for i, p := range precs {
		mp := *model // the same weights
		mp.F32Products = p == "highest"
		gens[i], err = models.NewGenerator(&mp, models.Options{Backend: *backendName, Cache: cache})
		check(err)
		if i == 0 {
			timed = &mp
		}
	}
	out := map[string]float64{}
	side := &tpuccSide{gen: gens[0], ws: map[string]workload{}, reqs: map[string]models.Request{}}
	for _, w := range ws {
		req := request(w, c.Vocab)
		side.ws[w.name], side.reqs[w.name] = w, req
		for i, g := range gens {
			t1 := time.Now()
			pre0, dec0 := g.Stats()
			check(g.Prepare(req))
			pre1, dec1 := g.Stats()
			fmt.Fprintf(os.Stderr, "bench/models: %s: %scompiled in %.1f s (prefill %s; decode %s)\n", w.name, precLabel(precs, i), time.Since(t1).Seconds(),
				stages(pre0.Time, pre1.Time), stages(dec0.Time, dec1.Time))
		}
		out[w.name] = timeWorkload(gens, precs, req, w)
		recordBound(timed, w, req, out[w.name])
		printSteps(cache)
	}
	return out, side
}

// timeWorkload is runTpucc's timing of one workload: -repeat runs of each
// precision after a warm-up, ABBA, each precision's median printed (and
// their ratio, run by run); the result is the default precision's median.
func timeWorkload(gens []*models.Generator, precs []string, req models.Request, w workload) float64 {
	times := make([][]float64, len(gens))
	for r := range *repeat + 1 {
		for j := range gens {
			i := j
			if r%2 == 1 { // ABBA: neither precision always runs first
				i = len(gens) - 1 - j
			}
			s, err := timeRun(gens[i], req, w)
			check(err)
			if r > 0 {
				times[i] = append(times[i], s)
			}
		}
	}
	var ratios []float64 // default over highest, run by run
	if len(times) == 2 {
		for r := range times[0] {
			ratios = append(ratios, times[0][r]/times[1][r])
		}
		slices.Sort(ratios)
	}
	for i := range times {
		fmt.Fprintf(os.Stderr, "bench/models: %s: tpucc %s%s\n", w.name, precLabel(precs, i), fmtTime(median(times[i])))
	}
	if len(ratios) > 0 {
		fmt.Fprintf(os.Stderr, "bench/models: %s: precision default/highest=%.3f (the median of %d alternated pairs, from %.3f to %.3f)\n",
			w.name, ratios[len(ratios)/2], len(ratios), ratios[0], ratios[len(ratios)-1])
	}
	return median(times[0])
}

// precLabel names precision i in a line when more than one is run.
func precLabel(precs []string, i int) string {
	if len(precs) == 1 {
		return ""
	}
	return "precision " + precs[i] + ": "
}

// printSteps prints each llvm program's -steps longest steps (bench/internal/steps).
func printSteps(c *engine.Cache) {
	stepreport.Print(os.Stderr, "bench/models: ", c, *steps)
}

// stages is the compile time spent between a and b, by stage.
func stages(a, b engine.StageTimes) string {
	d := func(x, y time.Duration) string { return fmt.Sprintf("%.1f s", (y - x).Seconds()) }
	return "trace " + d(a.Trace, b.Trace) + ", passes " + d(a.Passes, b.Passes) + ", lower " + d(a.Lower, b.Lower) + ", backend " + d(a.Backend, b.Backend)
}

// request is w as a generation: decode's steps follow the prefill, which is
// not counted in a decode workload's time.
func request(w workload, vocab int) models.Request {
	rng := rand.New(rand.NewPCG(7, uint64(w.batch)))
	prompts := make([][]int32, w.batch)
	for b := range prompts {
		for range w.tokens {
			prompts[b] = append(prompts[b], int32(rng.IntN(vocab)))
		}
	}
	return models.Request{Prompts: prompts, MaxNew: w.steps + 1}
}

// randomModel is c's abstract model with weights of -dtype drawn
// uniformly: norm scales around 1, matrices of standard deviation 0.02
// (transformers' init).
func randomModel(c *hf.Config) (*models.Model, error) {
	dt := benchDTypes[*dtype]
	m, err := models.Abstract(c, dt)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range m.Params {
		p := &m.Params[i]
		b := backend.NewLongLived(p.Type) // as a checkpoint's stacked weights are (backend.Stack)
		bytes := b.Bytes()
		base, width := 0.0, 0.02*math.Sqrt(3)
		if len(p.Type.Dims()) == 1 {
			base, width = 1, 0.1
		}
		size := dt.Size()
		for j := 0; j+size <= len(bytes); j += size {
			v := float32(base + width*(2*rng.Float64()-1))
			switch dt {
			case ir.BF16:
				binary.LittleEndian.PutUint16(bytes[j:], ir.Float32ToBF16(v))
			case ir.F16:
				binary.LittleEndian.PutUint16(bytes[j:], ir.Float32ToF16(v))
			default:
				binary.LittleEndian.PutUint32(bytes[j:], math.Float32bits(v))
			}
		}
		p.Buffer = b
	}
	return m, nil
}
