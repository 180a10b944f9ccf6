// Command moe is the mixture-of-experts benchmark (docs/MOE.md): one MoE
// layer (softmax router, top-K renormalised, SwiGLU experts, f32) at the
// Qwen3-30B-A3B and Gemma 4 26B-A4B layer shapes, at a batch-64 decode step
// and a 1024-token prefill, written three ways and run on tpucc's default
// CPU path side by side:
//
//   - dense: every expert on every token (moe-route disabled);
//   - per-expert: one branch per expert (moe-route disabled);
//   - routed: the dense program after moe-route (ragged_dot).
//
// Peers and limits in the same run: XLA:CPU on the dense program, the
// roofline of the routed layer (FLOPs of the routed rows at the FMA peak,
// expert weights actually read at the memory bandwidth, both measured
// again right after each routed run: a decode_of_bound is the median of
// the runs' own fractions, timePaired), and for
// TPU v5e and v6e the cost model's time of dense and routed next to XLA:TPU's
// own cost analysis (libtpu's compile-only path, tools/xlacheck).
//
//	go run ./bench/moe [-quick] [-repeat 3] [-skip-per-expert] [-skip-xla] [-phase decode|decode1|prefill] [-shape qwen3|gemma4] [-prefill-tokens 1024] [-backend llvm] [-steps N]
//
// The decode step runs at batch 64 (decode) and batch 1 (decode1: one
// token, its K experts). -steps N prints, under each routed row, the N
// steps of its plan that took longest (backend/llvm's StepTimes).
//
// Under each timed row, a backend that reports it (backend/llvm's
// Coverage) says which ops ran as generated kernels and which fell back to
// the reference executor.
//
// The last line is, exactly,
//
//	bench-moe: qwen3_prefill_speedup=S gemma4_prefill_speedup=S qwen3_decode_of_bound=F gemma4_decode_of_bound=F max_rel_err=E qwen3_decode_b1_of_bound=F gemma4_decode_b1_of_bound=F
package main

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tpucc/tpucc/backend/llvm" // registers the llvm backend; StepTimes

	"github.com/tpucc/tpucc/bench/limits"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
)

var (
	quick       = flag.Bool("quick", false, "shapes divided by 8 (E by 4): a check of the harness, not a measurement")
	repeat      = flag.Int("repeat", 3, "timed runs per program, after one warm-up run")
	skipPer     = flag.Bool("skip-per-expert", false, "leave out the per-expert formulation")
	skipXLA     = flag.Bool("skip-xla", false, "leave out the Python peers (XLA:CPU, XLA:TPU cost)")
	tpuOnly     = flag.Bool("tpu-only", false, "only the TPU figures (cost model and XLA:TPU), no CPU runs")
	prefillLen  = flag.Int64("prefill-tokens", 1024, "tokens of the prefill phase (the issue's figures are at 1024)")
	backendName = flag.String("backend", "", "the backend the CPU runs use (default: backend.CPUDefault)")
	phaseOnly   = flag.String("phase", "", "run one phase only: decode, decode1 or prefill (the last line then gives 0 for the others)")
	only        = flag.String("shape", "", "run one shape only: qwen3 or gemma4")
	steps       = flag.Int("steps", 0, "after each routed run, the N steps of its plan that took longest (llvm backend)")
)

func main() {
	flag.Parse()
	if *phaseOnly != "" && *phaseOnly != "decode" && *phaseOnly != "decode1" && *phaseOnly != "prefill" {
		check(fmt.Errorf("-phase %q: want decode, decode1 or prefill", *phaseOnly))
	}
	if *only != "" && *only != "qwen3" && *only != "gemma4" {
		check(fmt.Errorf("-shape %q: want qwen3 or gemma4", *only))
	}
	shapes := []shape{
		{name: "qwen3", H: 2048, F: 768, E: 128, K: 8},
		{name: "gemma4", H: 2816, F: 704, E: 128, K: 8},
	}
	lim, err := limits.Measure()
	check(err)
	bw, peak := lim.Bandwidth, lim.FMAPeak
	fmt.Printf("machine: memory bandwidth %.1f GB/s (STREAM triad), f32 FMA peak %.0f GFLOP/s (vector FMA chains), all cores; bench/limits\n\n", bw/1e9, peak/1e9)
	res := map[string]float64{}
	maxErr := 0.0
	for _, base := range shapes {
		if *only != "" && base.name != *only {
			continue
		}
		for _, phase := range []struct {
			name string
			T    int64
		}{{"decode", 64}, {"decode1", 1}, {"prefill", *prefillLen}} {
			if *phaseOnly != "" && phase.name != *phaseOnly {
				continue
			}
			s := base
			s.T = phase.T
			if *quick {
				s.T, s.H, s.F, s.E = max(s.T/8, min(s.T, 8)), s.H/8, s.F/8, s.E/4
			}
			r := runShape(s, phase.name, bw, peak)
			maxErr = math.Max(maxErr, r.relErr)
			switch phase.name {
			case "prefill":
				res[s.name+"_prefill_speedup"] = r.dense / r.routed
			case "decode":
				res[s.name+"_decode_of_bound"] = r.ofBound
			case "decode1":
				res[s.name+"_decode_b1_of_bound"] = r.ofBound
			}
		}
	}
	limits.Done()
	fmt.Printf("bench-moe: qwen3_prefill_speedup=%.2f gemma4_prefill_speedup=%.2f qwen3_decode_of_bound=%.3f gemma4_decode_of_bound=%.3f max_rel_err=%.2e qwen3_decode_b1_of_bound=%.3f gemma4_decode_b1_of_bound=%.3f\n",
		res["qwen3_prefill_speedup"], res["gemma4_prefill_speedup"], res["qwen3_decode_of_bound"], res["gemma4_decode_of_bound"], maxErr,
		res["qwen3_decode_b1_of_bound"], res["gemma4_decode_b1_of_bound"])
}

