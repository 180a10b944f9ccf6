// Command loops times a compiled while loop: 1000 iterations of a small
// body (x = tanh(x·Wᵀ + b) on f32[1,64], W f32[64,64] stored as Hugging
// Face stores a linear layer's weight, [out, in], and carried unchanged),
// one call of the program per run, on the llvm backend (the body's kernels
// called in place, nothing allocated per iteration) and on XLA:CPU through
// the pinned PJRT plugin (make pjrt-cpu-plugin), the same program lowered
// to stablehlo.while; and, for scale, on the reference executor.
//
//	go run ./bench/loops [-iters 1000] [-runs 50]
//
// The last line is `bench-loops: llvm_us=T xla_us=T reference_us=T
// llvm_vs_xla=R`: the median microseconds per run of the whole loop on
// each, and llvm's over XLA's (smaller is faster).
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/backend/llvm"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/lower/stablehlo"
)

const program = `func @main(%n: i32[], %x0: f32[1,64], %w: f32[64,64], %b: f32[1,64]) -> f32[1,64] {
  %z = constant 0 : i32[]
  %i, %x, %ww, %bb, %lim = while %z, %x0, %w, %b, %n cond (%i: i32[], %x: f32[1,64], %w: f32[64,64], %b: f32[1,64], %lim: i32[]) {
      %go = compare %i, %lim {dir=lt}
      return %go
    } do (%i: i32[], %x: f32[1,64], %w: f32[64,64], %b: f32[1,64], %lim: i32[]) {
      %y = dot_general %x, %w {lhs_contract=[1], rhs_contract=[1]}
      %yb = add %y, %b
      %t = tanh %yb
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      return %i1, %t, %w, %b, %lim
    }
  return %x
}
`

func main() {
	iters := flag.Int("iters", 1000, "loop iterations per run")
	runs := flag.Int("runs", 50, "runs per side after a warm-up (the median is reported)")
	steps := flag.Bool("steps", false, "print the time of each step of the llvm plan")
	flag.Parse()
	m := must(tir.Parse("loops.tir", []byte(program)))
	exe, _, err := engine.Compile(m, engine.Config{Target: "cpu"})
	check(err)
	in := cpu.RandomInputs(exe.Entry, 1)
	in[0] = backend.FromInts(in[0].Type(), int64(*iters))
	// A small W keeps the map contracting, so that rounding differences
	// between the sides do not grow over 1000 iterations.
	for i := range in[2].Len() {
		in[2].SetFloat64(i, in[2].Float64At(i)/32)
	}
	lb := must(llvm.Open(llvm.Options{}))
	lx := must(lb.Compile(&backend.Program{Module: exe.Module, Entry: exe.Entry, Target: "cpu"}))
	hlo := must(stablehlo.Lower(exe.Module, stablehlo.Options{Entry: exe.Entry.Name}))
	c := must(must(pjrt.LoadCPU()).NewClient())
	defer c.Close()
	px := must(pjrt.NewBackend(c).Compile(&backend.Program{Module: exe.Module, Entry: exe.Entry, HLO: hlo, Target: "cpu"}))
	want := must(lx.Run(in))[0].Float32s()
	got := must(px.Run(in))[0].Float32s()
	for i := range want {
		if d := want[i] - got[i]; d > 1e-4 || d < -1e-4 {
			fail(fmt.Errorf("llvm and XLA:CPU disagree at %d: %v vs %v", i, want[i], got[i]))
		}
	}
	llvmUS := median(*runs, func() { must(lx.Run(in)) })
	if *steps {
		for _, st := range lx.(*llvm.Executable).StepTimes() {
			fmt.Printf("step %d %-30s %8d calls %10v\n", st.Step, st.What, st.Calls, st.Total)
		}
	}
	xlaUS := median(*runs, func() { must(px.Run(in)) })
	refUS := median(max(*runs/10, 3), func() { must(cpu.Run(exe.Module, exe.Entry, in)) })
	fmt.Printf("while loop, %d iterations of x = tanh(x·Wᵀ + b), f32[1,64]·f32[64,64]: llvm %.0f us (%.2f us/iteration), XLA:CPU %.0f us (%.2f), reference executor %.0f us (%.2f)\n",
		*iters, llvmUS, llvmUS/float64(*iters), xlaUS, xlaUS/float64(*iters), refUS, refUS/float64(*iters))
	fmt.Printf("bench-loops: llvm_us=%.0f xla_us=%.0f reference_us=%.0f llvm_vs_xla=%.2f\n", llvmUS, xlaUS, refUS, llvmUS/xlaUS)
}

// median runs f twice to warm up, then n times, and returns the median
// run's microseconds.
func median(n int, f func()) float64 {
	f()
	f()
	var us []float64
	for range n {
		t := time.Now()
		f()
		us = append(us, float64(time.Since(t).Nanoseconds())/1e3)
	}
	slices.Sort(us)
	return us[len(us)/2]
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
	fmt.Fprintln(os.Stderr, "bench/loops:", err)
	os.Exit(1)
}
