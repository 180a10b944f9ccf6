package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/bench/limits"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/target"
)

// inputs draws the layer's arguments: x in [-1,1), each weight within
// 1/sqrt(fan-in), so activations stay near 1 at every size. The weights
// are then copied into storage kept for long (backend.NewLongLived), as a
// loaded model's stacked weights are.
func inputs(s shape, f *ir.Func) []*backend.Buffer {
	lims := []float64{1, 1 / math.Sqrt(float64(s.H)), 1 / math.Sqrt(float64(s.H)), 1 / math.Sqrt(float64(s.H)), 1 / math.Sqrt(float64(s.F))}
	args := cpu.RandomInputsWithin(f, 1, lims)
	for i, a := range args[1:] {
		if a == nil { // over the memory limit: RandomInputsWithin left it out
			continue
		}
		w := backend.NewLongLived(a.Type())
		copy(w.Bytes(), a.Bytes())
		args[1+i] = w
	}
	return args
}

// timeRun runs exe once to warm up, then *repeat times, and returns the
// median time and the first result's elements.
func timeRun(exe *engine.Executable, args []*backend.Buffer) (float64, []float64) {
	run, first := timeOnce(exe, args)
	var ts []float64
	for range *repeat {
		ts = append(ts, run())
	}
	return median(ts), first
}

// paired is timePaired's result: the runs' median seconds, the limits and
// bound measured beside them (medians), and each run's bound over its
// time, in the order run, with their median ofBound.
type paired struct {
	seconds, bound, ofBound float64
	ratios                  []float64
	limits                  limits.Limits
}

// timePaired times *repeat runs (run returns a run's seconds), measuring
// the machine's limits (lim) right after each: a run's fraction of its
// bound is taken against the limits of the same minute. One STREAM
// figure for all the runs, taken after them, put Gemma 4's step at 0.536
// and 0.557 of its bound when STREAM read 48.9 and 56.4 GB/s, and at
// 0.932 beside 34.7, the step's own time 0.094-0.116 s throughout
// (2026-12-07, 20:38-20:41).
func timePaired(run func() float64, lim func() (limits.Limits, error), bound func(limits.Limits) float64) paired {
	var p paired
	var ts, bounds, bws, peaks []float64
	for range *repeat {
		t := run()
		l, err := lim()
		check(err)
		b := bound(l)
		ts, bounds = append(ts, t), append(bounds, b)
		bws, peaks = append(bws, l.Bandwidth), append(peaks, l.FMAPeak)
		p.ratios = append(p.ratios, b/t)
	}
	p.seconds, p.bound, p.ofBound = median(ts), median(bounds), median(p.ratios)
	p.limits = limits.Limits{Bandwidth: median(bws), FMAPeak: median(peaks)}
	return p
}

// timeOnce returns a function that runs exe on args and returns its
// seconds, after one warm-up run whose first result's elements it
// returns.
func timeOnce(exe *engine.Executable, args []*backend.Buffer) (func() float64, []float64) {
	out, err := exe.Run(args)
	check(err)
	first := make([]float64, out[0].Len())
	out[0].ReadFloat64s(0, first)
	return func() float64 {
		t0 := time.Now()
		_, err := exe.Run(args)
		check(err)
		return time.Since(t0).Seconds()
	}, first
}

// median of xs, xs left as they are.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// fmtList is xs as "a b c" with three decimals.
func fmtList(xs []float64) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.3f", x)
	}
	return b.String()
}

// venvPython is the interpreter of a venv that make creates.
func venvPython(venv string) string {
	p := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(p); err != nil {
		check(fmt.Errorf("%s is missing: run make %s first", p, map[string]string{".venv": "venv", ".venv-tpu": "venv-tpu"}[venv]))
	}
	return p
}

