package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/backend/llvm"
	"github.com/tpucc/tpucc/bench/block"
	"github.com/tpucc/tpucc/bench/limits"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// workload is one program; module returns a fresh copy (compiling consumes it).
type workload struct {
	name   string
	module func() *ir.Module
	// ofLimit: the workload is reported as a fraction of a machine limit,
	// measured again in each round (bench/limits), beside its times.
	ofLimit bool
	// into: each run writes its result into the same storage, handed back
	// every run (engine.Executable.RunInto), as STREAM writes into arrays
	// it made once; -fresh-results times it with Run's new storage instead.
	into bool
}

func workloads() []workload {
	all := []workload{
		{"mlp", func() *ir.Module { return parseFile("examples/mlp.tir") }, false, false},
		{"block", blockModule, false, false},
		{"chain", func() *ir.Module {
			return parse("chain", `func @chain(%x: f32[4096,4096], %bias: f32[4096], %res: f32[4096,4096]) -> f32[4096,4096] {
  %s = sigmoid %x
  %m = mul %x, %s
  %b = add %m, %bias
  %y = add %b, %res
  return %y
}
`)
		}, true, true},
		{"layernorm", func() *ir.Module {
			return parse("layernorm", `func @layernorm(%x: f32[4096,4096], %scale: f32[4096], %bias: f32[4096]) -> f32[4096,4096] {
  %y = layer_norm %x, %scale, %bias {eps=1e-05}
  return %y
}
`)
		}, false, false},
		{"matmul", func() *ir.Module {
			return parse("matmul", `func @matmul(%a: f32[1024,1024], %b: f32[1024,1024]) -> f32[1024,1024] {
  %y = matmul %a, %b
  return %y
}
`)
		}, true, false},
	}
	if *only == "" {
		return all
	}
	var out []workload
	for _, w := range all {
		if slices.Contains(strings.Split(*only, ","), w.name) {
			out = append(out, w)
		}
	}
	return out
}

func parseFile(path string) *ir.Module {
	src, err := os.ReadFile(path)
	check(err)
	m, err := tir.Parse(path, src)
	check(err)
	return m
}

func parse(name, src string) *ir.Module {
	m, err := tir.Parse(name+".tir", []byte(src))
	check(err)
	return m
}

// blockModule traces bench/block's decoder block with 4 heads at batch 8 x
// sequence 128 x width 256 (MLP 512), its parameters in peers.py's order.
func blockModule() *ir.Module {
	shapes := [][]int64{{8, 128, 256}, {256}, {256, 256}, {256, 256}, {256, 256}, {256, 256}, {64}, {64}, {256}, {256, 512}, {256, 512}, {512, 256}}
	names := make([]string, len(shapes))
	types := make([]ir.Type, len(shapes))
	for i, s := range shapes {
		names[i], types[i] = fmt.Sprintf("a%d", i), ir.Tensor(ir.F32, s...)
	}
	m, err := tensor.Trace("block", names, types, func(p []*tensor.Tensor) ([]*tensor.Tensor, error) {
		return []*tensor.Tensor{block.WithHeads(4)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11])}, nil
	})
	check(err)
	return m
}

