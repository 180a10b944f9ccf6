// Command depth measures how a model's compile time grows with its depth
// now that its layers run as loops (issue 30; docs/MODELS.md, "Layers as
// loops"). Weights have types but no data (models.Abstract): compiling
// needs none.
//
//   - export: trace, the default passes and lowering to StableHLO of a
//     decode step (batch 1, 512 cache slots, bf16 weights) of Qwen3-0.6B's
//     dimensions with 24 and with 96 layers; the ratio of the two times
//     (the unrolled build's times are printed too, for comparison).
//
//   - llvm: the same step of Qwen3-0.6B itself (28 layers) compiled for the
//     llvm backend into an empty object cache, with its layers as one loop
//     and unrolled (TPUCC_UNROLL_LAYERS=1, the build before loops).
//
//     Then the warm figure (not the goal's): the same looped step compiled
//     into a cache that a 24-layer config's step filled first, a different
//     program with most of the same kernels, found per kernel (docs/CPU_BACKEND.md,
//     "How kernels are built").
//
//   - decode: decodeLoopSpeedup (decode.go), tokens/s of decode as one
//     device loop over step by step.
//
//     go run ./bench/depth [-reps 3] [-llvm-reps 1] [-only export,llvm,decode]
//
// -only runs the parts named (a quick rerun of one); the last line below is
// printed only when every part ran.
//
// Each time is the least of its runs, wall clock, each run after a garbage
// collection (an export of a looped step takes milliseconds: a collection
// in the middle of one would be most of it). The last line is, exactly,
//
//	bench-depth: export_96_over_24=R llvm_compile_28_s=S llvm_compile_28_before_s=B decode_loop_speedup=X
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/llvm"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models"
	"github.com/tpucc/tpucc/models/hf"
)

// qwen3 is Qwen3-0.6B's config.json with LAYERS layers.
const qwen3 = `{"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 1024,
"intermediate_size": 3072, "num_hidden_layers": LAYERS, "num_attention_heads": 16, "num_key_value_heads": 8,
"head_dim": 128, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 40960,
"tie_word_embeddings": true, "use_sliding_window": false}`

// The measured step: one decode token of one row over a cache of capacity
// slots.
const capacity = 512

