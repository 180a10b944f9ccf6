// Command unet times examples/unet_block.tir (a UNet block: 3x3
// convolutions, group norm, SiLU, a strided convolution down, nearest
// upsampling, a skip connection) on tpucc's llvm backend and on XLA:CPU
// through the PJRT plugin, both compiled from the same module by the one
// compile path (the PJRT side runs the StableHLO tpucc emits), both on all
// of this machine's cores, in one process:
//
//	go run ./bench/unet [-repeat 20] [-rounds 5] [-file examples/unet_block.tir]
//
// Each round times llvm and then XLA (the order reversed every other round),
// -repeat runs each after a warm-up of at least 200 ms; a side's time is the
// median over rounds of the rounds' medians, and the ratio the median of
// the rounds' ratios. The results of the two must agree within 1e-3 of the
// largest magnitude. The last line is, exactly,
//
//	bench-unet: llvm_ms=T xla_ms=T llvm_vs_xla=R
package main

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/backend/llvm"
	_ "github.com/tpucc/tpucc/backend/pjrt" // registers pjrt (XLA:CPU)
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
)

var (
	file    = flag.String("file", "examples/unet_block.tir", "the program timed")
	repeat  = flag.Int("repeat", 20, "timed runs per side and round, after the warm-up")
	nRounds = flag.Int("rounds", 5, "rounds of llvm and XLA, one after the other")
	steps   = flag.Int("steps", 0, "at the end, the N steps of llvm's plan that took longest")
)

func main() {
	flag.Parse()
	src, err := os.ReadFile(*file)
	check(err)
	compileOn := func(name string) *engine.Executable {
		m, err := tir.Parse(*file, src)
		check(err)
		b, err := engine.OpenBackend(name)
		check(err)
		exe, _, err := engine.Compile(m, engine.Config{Backend: b})
		check(err)
		return exe
	}
	ll, xla := compileOn("llvm"), compileOn("pjrt")
	if ll.HLO != xla.HLO {
		fail("the two sides were compiled from different StableHLO")
	}
	args := cpu.RandomInputsWithin(ll.Entry, 1, cpu.InputLimits(ll.Entry))
	a, err := ll.Run(args)
	check(err)
	b, err := xla.Run(args)
	check(err)
	diff, scale := maxDiff(a[0], b[0])
	if diff > 1e-3*scale {
		fail(fmt.Sprintf("llvm and XLA:CPU disagree: max |difference| %g, largest magnitude %g", diff, scale))
	}
	fmt.Printf("%s on %d cores: results agree (max |difference| %.2g of magnitude %.3g)\n", *file, runtime.NumCPU(), diff, scale)
	var tl, tx, ratio []float64
	for i := range max(*nRounds, 1) {
		sides := []*engine.Executable{ll, xla}
		if i%2 == 1 {
			slices.Reverse(sides)
		}
		t := map[*engine.Executable]float64{}
		for _, s := range sides {
			t[s] = timeRun(s, args)
		}
		tl, tx, ratio = append(tl, t[ll]), append(tx, t[xla]), append(ratio, t[ll]/t[xla])
		fmt.Printf("round %d: llvm %.3f ms, XLA:CPU %.3f ms\n", i+1, t[ll]*1e3, t[xla]*1e3)
	}
	printSteps(ll)
	fmt.Printf("bench-unet: llvm_ms=%.3f xla_ms=%.3f llvm_vs_xla=%.2f\n", median(tl)*1e3, median(tx)*1e3, median(ratio))
}

// timeRun runs exe for at least 200 ms, then -repeat times, and returns the
// median seconds of a run.
func timeRun(exe *engine.Executable, args []*backend.Buffer) float64 {
	for t0 := time.Now(); time.Since(t0) < 200*time.Millisecond; {
		_, err := exe.Run(args)
		check(err)
	}
	var ts []float64
	for range *repeat {
		t0 := time.Now()
		_, err := exe.Run(args)
		check(err)
		ts = append(ts, time.Since(t0).Seconds())
	}
	return median(ts)
}

// printSteps writes the -steps steps of the llvm plan that took longest,
// summed over the runs: where its time goes.
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
		per := s.Total / time.Duration(max(s.Calls, 1))
		fmt.Printf("  step %3d %-40s %8.3f ms/call %5.1f%%\n", s.Step, s.What, per.Seconds()*1e3, 100*s.Total.Seconds()/max(all.Seconds(), 1e-12))
	}
}

func maxDiff(a, b *backend.Buffer) (diff, scale float64) {
	x, y := make([]float64, a.Len()), make([]float64, b.Len())
	a.ReadFloat64s(0, x)
	b.ReadFloat64s(0, y)
	for i := range x {
		diff = math.Max(diff, math.Abs(x[i]-y[i]))
		scale = math.Max(scale, math.Abs(x[i]))
	}
	return diff, scale
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func check(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "bench-unet:", msg)
	os.Exit(1)
}