// measure times w on the backend and, unless skipped, on its peers, in
// -rounds rounds. Each round times tpucc and each peer -repeat times, in
// reverse order every other round, so that each ratio compares runs made
// minutes apart at most on a machine whose speed drifts by tens of percent:
// the row's times are the medians over rounds, and its ratios the medians of
// the rounds' ratios.
func measure(w workload, name string) row {
	m := w.module()
	args := cpu.RandomInputsWithin(m.Entry(), 1, cpu.InputLimits(m.Entry()))
	exe := compileOn(m, name)
	out, err := exe.Run(args)
	check(err)
	var r row
	if !*skipRef && name != "reference" {
		r.reference = timeRun(compileOn(w.module(), "reference"), args, nil, 1, false) // seconds a run: no warm-up
	}
	var into []*backend.Buffer
	if w.into && !*freshResults {
		into = []*backend.Buffer{backend.New(out[0].Type())}
	}
	steps := []func(*row){func(rr *row) { rr.tpucc = timeRun(exe, args, into, *repeat, true) }}
	ortOut := "" // ORT's result, written by each of its rounds
	if !*skipPeers {
		dir, err := os.MkdirTemp("", "bench-cpu-")
		check(err)
		defer os.RemoveAll(dir)
		var inputs []string
		for i, a := range args {
			p := filepath.Join(dir, fmt.Sprintf("arg%d.npy", i))
			check(backend.WriteNPYFile(p, a))
			inputs = append(inputs, "--input", p)
		}
		hlo := filepath.Join(dir, "module.hlo")
		check(os.WriteFile(hlo, []byte(exe.HLO), 0o600))
		ortOut = filepath.Join(dir, "ort.npy")
		rep := fmt.Sprint(*repeat)
		steps = append(steps,
			func(rr *row) {
				rr.xla = peer(append([]string{"tools/xlacheck/xlacheck.py", "time", hlo, "--repeat", rep}, inputs...))
			},
			func(rr *row) {
				rr.ort = peer(append([]string{"bench/cpu/peers.py", "ort", w.name, "--repeat", rep, "--out", ortOut}, inputs...))
			})
		if w.name == "matmul" {
			steps = append(steps, func(rr *row) { rr.sgemm = peer([]string{"bench/cpu/peers.py", "sgemm", "1024", "--repeat", rep}) },
				func(rr *row) { rr.mkl = mklPeer(1024, 1024, 1024, false, *repeat) })
		}
	}
	if w.ofLimit {
		steps = append(steps, func(rr *row) {
			l, err := limits.Again()
			check(err)
			rr.lims = []limits.Limits{l}
		})
	}
	var rounds []row
	for i := range max(*nRounds, 1) {
		var rr row
		for k := range steps {
			if i%2 == 1 {
				k = len(steps) - 1 - k
			}
			steps[k](&rr)
		}
		rounds = append(rounds, rr)
	}
	printSteps(w.name, exe)
	if ortOut != "" {
		r.agreement = agreement(out[0], ortOut)
	}
	return combine(r, rounds)
}

// combine fills r with the medians over rounds: of each time, and of the
// rounds' tpucc/peer ratios.
func combine(r row, rounds []row) row {
	med := func(f func(row) float64) float64 {
		var v []float64
		for _, rr := range rounds {
			v = append(v, f(rr))
		}
		return median(v)
	}
	r.tpucc = med(func(x row) float64 { return x.tpucc })
	for _, rr := range rounds {
		r.rounds = append(r.rounds, rr.tpucc)
	}
	r.xla = med(func(x row) float64 { return x.xla })
	r.ort = med(func(x row) float64 { return x.ort })
	r.sgemm = med(func(x row) float64 { return x.sgemm })
	r.mkl = med(func(x row) float64 { return x.mkl })
	for _, rr := range rounds {
		if rr.mkl > 0 {
			r.vsMKL = append(r.vsMKL, rr.mkl/rr.tpucc)
		}
	}
	for _, rr := range rounds {
		r.lims = append(r.lims, rr.lims...)
	}
	for _, rr := range rounds {
		if rr.xla > 0 && rr.ort > 0 {
			r.vsXLA = append(r.vsXLA, rr.tpucc/rr.xla)
			r.vsORT = append(r.vsORT, rr.tpucc/rr.ort)
		}
	}
	return r
}

func compileOn(m *ir.Module, name string) *engine.Executable {
	b, err := engine.OpenBackend(name)
	check(err)
	exe, _, err := engine.Compile(m, engine.Config{Backend: b})
	check(err)
	return exe
}

// timeRun warms up (when warm), then runs exe n times, and returns the
// median time. The peers each run in a new process that has just been busy
// for a second or more (importing, reading its inputs, compiling) before
// its one warm-up run and its timed ones (xlacheck.py time, peers.py).
// tpucc's process sits idle while they run, and on this VM a process that
// was idle for a second or more runs slowly for its next 40-70 ms: the
// chain took 6-11 ms a run for its first 4-10 runs after 3 s of sleep or
// after a peer, 4.0-4.5 ms from then on (2026-12-05). So the warm-up runs
// exe for at least warmUp, as the peers' own set-up does, before timing.
// into, when not nil, is the storage every run writes its results into.
func timeRun(exe *engine.Executable, args, into []*backend.Buffer, n int, warm bool) float64 {
	for t0 := time.Now(); warm; warm = time.Since(t0) < warmUp {
		_, err := exe.RunInto(into, args)
		check(err)
	}
	var ts []float64
	for range n {
		t0 := time.Now()
		_, err := exe.RunInto(into, args)
		check(err)
		ts = append(ts, time.Since(t0).Seconds())
	}
	return median(ts)
}

