// Command train is the training benchmark (issue 31, docs/PERFORMANCE.md): one
// training step (the causal-LM loss, its backward pass and AdamW's update) of tpucc
// against transformers in PyTorch, eager and under torch.compile, on this CPU, f32,
// with the same thread count. Two models with random weights, batch 4 × 256 tokens:
//
//   - dense: Qwen3-0.6B's dimensions (hidden 1024, 16/8 heads of 128, MLP 3072,
//     vocab 151936, tied embeddings) with 4 layers;
//
//   - moe: Qwen3-30B-A3B's layer dimensions (hidden 2048, 32/4 heads of 128, 128
//     experts of 768, top-8, vocab 151936) with 2 layers.
//
//     go run ./bench/train [-quick] [-only dense|moe] [-repeat 2] [-skip-peer] [-threads 2] [-steps N] [-layers N] [-vocab V]
//
// -layers and -vocab shrink the dense model (a profile that fits beside other work;
// not the benchmark's figure). -unroll trains with the layers unrolled
// (models.TrainOptions.UnrollLayers), not the default loops; -remat with the loops'
// backward recomputing each layer's forward (models.TrainOptions.RematLayers) instead of
// reading the intermediates the forward loop saved; the row says so.
//
// -alternate N trains the dense model (-layers, -vocab) three ways in one process, a step
// of each in turn for N rounds after a warm-up round: looped, -remat and -unroll (a
// comparison under the same load; no peer, no bench line).
//
// -steps N prints, after tpucc's timed steps, the N longest steps of each program it
// ran on the llvm backend in the last step (time per call and share), then the N
// longest kinds of step (products grouped by shape and operand layout, with their
// GFLOP/s; every other step grouped by what it computes, with the GB/s of the values
// it reads and writes), to see where a steady step's time goes.
//
// Each side runs in a process of its own, one after the other (the peer, then tpucc's
// side, which this command runs as a child of itself), so the two never hold a model
// at once. A model whose estimated training memory (weights, gradients and AdamW's two
// states in f32, and the logits' activations) is more than MemAvailable is not run,
// and its row says so with both figures. tpucc's step is compiled first (timed: its
// compile time) and then timed as the median of -repeat steps after a warm-up step.
//
// The last line is, exactly,
//
//	bench-train: dense_step_speedup=S moe_step_speedup=S compile_s=C
//
// S is torch.compile's step time over tpucc's (where torch.compile failed, eager's,
// and the row says so; n/a where a side did not run); C is tpucc's compile time of the
// dense step in seconds.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/tpucc/tpucc/backend"
	_ "github.com/tpucc/tpucc/backend/llvm" // registers the llvm backend
)

var (
	quick       = flag.Bool("quick", false, "small shapes (a check of the harness, not a measurement)")
	only        = flag.String("only", "", "dense or moe: run that model only")
	backendName = flag.String("backend", "", "tpucc's backend (default: backend.CPUDefault)")
	repeat      = flag.Int("repeat", 2, "timed steps, after one warm-up step")
	skipPeer    = flag.Bool("skip-peer", false, "leave out the Python peer")
	threads     = flag.Int("threads", 2, "threads for both sides (GOMAXPROCS and torch.set_num_threads)")
	steps       = flag.Int("steps", 0, "print the N longest steps and kinds of step of tpucc's last step on the llvm backend (time, share, rate)")
	side        = flag.String("side", "", "internal: run tpucc's side of this model and print its times as JSON")
	layers      = flag.Int("layers", 0, "the dense model's layer count (0: 4), for a smaller profile")
	vocab       = flag.Int("vocab", 0, "the dense model's vocabulary (0: 151936), for a smaller profile")
	unroll      = flag.Bool("unroll", false, "tpucc's step with its layers unrolled (models.TrainOptions.UnrollLayers) instead of looped")
	remat       = flag.Bool("remat", false, "tpucc's layer loops recompute each layer's forward in the backward (models.TrainOptions.RematLayers)")
	alternate   = flag.Int("alternate", 0, "train the dense model looped, with -remat and with -unroll in one process, a step of each in turn, N rounds (no peer)")
)

const batch, tokens, lr = 4, 256, 1e-4

func main() {
	flag.Parse()
	if *backendName == "" {
		*backendName = backend.CPUDefault
	}
	if *side != "" {
		runSide(*side)
		return
	}
	if *alternate > 0 {
		runAlternate(*alternate)
		return
	}
	fmt.Printf("bench/train: backend %s, %d threads, f32, batch %d × %d tokens, AdamW, quick=%v\n\n", *backendName, *threads, batch, tokens, *quick)
	fmt.Printf("%-6s %12s %12s %14s %9s %9s %12s %16s\n", "model", "tpucc", "eager", "torch.compile", "speedup", "vs eager", "tpucc compile", "torch.c. warm-up")
	speed := map[string]float64{}
	compile := 0.0
	for _, m := range benchModels(*quick) {
		if *only != "" && *only != m.name {
			continue
		}
		r := runModel(m)
		speed[m.name] = r.speedup()
		if m.name == "dense" {
			compile = r.tpucc.Compile
		}
		fmt.Println(r.row())
	}
	fmt.Printf("\nbench-train: dense_step_speedup=%s moe_step_speedup=%s compile_s=%s\n",
		fmtSpeed(speed["dense"]), fmtSpeed(speed["moe"]), fmtSeconds(compile))
}

// result is one model's figures; note says why a side did not run.
type result struct {
	name                      string
	tpucc                     sideTimes
	eager, compiled, compile1 float64
	compileErr, note          string
}

// sideTimes is what tpucc's side prints: seconds per step and to compile.
type sideTimes struct {
	Step, Compile float64
	Error         string
}

func (r result) speedup() float64 {
	ref := r.compiled
	if ref == 0 {
		ref = r.eager
	}
	if ref == 0 || r.tpucc.Step == 0 {
		return 0
	}
	return ref / r.tpucc.Step
}

func (r result) row() string {
	se := 0.0
	if r.eager > 0 && r.tpucc.Step > 0 {
		se = r.eager / r.tpucc.Step
	}
	s := fmt.Sprintf("%-6s %12s %12s %14s %9s %9s %12s %16s", r.name, fmtTime(r.tpucc.Step), fmtTime(r.eager), fmtTime(r.compiled),
		fmtSpeed(r.speedup()), fmtSpeed(se), fmtTime(r.tpucc.Compile), fmtTime(r.compile1))
	var notes []string
	for _, n := range []string{r.note, r.tpucc.Error, r.compileErr} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	if len(notes) > 0 {
		s += "  (" + strings.Join(notes, "; ") + ")"
	}
	return s
}

func fmtTime(s float64) string {
	switch {
	case s == 0:
		return "-"
	case s < 1:
		return fmt.Sprintf("%.1f ms", s*1e3)
	}
	return fmt.Sprintf("%.2f s", s)
}

func fmtSpeed(s float64) string {
	if s == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", s)
}

func fmtSeconds(s float64) string {
	if s == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", s)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/train:", err)
		os.Exit(1)
	}
}

// printJSON writes v as one line on standard output (the side's answer).
func printJSON(v any) {
	b, err := json.Marshal(v)
	check(err)
	fmt.Println(string(b))
}
