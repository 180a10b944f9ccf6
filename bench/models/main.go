// Command models is the Hugging Face model benchmark (issue 9, docs/PERFORMANCE.md):
// tpucc against transformers in PyTorch, eager and under torch.compile, on this CPU,
// f32, with the same thread count, in one run. Two models with random weights:
//
//   - dense: Qwen3-0.6B's dimensions (hidden 1024, 28 layers, 16/8 heads of 128,
//     MLP 3072, vocab 151936, tied embeddings);
//   - moe: Qwen3-30B-A3B's layer dimensions (hidden 2048, 32/4 heads of 128, 128
//     experts of 768, top-8, vocab 151936) with 2 layers.
//
// Workloads: a prefill of 512 tokens (batch 1), and decode steps at batch 1 and 64
// after a 64-token prompt (tpucc's cache then has 128 slots). Each step computes the
// logits of each row's last token only, on both sides (transformers' logits_to_keep=1,
// which generate() passes). The peer
// (bench/models/peer.py, run with .venv-hf's interpreter) builds the same
// configuration with transformers' random initialisation; tpucc's weights are
// random too (timings do not depend on the values, except the MoE's routing, which
// is spread over the experts on both sides).
//
//	go run ./bench/models [-quick] [-only dense,moe_decode] [-backend llvm] [-repeat 3] [-skip-peer] [-dtype bf16] [-layers N]
//
// -dtype bf16 (with -skip-peer) gives tpucc bf16 weights, as most checkpoints
// store them, to compare with its own f32 figures; the peer's are f32 only.
//
// The dense decode steps are also measured against the machine's bound
// (bound.go): their weights and KV cache read once at the bandwidth, or
// their products at the FMA peak, measured beside each workload
// (bench/limits). The line before the last is, exactly,
//
//	bench-models-bound: dense_decode_b1_of_bound=F dense_decode_b64_of_bound=F
//
// (F = the bound's time over the step's; n/a where not run), and the last
//
//	bench-models: dense_decode_speedup=S moe_decode_speedup=S dense_prefill_speedup=S moe_prefill_speedup=S
//
// S is torch.compile's time over tpucc's (where torch.compile failed, eager's, and the
// row says so); a decode speedup is over both batches (the geometric mean). For decode
// the peer runs torch.compile twice, with transformers' default DynamicCache (whose
// length changes every step) and with a StaticCache (fixed shapes, as tpucc's cache),
// and S takes the faster of the two.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/tpucc/tpucc/backend"
	_ "github.com/tpucc/tpucc/backend/llvm" // registers the llvm backend
	"github.com/tpucc/tpucc/bench/limits"
)

var (
	quick       = flag.Bool("quick", false, "small shapes (a check of the harness, not a measurement)")
	only        = flag.String("only", "", "comma-separated workloads or models to run (dense, moe, dense_prefill, moe_decode_b64, ...)")
	backendName = flag.String("backend", "", "tpucc's backend (default: backend.CPUDefault)")
	repeat      = flag.Int("repeat", 3, "timed runs per workload, after one warm-up run")
	skipPeer    = flag.Bool("skip-peer", false, "leave out the Python peer")
	dtype       = flag.String("dtype", "f32", "tpucc's weights: f32, or bf16 as most checkpoints store them (bf16 needs -skip-peer: the peer runs f32)")
	threads     = flag.Int("threads", 2, "threads for both sides (GOMAXPROCS and torch.set_num_threads)")
	cpuProfile  = flag.String("cpuprofile", "", "write a pprof CPU profile of tpucc's side (compiles and runs) to this file")
	layers      = flag.Int("layers", 0, "the dense model's decoder layers instead of 28 (its shapes otherwise kept): for a host whose memory the full model exceeds")
)

func main() {
	flag.Parse()
	if *dtype != "f32" && (*dtype != "bf16" || !*skipPeer) {
		check(fmt.Errorf("-dtype %s: want f32, or bf16 with -skip-peer (the peer's figures are f32)", *dtype))
	}
	if *backendName == "" {
		*backendName = backend.CPUDefault
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("bench/models: backend %s, %d threads, %s weights, quick=%v\n\n", *backendName, *threads, *dtype, *quick)
	defer limits.Done()
	speed := map[string]float64{}
	for _, m := range benchModels(*quick) {
		ws := selected(m)
		if len(ws) == 0 {
			continue
		}
		var peer map[string]peerTimes
		if !*skipPeer {
			peer = runPeer(m, ws)
		}
		tp := runTpucc(m, ws)
		report(m, ws, tp, peer, speed)
	}
	fmt.Println(boundLine())
	fmt.Printf("bench-models: dense_decode_speedup=%s moe_decode_speedup=%s dense_prefill_speedup=%s moe_prefill_speedup=%s\n",
		fmtSpeed(speed["dense_decode"]), fmtSpeed(speed["moe_decode"]), fmtSpeed(speed["dense_prefill"]), fmtSpeed(speed["moe_prefill"]))
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

// report prints one row per workload and records each model's speedups.
func report(m benchModel, ws []workload, tp map[string]float64, peer map[string]peerTimes, speed map[string]float64) {
	fmt.Printf("%-16s %12s %12s %14s %14s %9s %9s\n", "workload", "tpucc", "eager", "torch.compile", "static cache", "speedup", "vs eager")
	logs := map[string][]float64{}
	for _, w := range ws {
		p := peer[w.name]
		ref, note := p.best(), ""
		if ref == 0 && p.eager > 0 {
			ref, note = p.eager, " (vs eager: torch.compile failed: "+p.compileErr+")"
		}
		s := 0.0
		if ref > 0 && tp[w.name] > 0 {
			s = ref / tp[w.name]
			logs[w.kind] = append(logs[w.kind], math.Log(s))
		}
		se := 0.0
		if p.eager > 0 && tp[w.name] > 0 {
			se = p.eager / tp[w.name]
		}
		fmt.Printf("%-16s %12s %12s %14s %14s %9s %9s%s\n", w.name, fmtTime(tp[w.name]), fmtTime(p.eager), fmtTime(p.compiled), fmtTime(p.static), fmtSpeed(s), fmtSpeed(se), note)
	}
	fmt.Println()
	for kind, l := range logs {
		sum := 0.0
		for _, v := range l {
			sum += v
		}
		speed[m.name+"_"+kind] = math.Exp(sum / float64(len(l)))
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
