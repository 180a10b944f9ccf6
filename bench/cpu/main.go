// Command cpu is the CPU backend benchmark (docs/CPU_BACKEND.md): five f32
// workloads run by tpucc on a backend, side by side in one run with their
// peers and the machine's limits:
//
//   - mlp: examples/mlp.tir (64x1024 -> 4096 -> 1024, relu);
//   - block: the decoder block of examples/ (4 heads, width 256, SwiGLU 512)
//     at batch 8 x sequence 128, attention inside each sequence;
//   - chain: x*sigmoid(x) + bias + residual over 16M floats;
//   - layernorm: layer_norm over 4096x4096;
//   - matmul: 1024x1024x1024.
//
// and then, unless -skip-prefill, a prefill's products x · Wᵀ (512 x 1024 by
// weights stored 3072 x 1024 and 151936 x 1024) against MKL and OpenBLAS.
//
// Peers: XLA:CPU running the StableHLO that tpucc build emits, ONNX Runtime
// on the same computation built with the onnx package (its result is compared
// with tpucc's), numpy's OpenBLAS sgemm for the matmul, MKL (torch.matmul,
// from .venv-hf: mkl.go) for the matmul and the prefill products, and the
// reference executor. Limits (bench/limits): the FMA peak and the STREAM bandwidth,
// measured once at the start and again in every round of the chain and the
// matmul, as one more peer: their fractions are the medians of the rounds'.
// Times are medians of -repeat runs after a warm-up (each side warms up in
// every round; tpucc's for at least 200 ms, workloads.go), in -rounds rounds that time tpucc and its peers one
// after the other (the order reversed every other round); a workload's time
// is the median over rounds and a ratio the median of the rounds' ratios,
// so that both sides of a ratio were timed within the same minute or two
// (this machine's speed drifts).
//
//	make bench-cpu        (creates .venv-bench, then runs this)
//	go run ./bench/cpu [-backend NAME] [-repeat 10] [-rounds 5] [-skip-peers] [-skip-reference] [-skip-prefill] [-steps N]
//	                   [-only chain,matmul] [-fresh-results] [-compare-into]
//
// The chain writes its result into one storage handed back every run
// (engine.Executable.RunInto), as STREAM writes into arrays it made once;
// -fresh-results times it with a new result per run (Run), as before;
// -compare-into times both ways alternately, run by run, with the page
// faults of each, and prints nothing else.
//
// -steps N prints, after each workload, the N steps of tpucc's plan that
// took longest over its runs (backend/llvm's StepTimes): where the time goes.
//
// The last line is, exactly,
//
//	bench-cpu: mlp_vs_xla=R mlp_vs_ort=R block_vs_xla=R block_vs_ort=R chain_of_stream=F matmul_of_peak=F matmul_vs_mkl=M
//
// R = tpucc's time / the peer's; F = the fraction of the measured limit;
// M = MKL's time / tpucc's for the 1024³ matmul (above 1: tpucc is faster;
// NaN when .venv-hf, where torch is, is missing).
package main

import (
	"flag"
	"fmt"
	_ "github.com/tpucc/tpucc/backend/llvm" // registers the llvm backend
	"math"
	"os"
	"slices"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/bench/limits"
)

var (
	backendName = flag.String("backend", "", "the backend tpucc runs on (default: llvm when registered, else reference)")
	repeat      = flag.Int("repeat", 10, "timed runs per measurement, after the warm-up")
	nRounds     = flag.Int("rounds", 5, "rounds of tpucc and its peers, one after the other")
	skipPeers   = flag.Bool("skip-peers", false, "leave out XLA:CPU, ONNX Runtime and numpy")
	skipRef     = flag.Bool("skip-reference", false, "leave out the reference executor")
	steps       = flag.Int("steps", 0, "after each workload, the N steps of tpucc's plan that took longest (llvm backend)")
	only        = flag.String("only", "", "comma-separated workloads to run (mlp, block, chain, layernorm, matmul); the others print NaN")
	// freshResults is the chain's measurement before RunInto, kept for
	// side-by-side comparisons.
	freshResults = flag.Bool("fresh-results", false, "time the chain with a new result per run (Run) instead of one storage handed back (RunInto)")
	compare      = flag.Bool("compare-into", false, "only compare Run and RunInto on the -only workloads (default chain), alternating run by run")
	skipPrefill  = flag.Bool("skip-prefill", false, "leave out the prefill products (512x1024x3072, 512x1024x151936) against MKL and OpenBLAS")
)