func main() {
	reps := flag.Int("reps", 30, "runs of each export; the fastest counts")
	llvmReps := flag.Int("llvm-reps", 1, "runs of each llvm compile; the fastest counts")
	only := flag.String("only", "", "comma-separated parts to run (export, llvm, decode); all when empty")
	flag.Parse()
	parts, err := pick(*only)
	if err == nil {
		err = run(*reps, *llvmReps, parts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-depth:", err)
		os.Exit(1)
	}
}

// pick is the set of parts -only names, every part when it is empty.
func pick(only string) (map[string]bool, error) {
	parts := map[string]bool{"export": only == "", "llvm": only == "", "decode": only == ""}
	if only == "" {
		return parts, nil
	}
	for _, p := range strings.Split(only, ",") {
		if _, ok := parts[p]; !ok {
			return nil, fmt.Errorf("-only %s: want export, llvm or decode", p)
		}
		parts[p] = true
	}
	return parts, nil
}

// run measures the parts picked, and prints the bench-depth line when it
// measured all of them: a line with a part missing would not be the goal's.
func run(reps, llvmReps int, parts map[string]bool) error {
	var export [2]time.Duration
	var compile [2]time.Duration
	var speedup float64
	if parts["export"] {
		if err := runExport(reps, &export); err != nil {
			return err
		}
	}
	if parts["llvm"] {
		if err := runLLVM(llvmReps, &compile); err != nil {
			return err
		}
	}
	if parts["decode"] {
		var err error
		if speedup, err = decodeLoopSpeedup(); err != nil {
			return err
		}
	}
	if parts["export"] && parts["llvm"] && parts["decode"] {
		fmt.Printf("bench-depth: export_96_over_24=%.2f llvm_compile_28_s=%.2f llvm_compile_28_before_s=%.2f decode_loop_speedup=%.2f\n",
			export[1].Seconds()/export[0].Seconds(), compile[0].Seconds(), compile[1].Seconds(), speedup)
	}
	return nil
}

// runExport times the export of 24 and 96 layers, looped (into export) and
// unrolled (printed only).
func runExport(reps int, export *[2]time.Duration) error {
	for _, unroll := range []bool{false, true} {
		for i, layers := range []int{24, 96} {
			d, err := best(reps, func() (time.Duration, error) { return exportTime(layers, unroll) })
			if err != nil {
				return err
			}
			if !unroll {
				export[i] = d
			}
			fmt.Printf("export %2d layers (%s): %8.4f s\n", layers, how[unroll], d.Seconds())
		}
	}
	return nil
}

// runLLVM times the llvm build of 28 layers looped and unrolled (into
// compile), then the looped one with a 24-layer build's kernels cached.
func runLLVM(llvmReps int, compile *[2]time.Duration) error {
	for i, unroll := range []bool{false, true} {
		d, err := best(llvmReps, func() (time.Duration, error) { return llvmTime(28, unroll, 0) })
		if err != nil {
			return err
		}
		compile[i] = d
		fmt.Printf("llvm compile 28 layers (%s): %8.3f s\n", how[unroll], d.Seconds())
	}
	warm, err := best(llvmReps, func() (time.Duration, error) { return llvmTime(28, false, 24) })
	if err != nil {
		return err
	}
	fmt.Printf("llvm compile 28 layers (loops), kernels of 24 layers cached: %8.3f s\n", warm.Seconds())
	return nil
}

var how = map[bool]string{false: "loops", true: "unrolled"}

func best(n int, f func() (time.Duration, error)) (time.Duration, error) {
	var out time.Duration
	for i := range max(n, 1) {
		runtime.GC()
		d, err := f()
		if err != nil {
			return 0, err
		}
		if i == 0 || d < out {
			out = d
		}
	}
	return out, nil
}

// model is the abstract bf16 Qwen3 of layers layers, unrolled or not.
func model(layers int, unroll bool) (*models.Model, error) {
	v := ""
	if unroll {
		v = "1"
	}
	if err := os.Setenv("TPUCC_UNROLL_LAYERS", v); err != nil {
		return nil, err
	}
	c, err := hf.ParseConfig([]byte(strings.Replace(qwen3, "LAYERS", fmt.Sprint(layers), 1)))
	if err != nil {
		return nil, err
	}
	return models.Abstract(c, ir.BF16)
}

// exportTime is the time to trace, run the passes on and lower a decode
// step of the model of layers layers.
func exportTime(layers int, unroll bool) (time.Duration, error) {
	m, err := model(layers, unroll)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	mod, err := m.Trace("decode", m.StepTypes(1, 1, capacity), false)
	if err != nil {
		return 0, err
	}
	exe, _, err := engine.Compile(mod, engine.Config{})
	if err != nil {
		return 0, err
	}
	d := time.Since(t0)
	if n, want := strings.Count(exe.HLO, "stablehlo.while"), map[bool]int{false: 1, true: 0}[unroll]; n != want {
		return 0, fmt.Errorf("%d layers (%s): %d stablehlo.while ops, want %d", layers, how[unroll], n, want)
	}
	return d, nil
}

// llvmTime is the time to trace and compile the decode step for the llvm
// backend, with a new, empty object cache, so that clang builds every
// kernel; or, when warm is not 0, with the cache that compiling the step
// of a warm-layer config left (that compile is not timed).
func llvmTime(layers int, unroll bool, warm int) (time.Duration, error) {
	dir, err := os.MkdirTemp("", "bench-depth-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	b, err := llvm.Open(llvm.Options{CacheDir: dir})
	if err != nil {
		return 0, err
	}
	if warm != 0 {
		w, err := model(warm, unroll)
		if err != nil {
			return 0, err
		}
		mod, err := w.Trace("decode", w.StepTypes(1, 1, capacity), false)
		if err != nil {
			return 0, err
		}
		if _, _, err := engine.Compile(mod, engine.Config{Backend: b}); err != nil {
			return 0, err
		}
		runtime.GC()
	}
	m, err := model(layers, unroll)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	mod, err := m.Trace("decode", m.StepTypes(1, 1, capacity), false)
	if err != nil {
		return 0, err
	}
	t1 := time.Now()
	exe, times, err := engine.Compile(mod, engine.Config{Backend: b})
	if err != nil {
		return 0, err
	}
	d := time.Since(t0)
	fmt.Fprintf(os.Stderr, "  %s: %s\n", how[unroll], stages(t1.Sub(t0), times, exe.Exec))
	if x, ok := exe.Exec.(*llvm.Executable); ok {
		fmt.Fprintf(os.Stderr, "  %s: %d kernels, %d found in cached parts, %d parts compiled, clang's CPU %.3f s\n", how[unroll], x.Times.Kernels, x.Times.KernelsCached, x.Times.Parts, x.Times.ClangCPU.Seconds())
	}
	return d, nil
}

// stages says where one llvm build's time went: tracing, the passes,
// lowering, and the backend's own stages (planning and IR generation,
// clang, loading), the backend's remainder last.
func stages(trace time.Duration, t engine.StageTimes, x backend.Executable) string {
	s := fmt.Sprintf("trace %.3f s, passes %.3f s, lower %.3f s", trace.Seconds(), t.Passes.Seconds(), t.Lower.Seconds())
	rest := t.Backend
	if st, ok := x.(backend.Staged); ok {
		for _, p := range st.CompileStages() {
			s += fmt.Sprintf(", %s %.3f s", p.Name, p.Time.Seconds())
			rest -= p.Time
		}
	}
	return s + fmt.Sprintf(", backend rest %.3f s", rest.Seconds())
}