// xlaTime has XLA:CPU (tools/xlacheck's time mode) run the dense program's
// StableHLO on the same inputs.
func xlaTime(exe *engine.Executable, args []*backend.Buffer) float64 {
	dir, err := os.MkdirTemp("", "bench-moe-")
	check(err)
	defer os.RemoveAll(dir)
	hlo := filepath.Join(dir, "dense.hlo")
	check(os.WriteFile(hlo, []byte(exe.HLO), 0o600))
	cmd := []string{"tools/xlacheck/xlacheck.py", "time", hlo, "--repeat", fmt.Sprint(*repeat)}
	for i, a := range args {
		p := filepath.Join(dir, fmt.Sprintf("arg%d.npy", i))
		check(backend.WriteNPYFile(p, a))
		cmd = append(cmd, "--input", p)
	}
	out, err := exec.Command(venvPython(".venv"), cmd...).Output()
	check(peerError(err))
	var r struct {
		MedianS float64 `json:"median_s"`
	}
	check(json.Unmarshal(out, &r))
	return r.MedianS
}

// tpuCosts prints, for v5e and v6e, the cost model's time of the dense and
// routed programs and XLA:TPU's own cost analysis of both.
func tpuCosts(s shape) {
	dir, err := os.MkdirTemp("", "bench-moe-tpu-")
	check(err)
	defer os.RemoveAll(dir)
	for _, gen := range []struct{ target, topo string }{{"tpu-v5e", "v5e:2x2"}, {"tpu-v6e", "v6e:2x2"}} {
		t, err := engine.LookupTarget(gen.target)
		check(err)
		var model [2]float64
		var files []string
		for i, disable := range [][]string{{"moe-route"}, nil} {
			exe := build(s.dense(), gen.target, disable...)
			an, err := target.Analyze(exe.Entry, t, nil)
			check(err)
			model[i] = an.Total.Seconds
			// XLA:TPU gets the program lowered for the TPU (chlo.ragged_dot).
			hlo, err := stablehlo.Lower(exe.Module, stablehlo.Options{Entry: exe.Entry.Name, NativeRaggedDot: true})
			check(err)
			p := filepath.Join(dir, fmt.Sprintf("%s-%d.hlo", gen.target, i))
			check(os.WriteFile(p, []byte(hlo), 0o600))
			files = append(files, p)
		}
		xla := xlaTPUCost(gen.topo, files)
		fmt.Printf("  %s  cost model: dense %.1f us, routed %.1f us (%.1fx);  XLA:TPU cost analysis: FLOPs dense %.3g, routed %.3g (%.1fx), bytes dense %.3g, routed %.3g, optimal_seconds dense %.3g, routed %.3g\n",
			gen.target, model[0]*1e6, model[1]*1e6, model[0]/model[1], xla[0].FLOPs, xla[1].FLOPs, xla[0].FLOPs/xla[1].FLOPs,
			xla[0].Bytes, xla[1].Bytes, xla[0].Seconds, xla[1].Seconds)
	}
}

// xlaCost is XLA:TPU's cost analysis of one module (tools/xlacheck's
// tpu_compile.py reports it). Its optimal_seconds of a chlo.ragged_dot
// program comes out negative (libtpu 0.0.42.1): it is printed as given, and
// the FLOPs are the figure to compare.
type xlaCost struct {
	OK      bool    `json:"ok"`
	Error   string  `json:"error"`
	FLOPs   float64 `json:"flops"`
	Bytes   float64 `json:"bytes_accessed"`
	Seconds float64 `json:"optimal_seconds"`
}

func xlaTPUCost(topo string, files []string) []xlaCost {
	args := append([]string{"tools/xlacheck/tpu_compile.py", "--json", "--topology", topo}, files...)
	out, err := exec.Command(venvPython(".venv-tpu"), args...).Output()
	if _, exit := err.(*exec.ExitError); !exit || len(out) == 0 {
		check(peerError(err))
	}
	var costs []xlaCost
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var r xlaCost
		check(dec.Decode(&r))
		if !r.OK {
			check(fmt.Errorf("XLA:TPU did not compile: %s", r.Error))
		}
		costs = append(costs, r)
	}
	if len(costs) != len(files) {
		check(fmt.Errorf("tpu_compile.py gave %d results for %d modules", len(costs), len(files)))
	}
	return costs
}

// peerError adds a failed peer's standard error to its error.
func peerError(err error) error {
	if ee, ok := err.(*exec.ExitError); ok {
		return fmt.Errorf("%v: %s", err, ee.Stderr)
	}
	return err
}
