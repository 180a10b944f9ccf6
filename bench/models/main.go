// Command models is the Hugging Face model benchmark (issues 9 and 34, docs/PERFORMANCE.md):
// tpucc against transformers in PyTorch, eager and under torch.compile, and against
// llama.cpp, on this CPU, f32 or bf16, with the same thread count, in one run. Two
// models with random weights:
//
//   - dense: Qwen3-0.6B's dimensions (hidden 1024, 28 layers, 16/8 heads of 128,
//     MLP 3072, vocab 151936, tied embeddings);
//   - moe: Qwen3-30B-A3B's layer dimensions (hidden 2048, 32/4 heads of 128, 128
//     experts of 768, top-8, vocab 151936) with 2 layers.
//
// Workloads: a prefill of 512 tokens (batch 1), and decode steps at batch 1 and 64
// after a 64-token prompt (tpucc's cache then has 128 slots). Each step computes the
// logits of each row's last token only, on both sides (transformers' logits_to_keep=1,
// which generate() passes). The torch peer
// (bench/models/peer.py, run with .venv-hf's interpreter) builds the same
// configuration with transformers' random initialisation; tpucc's weights are
// random too (timings do not depend on the values, except the MoE's routing, which
// is spread over the experts on both sides).
//
//	go run ./bench/models [-quick] [-only dense,moe_decode] [-peers torch,llamacpp] [-backend llvm] [-repeat 3] [-dtype bf16|f16] [-layers N] [-prompt N] [-steps N]
//
// -precision default,highest times tpucc's bf16 and f32 products of the same
// weights in one process, a run of each in turn (a shared host's load falls on
// both alike), and prints each one's median and their ratio; the table takes
// the default's.
// -steps N prints, after each workload, the N longest steps of every program
// tpucc ran on the llvm backend (time per call and share): where a step's time
// goes, kernel by kernel.
// -dtype bf16 gives every side bf16 weights, as most checkpoints store them: tpucc's
// parameters, the torch peer's model (torch.compile of the bf16 model) and llama.cpp's
// GGUF. -dtype f16 does the same with f16 weights (llama.cpp's f16 GGUF; tpucc
// widens f16 to f32 as it reads it, as it does bf16 without AVX512-BF16). -peers picks the peers (torch, llamacpp; "none", or -skip-peer, for tpucc alone).
//
// For each model tpucc runs first, then the torch peer, and each workload's row is
// printed as soon as the peer has measured it. The llama.cpp peer (llamacpp.go,
// bench/models/llama) times the dense model only, as llama-bench -p 512 -n 64 would:
// prefill and batch-1 decode tokens/s, printed in a table of their own. It runs in
// turns with tpucc: -turns pairs of runs, tpucc's and llama.cpp's one after the
// other (the order swapped from pair to pair, llama.cpp first) after an untimed
// run of each, the ratio the median of the pairs'. Under its table a line says
// how much of each side's resident memory was in 2 MiB pages after the
// warm-up (pages.go): llama.cpp reads its GGUF mapped from the page cache,
// in 2 MiB pages or 4 KiB ones depending on how the file got there (on
// this project's VM the decode figure did not move with it, but the line
// says which pages a figure was read from).
//
// The decode steps are also measured against the machine's bound
// (bound.go): the weights a step needs and its KV cache read once at the
// bandwidth, or its products at the peak of their dtype (bf16 products at
// the vdpbf16ps peak where the host has AVX512-BF16, f16 and f32 ones at
// the FMA peak), measured beside each workload (bench/limits). A MoE step
// needs its non-expert weights and the distinct experts its tokens are
// routed to (top-k at batch 1; at batch B the expected count under uniform
// routing, E·(1−(1−k/E)^B)), and computes the routed experts' products
// only. Each workload's bound is broken down on stderr, with the step's
// weights taken one after another, each at its own bound (no kernel
// overlapping its reads with another's products), and, beside the torch
// peer, the peer's step over both (the speedups of steps at them). The line
// before the last is, exactly,
//
//	bench-models-bound: dense_decode_b1_of_bound=F dense_decode_b64_of_bound=F moe_decode_b1_of_bound=F moe_decode_b64_of_bound=F
//
// (F = the bound's time over the step's; n/a where not run), and the last
//
//	bench-models: dense_decode_speedup=S moe_decode_speedup=S dense_prefill_speedup=S moe_prefill_speedup=S vs_llamacpp_decode=R vs_llamacpp_prefill=R
//
// S is torch.compile's time over tpucc's (where torch.compile failed, eager's, and the
// row says so); a decode speedup is over both batches (the geometric mean). For decode
// the peer runs torch.compile twice, with transformers' default DynamicCache (whose
// length changes every step) and with a StaticCache (fixed shapes, as tpucc's cache),
// and S takes the faster of the two. R is tpucc's tokens/s over llama.cpp's, same
// dtype: decode is dense_decode_b1's step, prefill dense_prefill. A figure that was not
// measured (a peer left out or absent, a workload not selected) is n/a; an absent peer
// says so on its own line.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"

	"github.com/tpucc/tpucc/backend"
	_ "github.com/tpucc/tpucc/backend/llvm" // registers the llvm backend
	"github.com/tpucc/tpucc/bench/limits"
	"github.com/tpucc/tpucc/ir"
)