// warmUp is the least time timeRun's warm-up runs for.
const warmUp = 200 * time.Millisecond

// peer runs a Python peer in .venv-bench and returns its median_s.
func peer(args []string) float64 {
	py := filepath.Join(".venv-bench", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		check(fmt.Errorf("%s is missing: run make bench-cpu (or make venv-bench)", py))
	}
	out, err := exec.Command(py, args...).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		err = fmt.Errorf("%s: %v: %s", args[0], err, ee.Stderr)
	}
	check(err)
	var r struct {
		MedianS float64 `json:"median_s"`
	}
	check(json.Unmarshal(out, &r))
	return r.MedianS
}

// agreement compares tpucc's result with ONNX Runtime's: the largest
// difference relative to the largest magnitude.
func agreement(got *backend.Buffer, ortFile string) string {
	want, err := backend.ReadNPYFile(ortFile)
	check(err)
	if got.Len() != want.Len() {
		return fmt.Sprintf("DIFFERENT SHAPES %s vs %s", got.Type(), want.Type())
	}
	g, w := make([]float64, got.Len()), make([]float64, want.Len())
	got.ReadFloat64s(0, g)
	want.ReadFloat64s(0, w)
	diff, scale := 0.0, 0.0
	for i := range w {
		diff = math.Max(diff, math.Abs(g[i]-w[i]))
		scale = math.Max(scale, math.Abs(w[i]))
	}
	return fmt.Sprintf("max |diff| / max |value| = %.1e", diff/scale)
}

// printSteps prints the -steps longest steps of exe's plan when it runs on
// the llvm backend: time per call over its runs (the warm-up's included)
// and share of all steps' time.
func printSteps(name string, exe *engine.Executable) {
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
	fmt.Fprintf(os.Stderr, "%s: the %d longest of %d steps\n", name, min(*steps, len(st)), len(st))
	for _, s := range st[:min(*steps, len(st))] {
		per := time.Duration(0)
		if s.Calls > 0 {
			per = s.Total / time.Duration(s.Calls)
		}
		fmt.Fprintf(os.Stderr, "  %4d %-6s %-32s %10.3f ms/call %5.1f%%\n", s.Step, s.Kernel, s.What, per.Seconds()*1e3, 100*s.Total.Seconds()/max(all.Seconds(), 1e-12))
	}
}

// compareInto times w's program with a new result per run (Run) and with
// one storage handed back (RunInto), alternating run by run so that both
// see the same load, and prints the medians and the minor page faults per
// run of each (-compare-into).
func compareInto(w workload, name string) {
	m := w.module()
	args := cpu.RandomInputsWithin(m.Entry(), 1, cpu.InputLimits(m.Entry()))
	exe := compileOn(m, name)
	out, err := exe.Run(args)
	check(err)
	into := []*backend.Buffer{backend.New(out[0].Type())}
	timeRun(exe, args, nil, 1, true)
	var fresh, given []float64
	var faults [2]int64
	for range *repeat * *nRounds {
		for k, in := range [][]*backend.Buffer{nil, into} {
			f0 := minorFaults()
			t0 := time.Now()
			_, err := exe.RunInto(in, args)
			check(err)
			d := time.Since(t0).Seconds()
			faults[k] += minorFaults() - f0
			if k == 0 {
				fresh = append(fresh, d)
			} else {
				given = append(given, d)
			}
		}
	}
	n := float64(len(fresh))
	fmt.Printf("%s, %d runs each, alternated: Run %.3f ms (%.0f minor faults a run), RunInto %.3f ms (%.0f); RunInto/Run %.3f\n",
		w.name, len(fresh), median(fresh)*1e3, float64(faults[0])/n, median(given)*1e3, float64(faults[1])/n, median(given)/median(fresh))
}

// minorFaults is the process's minor page faults so far.
func minorFaults() int64 {
	var u syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &u))
	return u.Minflt
}
