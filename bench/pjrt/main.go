// Command pjrt compares tpucc's PJRT client with JAX on the same StableHLO:
//
//	go run ./bench/pjrt [-calls 20000] [-compile-rounds 5] [-plugin PATH -python PYTHON -tpu-compile=false]
//
// Dispatch: a tiny function (f32[4] add) compiled on the pinned XLA:CPU
// plugin (make pjrt-cpu-plugin), its inputs already on the device, called
// through LoadedExecutable.Execute until its result is ready; against
// jax.jit's cached dispatch of the same function with device-resident inputs
// and block_until_ready (.venv). Beside it, the same call from host memory
// and back: backend.Executable.Run against jax.jit on numpy arrays with
// the result read by np.asarray. -plugin and -python run the
// same comparison on another device, such as a GPU through the CUDA plugin
// and a JAX whose default device is that GPU (tools/pjrtgpu/run.sh).
//
// TPU compile-only: every examples/*.tir, lowered as `tpucc build --target
// tpu-v6e` lowers it, compiled for v6e:2x2 through backend/pjrt and through
// JAX's compile-only client (.venv-tpu), five times each; the sums of the
// per-example medians are compared.
//
// The last line is `bench-pjrt: dispatch_vs_jax=R tpu_compile_vs_jax=R`,
// ratios of Go's time to JAX's (smaller is faster).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/target"
)

const addModule = `module @add {
  func.func public @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
`

func main() {
	calls := flag.Int("calls", 20000, "calls per dispatch measurement (5 rounds, median)")
	topology := flag.String("topology", "v6e:2x2", "TPU topology to compile the examples for")
	plugin := flag.String("plugin", "", "the PJRT plugin dispatch runs on (default: the pinned XLA:CPU plugin)")
	py := flag.String("python", filepath.Join(".venv", "bin", "python"), "the Python whose jax.jit dispatch is compared (on its default device)")
	tpuCompile := flag.Bool("tpu-compile", true, "also compare TPU compile-only times (needs .venv-tpu)")
	rounds := flag.Int("compile-rounds", 5, "compiles of each example on each side (the median is taken)")
	flag.Parse()
	goExec, goRun, platform := dispatchGo(*plugin, *calls)
	jax := strings.Fields(python(*py, "dispatch", strconv.Itoa(*calls)))
	if len(jax) != 2 {
		fail(fmt.Errorf("jax_bench.py dispatch printed %q, want two figures", jax))
	}
	jaxUS, jaxHostUS := must(strconv.ParseFloat(jax[0], 64)), must(strconv.ParseFloat(jax[1], 64))
	fmt.Printf("dispatch f32[4] add, %s: Go Execute %.2f us/call, jax.jit %.2f us; from host buffers and back: Go Run %.2f us, jax.jit on numpy %.2f us\n",
		platform, goExec, jaxUS, goRun, jaxHostUS)
	if !*tpuCompile {
		fmt.Printf("bench-pjrt: dispatch_vs_jax=%.2f\n", goExec/jaxUS)
		return
	}
	goTPU, jaxTPU := compileTPU(*topology, *rounds)
	fmt.Printf("TPU compile-only, examples for %s (sum of per-example medians of %d): Go %.2fs, JAX %.2fs\n", *topology, *rounds, goTPU, jaxTPU)
	fmt.Printf("bench-pjrt: dispatch_vs_jax=%.2f tpu_compile_vs_jax=%.2f\n", goExec/jaxUS, goTPU/jaxTPU)
}