var (
	quick       = flag.Bool("quick", false, "small shapes (a check of the harness, not a measurement)")
	only        = flag.String("only", "", "comma-separated workloads or models to run (dense, moe, dense_prefill, moe_decode_b64, ...)")
	peers       = flag.String("peers", "torch,llamacpp", `comma-separated peers to run: torch, llamacpp ("none": tpucc alone)`)
	backendName = flag.String("backend", "", "tpucc's backend (default: backend.CPUDefault)")
	repeat      = flag.Int("repeat", 3, "timed runs per workload, after one warm-up run")
	skipPeer    = flag.Bool("skip-peer", false, "leave out every peer (-peers none)")
	dtype       = flag.String("dtype", "f32", "every side's weights: f32, bf16 as most checkpoints store them, or f16")
	precision   = flag.String("precision", "default", "tpucc's products with -dtype bf16: default (bf16, as both peers), highest (f32; models.Model.F32Products), or default,highest (both, run by run alternated)")
	threads     = flag.Int("threads", 2, "threads for every side (GOMAXPROCS, torch.set_num_threads, llama.cpp's n_threads)")
	cpuProfile  = flag.String("cpuprofile", "", "write a pprof CPU profile of tpucc's side (compiles and runs) to this file")
	steps       = flag.Int("steps", 0, "print the N longest steps of each program tpucc ran on the llvm backend (time per call, share)")
	layers      = flag.Int("layers", 0, "the dense model's decoder layers instead of 28 (its shapes otherwise kept): for a host whose memory the full model exceeds")
	llamaTurns  = flag.Int("turns", 5, "pairs of runs, tpucc's and llama.cpp's in turn, behind each figure of the llama.cpp table")
	promptLen   = flag.Int("prompt", 0, "the decode workloads' prompt tokens instead of 64 (16 with -quick): the cache grows to hold them, so attention's share of a step is measured at long contexts")
)

// benchDTypes are -dtype's values: the weights' type on every side.
var benchDTypes = map[string]ir.DType{"f32": ir.F32, "bf16": ir.BF16, "f16": ir.F16}