func main() {
	flag.Parse()
	name := *backendName
	if name == "" {
		name = "reference"
		if slices.Contains(backend.Names(), "llvm") {
			name = "llvm"
		}
	}
	if *compare {
		if *only == "" {
			*only = "chain"
		}
		for _, w := range workloads() {
			compareInto(w, name)
		}
		return
	}
	lim, err := limits.Measure()
	check(err)
	defer limits.Done()
	fmt.Printf("machine: f32 FMA peak %.0f GFLOP/s, STREAM bandwidth %.1f GB/s (bench/limits, all cores)\n", lim.FMAPeak/1e9, lim.Bandwidth/1e9)
	fmt.Printf("tpucc backend: %s\n\n", name)
	fmt.Printf("%-10s %12s %12s %12s %12s %12s %12s  %s\n", "workload", "tpucc", "XLA:CPU", "ORT", "sgemm", "MKL", "reference", "tpucc vs ORT result")
	times := map[string]row{}
	for _, w := range workloads() {
		r := measure(w, name)
		times[w.name] = r
		fmt.Printf("%-10s %12s %12s %12s %12s %12s %12s  %s\n", w.name, ms(r.tpucc), ms(r.xla), ms(r.ort), ms(r.sgemm), ms(r.mkl), ms(r.reference), r.agreement)
	}
	for _, w := range workloads() {
		r := times[w.name]
		fmt.Printf("%-10s per round: tpucc %s ms", w.name, list(scale(r.rounds, 1e3)))
		if len(r.vsXLA) > 0 {
			fmt.Printf("; tpucc/XLA %s; tpucc/ORT %s", list(r.vsXLA), list(r.vsORT))
		}
		if len(r.vsMKL) > 0 {
			fmt.Printf("; MKL/tpucc %s", list(r.vsMKL))
		}
		fmt.Println()
	}
	if !*skipPrefill {
		printPrefill(measurePrefill(name))
	}
	chain, mm := times["chain"], times["matmul"]
	ofStream := fractions(chain, func(l limits.Limits) float64 { return chainBytes / l.Bandwidth })
	ofPeak := fractions(mm, func(l limits.Limits) float64 { return matmulFLOPs / l.FMAPeak })
	fmt.Printf("\nlimits per round: STREAM %s GB/s; FMA peak %s GFLOP/s\n",
		list(scale(pick(chain.lims, func(l limits.Limits) float64 { return l.Bandwidth }), 1e-9)),
		list(scale(pick(mm.lims, func(l limits.Limits) float64 { return l.FMAPeak }), 1e-9)))
	fmt.Printf("chain: %.1f GB/s moved (of STREAM per round: %s); matmul: %.1f GFLOP/s (of the FMA peak per round: %s)\n",
		chainBytes/chain.tpucc/1e9, list(ofStream), matmulFLOPs/mm.tpucc/1e9, list(ofPeak))
	fmt.Printf("bench-cpu: mlp_vs_xla=%.3f mlp_vs_ort=%.3f block_vs_xla=%.3f block_vs_ort=%.3f chain_of_stream=%.3f matmul_of_peak=%.3f matmul_vs_mkl=%.3f\n",
		median(times["mlp"].vsXLA), median(times["mlp"].vsORT),
		median(times["block"].vsXLA), median(times["block"].vsORT),
		median(ofStream), median(ofPeak), median(mm.vsMKL))
}

// fractions are a workload's fractions of a limit, one per round: the
// limit's time for the work (work(l)) over tpucc's median time in the round
// the limit was measured in.
func fractions(r row, work func(limits.Limits) float64) []float64 {
	var v []float64
	for i, l := range r.lims {
		v = append(v, work(l)/r.rounds[i])
	}
	return v
}

func pick(ls []limits.Limits, f func(limits.Limits) float64) []float64 {
	var v []float64
	for _, l := range ls {
		v = append(v, f(l))
	}
	return v
}

// The chain reads x and the residual and writes y (the bias is 16 KiB); the
// matmul does 2·n³ FLOPs.
const (
	chainBytes  = 3 * 4096 * 4096 * 4
	matmulFLOPs = 2 * 1024 * 1024 * 1024
)

// row is one workload's times in seconds (0: not measured), and the rounds'
// ratios of tpucc's time to XLA's and to ONNX Runtime's.
type row struct {
	tpucc, xla, ort, sgemm, mkl, reference float64
	vsXLA, vsORT                           []float64
	vsMKL                                  []float64       // MKL's time / tpucc's, per round
	rounds                                 []float64       // tpucc's median time in each round
	lims                                   []limits.Limits // the machine's limits in each round (ofLimit)
	agreement                              string
}

// median of v; NaN when empty (peers skipped).
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func scale(v []float64, k float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * k
	}
	return out
}

func list(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(s, " ")
}

func ms(s float64) string {
	if s == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f ms", s*1e3)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/cpu:", err)
		os.Exit(1)
	}
}