// dispatchGo returns the median microseconds per call of Execute on device
// buffers, and of backend.Executable.Run from host buffers, on the plugin at
// path (the pinned XLA:CPU plugin when empty), and the plugin's platform.
func dispatchGo(path string, n int) (execUS, runUS float64, platform string) {
	load := pjrt.LoadCPU
	if path != "" {
		load = func() (*pjrt.Plugin, error) { return pjrt.Load(path) }
	}
	p := must(load())
	c := must(p.NewClient())
	defer c.Close()
	vec := ir.Type{DType: ir.F32, Shape: []ir.Dim{ir.D(4)}}
	exe := must(c.Compile(addModule, []ir.Type{vec, vec}, pjrt.DefaultCompileOptions))
	defer exe.Close()
	x := must(c.FromHost(vec, make([]byte, 16)))
	defer x.Close()
	args := []*pjrt.Buffer{x, x}
	execUS = median(n, func() {
		out := must(exe.Execute(args))
		out[0].Close()
	})
	f := &ir.Func{Name: "main", Params: []*ir.Value{{Type: vec}, {Type: vec}}, Results: []ir.Type{vec}}
	bexe := must(pjrt.NewBackend(c).Compile(&backend.Program{Entry: f, HLO: addModule}))
	hx := backend.New(vec)
	hargs := []*backend.Buffer{hx, hx}
	runUS = median(n, func() { must(bexe.Run(hargs)) })
	return execUS, runUS, c.Platform()
}

// median runs f n times after a warm-up, five rounds, and returns the median
// round's microseconds per call.
func median(n int, f func()) float64 {
	for range 1000 {
		f()
	}
	var rounds []float64
	for range 5 {
		t := time.Now()
		for range n {
			f()
		}
		rounds = append(rounds, float64(time.Since(t).Microseconds())/float64(n))
	}
	slices.Sort(rounds)
	return rounds[2]
}

// compileTPU lowers every example, compiles each rounds times through
// backend/pjrt and through JAX, and returns each side's sum over the
// examples of the median compile's seconds. Neither side caches compiles;
// the median leaves out the first compile of a process, which pays
// warm-ups on both sides alike, and the noise of a shared machine.
func compileTPU(topology string, rounds int) (goSec, jaxSec float64) {
	paths := must(filepath.Glob("examples/*.tir"))
	dir := must(os.MkdirTemp("", "bench-pjrt"))
	defer os.RemoveAll(dir)
	p := must(pjrt.LoadForCompile(must(pjrt.Find(pjrt.KindTPU))))
	topo := must(p.Topology(topology))
	defer topo.Close()
	var hlos []string
	for _, path := range paths {
		hlo := lowerForTPU(path)
		var secs []float64
		for range rounds {
			t := time.Now()
			exe := must(topo.Compile(hlo, pjrt.DefaultCompileOptions))
			secs = append(secs, time.Since(t).Seconds())
			exe.Close()
		}
		slices.Sort(secs)
		goSec += secs[len(secs)/2]
		file := filepath.Join(dir, strings.TrimSuffix(filepath.Base(path), ".tir")+".hlo")
		check(os.WriteFile(file, []byte(hlo), 0o644))
		hlos = append(hlos, file)
	}
	out := python(filepath.Join(".venv-tpu", "bin", "python"), append([]string{"tpu-compile", topology, strconv.Itoa(rounds)}, hlos...)...)
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		jaxSec += must(strconv.ParseFloat(f[len(f)-1], 64))
	}
	return goSec, jaxSec
}

// lowerForTPU is `tpucc build --target tpu-v6e`'s StableHLO of a .tir file.
func lowerForTPU(path string) string {
	m := must(tir.Parse(path, must(os.ReadFile(path))))
	check(passes.Run(m, passes.Default(), passes.Options{Eval: cpu.Folder{}, Target: target.V6e}))
	return must(stablehlo.Lower(m, stablehlo.Options{}))
}

func python(interpreter string, args ...string) string {
	cmd := exec.Command(interpreter, append([]string{"bench/pjrt/jax_bench.py"}, args...)...)
	cmd.Stderr = nil
	out, err := cmd.Output()
	if err != nil {
		fail(fmt.Errorf("%s %v: %v", interpreter, args, err))
	}
	return string(out)
}

func must[T any](v T, err error) T {
	check(err)
	return v
}

func check(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/pjrt:", err)
	os.Exit(1)
}