func main() {
	flag.Parse()
	if _, ok := benchDTypes[*dtype]; !ok {
		check(fmt.Errorf("-dtype %s: want f32, bf16 or f16", *dtype))
	}
	if !slices.Contains([]string{"default", "highest", "default,highest"}, *precision) {
		check(fmt.Errorf("-precision %s: want default, highest or default,highest", *precision))
	}
	run, err := parsePeers(*peers, *skipPeer)
	check(err)
	if *backendName == "" {
		*backendName = backend.CPUDefault
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("bench/models: backend %s, %d threads, %s weights, peers %s, quick=%v\n\n", *backendName, *threads, *dtype, run, *quick)
	defer limits.Done()
	speed := map[string]float64{}
	for _, m := range benchModels(*quick) {
		ws := selected(m)
		if len(ws) == 0 {
			continue
		}
		tp, side := runTpucc(m, ws)
		turns := run.llamacpp && m.name == "dense"
		if !turns {
			side = nil
		}
		// Unless kept for the llama.cpp turns, tpucc's model is garbage now; give its
		// memory back before a peer builds its own.
		runtime.GC()
		debug.FreeOSMemory()
		rows := newTable(m, ws, tp, speed)
		if run.torch {
			runPeer(m, ws, rows.row)
		}
		rows.finish()
		if turns {
			speed["vs_llamacpp_decode"], speed["vs_llamacpp_prefill"] = llamaCompare(m, tp, side)
		}
	}
	fmt.Println(boundLine(ofBound))
	fmt.Println(summary(speed))
}

// peerSet is which peers a run includes.
type peerSet struct{ torch, llamacpp bool }

func (p peerSet) String() string {
	var s []string
	if p.torch {
		s = append(s, "torch")
	}
	if p.llamacpp {
		s = append(s, "llamacpp")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

// parsePeers reads -peers (and -skip-peer, which leaves every peer out).
func parsePeers(list string, skip bool) (peerSet, error) {
	var p peerSet
	if skip || list == "none" || list == "" {
		return p, nil
	}
	for _, n := range strings.Split(list, ",") {
		switch strings.TrimSpace(n) {
		case "torch":
			p.torch = true
		case "llamacpp":
			p.llamacpp = true
		default:
			return p, fmt.Errorf("-peers: unknown peer %q (want torch, llamacpp or none)", n)
		}
	}
	return p, nil
}

// summary is the last line: every key, n/a where a figure was not measured.
func summary(speed map[string]float64) string {
	var b strings.Builder
	b.WriteString("bench-models:")
	for _, k := range []string{"dense_decode_speedup", "moe_decode_speedup", "dense_prefill_speedup", "moe_prefill_speedup",
		"vs_llamacpp_decode", "vs_llamacpp_prefill"} {
		fmt.Fprintf(&b, " %s=%s", k, fmtSpeed(speed[strings.TrimSuffix(k, "_speedup")]))
	}
	return b.String()
}

// selected are m's workloads that -only names (by workload or model).
func selected(m benchModel) []workload {
	if *only == "" {
		return m.workloads
	}
	var out []workload
	for _, w := range m.workloads {
		for _, o := range strings.Split(*only, ",") {
			if o == m.name || o == w.name || strings.HasPrefix(w.name, o+"_") {
				out = append(out, w)
				break
			}
		}
	}
	return out
}

// table prints one model's rows as their peer figures come in, and records the
// model's speedups once every row is in.
type table struct {
	m       benchModel
	ws      []workload
	tp      map[string]float64
	speed   map[string]float64
	printed map[string]bool
	logs    map[string][]float64
}

func newTable(m benchModel, ws []workload, tp map[string]float64, speed map[string]float64) *table {
	fmt.Printf("%-16s %12s %12s %14s %14s %9s %9s\n", "workload", "tpucc", "eager", "torch.compile", "static cache", "speedup", "vs eager")
	return &table{m: m, ws: ws, tp: tp, speed: speed, printed: map[string]bool{}, logs: map[string][]float64{}}
}

// row prints workload name's row with the peer's times p (zero: no peer figures).
func (t *table) row(name string, p peerTimes) {
	i := slices.IndexFunc(t.ws, func(w workload) bool { return w.name == name })
	if i < 0 || t.printed[name] {
		return
	}
	t.printed[name] = true
	w, tp := t.ws[i], t.tp[name]
	ref, note := p.best(), ""
	if ref == 0 && p.eager > 0 {
		ref, note = p.eager, " (vs eager: torch.compile failed: "+p.compileErr+")"
	}
	s := 0.0
	if ref > 0 && tp > 0 {
		s = ref / tp
		t.logs[w.kind] = append(t.logs[w.kind], math.Log(s))
	}
	se := 0.0
	if p.eager > 0 && tp > 0 {
		se = p.eager / tp
	}
	if b := boundTime[name]; b[0] > 0 && ref > 0 {
		fmt.Fprintf(os.Stderr, "bench/models: %s: the peer's step over the bound: %.2f, over its weights in turn at their bounds: %.2f (the speedups of steps at them)\n",
			name, ref/b[0], ref/b[1])
	}
	fmt.Printf("%-16s %12s %12s %14s %14s %9s %9s%s\n", w.name, fmtTime(tp), fmtTime(p.eager), fmtTime(p.compiled), fmtTime(p.static), fmtSpeed(s), fmtSpeed(se), note)
}

// finish prints the rows the peer left out (or all, without a peer) and records
// the speedups: a kind's is the geometric mean over its rows.
func (t *table) finish() {
	for _, w := range t.ws {
		t.row(w.name, peerTimes{})
	}
	fmt.Println()
	for kind, l := range t.logs {
		sum := 0.0
		for _, v := range l {
			sum += v
		}
		t.speed[t.m.name+"_"+kind] = math.Exp(sum / float64(len(l)))
	}
}

func fmtTime(s float64) string {
	switch {
	case s == 0:
		return "-"
	case s < 1:
		return fmt.Sprintf("%.2f ms", s*1e3)
	}
	return fmt.Sprintf("%.2f s", s)
}

func fmtSpeed(s float64) string {
	if s == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", s)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/models:", err)
		os.Exit(1)
	}
}