// result is what one shape and phase measured, in seconds.
type result struct {
	dense, perExpert, routed, xla, bound float64
	relErr                               float64
	ofBound                              float64 // the median of the routed runs' bound/time, each against its own limits
}

func runShape(s shape, phase string, bw, peak float64) result {
	fmt.Printf("== %s %s: T=%d H=%d F=%d E=%d K=%d\n", s.name, phase, s.T, s.H, s.F, s.E, s.K)
	if *tpuOnly {
		tpuCosts(s)
		return result{}
	}
	dense := build(s.dense(), "cpu", "moe-route")
	routed := build(s.dense(), "cpu")
	if n := strings.Count(ir.PrintFunc(routed.Entry), "= ragged_dot "); n != 3 {
		check(fmt.Errorf("moe-route made %d ragged_dots, want 3", n))
	}
	args := inputs(s, dense.Entry)
	var r result
	var yDense []float64
	r.dense, yDense = timeRun(dense, args)
	rows := float64(s.T * s.K)
	flops := 2 * rows * float64(s.H*s.F*3)
	weights := float64(min(s.E, s.T*s.K)*3*s.H*s.F) * 4
	// The limits again, beside each routed run (pairs): on a shared machine
	// the bandwidth moves by tens of percent from one minute to the next, and
	// a bound from the start of the run compared two different minutes.
	run, yRouted := timeOnce(routed, args)
	pr := timePaired(run, limits.Again, func(l limits.Limits) float64 {
		return math.Max(flops/l.FMAPeak, weights/l.Bandwidth)
	})
	r.routed, r.bound, r.ofBound = pr.seconds, pr.bound, pr.ofBound
	l := pr.limits
	fmt.Printf("  limits beside the routed runs: STREAM %.1f GB/s, FMA peak %.0f GFLOP/s (medians of %d, one after each run; at the start: %.1f, %.0f)\n",
		l.Bandwidth/1e9, l.FMAPeak/1e9, len(pr.ratios), bw/1e9, peak/1e9)
	bw, peak = l.Bandwidth, l.FMAPeak
	r.relErr = relErr(yRouted, yDense)
	fmt.Printf("  dense        %10.4f s\n", r.dense)
	coverage(dense)
	if !*skipPer {
		per := build(s.perExpert(), "cpu", "moe-route")
		r.perExpert, _ = timeRun(per, args)
		fmt.Printf("  per-expert   %10.4f s\n", r.perExpert)
		coverage(per)
	}
	fmt.Printf("  routed       %10.4f s   speedup over dense %.2fx; ||routed-dense||/||dense|| = %.2e\n", r.routed, r.dense/r.routed, r.relErr)
	coverage(routed)
	printSteps(routed)
	fmt.Printf("  roofline     %10.4f s   (%.2f GFLOP at peak: %.4f s; %.1f MB of expert weights at %.1f GB/s: %.4f s); routed is %.3f of it\n",
		r.bound, flops/1e9, flops/peak, weights/1e6, bw/1e9, weights/bw, r.ofBound)
	fmt.Printf("               (the median of %d runs' own fractions, each against the limits measured right after it: %s)\n",
		len(pr.ratios), fmtList(pr.ratios))
	if !*skipXLA {
		r.xla = xlaTime(dense, args)
		fmt.Printf("  XLA:CPU dense %9.4f s   routed/XLA %.2f\n", r.xla, r.routed/r.xla)
		tpuCosts(s)
	}
	fmt.Println()
	return r
}

// printSteps prints the -steps longest steps of exe's plan when it runs on
// the llvm backend: time per call over its runs (the warm-up's included)
// and share of all steps' time.
func printSteps(exe *engine.Executable) {
	x, ok := exe.Exec.(*llvm.Executable)
	if *steps <= 0 || !ok {
		return
	}
	st := x.StepTimes()
	var all time.Duration
	for _, s := range st {
		all += s.Total
	}
	slices.SortStableFunc(st, func(a, b llvm.StepTime) int { return cmp.Compare(b.Total, a.Total) })
	for _, s := range st[:min(*steps, len(st))] {
		per := time.Duration(0)
		if s.Calls > 0 {
			per = s.Total / time.Duration(s.Calls)
		}
		fmt.Printf("               %4d %-6s %-40s %10.3f ms/call %5.1f%%\n", s.Step, s.Kernel, s.What, per.Seconds()*1e3, 100*s.Total.Seconds()/max(all.Seconds(), 1e-12))
	}
}

// coverage prints which ops of exe ran as generated kernels and which on
// the reference executor, when its backend says (backend/llvm does).
func coverage(exe *engine.Executable) {
	if c, ok := exe.Exec.(interface{ Coverage() (string, string) }); ok {
		gen, ref := c.Coverage()
		if ref == "" {
			ref = "none"
		}
		fmt.Printf("               kernels: generated %s; reference fallbacks: %s\n", gen, ref)
	}
}

// build parses text and compiles it for target with the named passes off.
func build(text, target string, disable ...string) *engine.Executable {
	m, err := tir.Parse("moe.tir", []byte(text))
	check(err)
	b, err := engine.OpenBackend(*backendName)
	check(err)
	exe, _, err := engine.Compile(m, engine.Config{Target: target, Passes: passes.Options{Disable: disable}, Backend: b})
	check(err)
	return exe
}

func relErr(got, want []float64) float64 {
	var d, n float64
	for i := range want {
		d += (got[i] - want[i]) * (got[i] - want[i])
		n += want[i] * want[i]
	}
	return math.Sqrt(d / n)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/moe:", err)
		os.Exit(1)
	}
}
