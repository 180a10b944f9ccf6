// Command fusioncmp compares tpucc's fusion with XLA's under tpucc's cost
// model (target): for each example it prints the number of fusions and
// the HBM bytes and roofline time of our fused program on tpu-v5e and tpu-v6e,
// and, from xla_kernels.py's JSON, the number of fusions in XLA's optimised
// HLO and the bytes they imply: each XLA kernel's operands read once and its
// results written once, at the sizes tpucc's model gives those types
// (row-major, tiled). docs/PERFORMANCE.md records its output.
//
//	go run ./tools/fusioncmp -xla cpu=cpu.json -xla v5e=v5e.json -xla v6e=v6e.json examples/*.tir
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/target"
)

type xlaModule struct {
	Module   string
	Platform string
	Fusions  int
	Kernels  []struct {
		Name, Op, Kind    string
		Results, Operands []string
	}
}

type xlaFlags map[string]string

func (x xlaFlags) String() string { return fmt.Sprint(map[string]string(x)) }
func (x xlaFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want PLATFORM=FILE")
	}
	x[k] = v
	return nil
}

func main() {
	xf := xlaFlags{}
	flag.Var(xf, "xla", "PLATFORM=FILE: xla_kernels.py output (repeatable)")
	flag.Parse()
	xla := map[string]map[string]*xlaModule{} // platform -> example base name -> module
	for pl, file := range xf {
		data, err := os.ReadFile(file)
		if err != nil {
			fail(err)
		}
		var ms []*xlaModule
		if err := json.Unmarshal(data, &ms); err != nil {
			fail(err)
		}
		xla[pl] = map[string]*xlaModule{}
		for _, m := range ms {
			xla[pl][strings.TrimSuffix(filepath.Base(m.Module), ".hlo")] = m
		}
	}
	targets := []*target.Target{target.V5e, target.V6e}
	fmt.Println("| program | target | tpucc fusions | tpucc kernels | tpucc HBM bytes (unfused) | tpucc time (unfused) | XLA:TPU fusions / kernels | XLA:TPU bytes | XLA:CPU fusions / kernels | XLA:CPU bytes |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, file := range flag.Args() {
		base := strings.TrimSuffix(filepath.Base(file), ".tir")
		for _, t := range targets {
			fused, nf, nk, fb, fs := ours(file, t, nil)
			_, _, _, ub, us := ours(file, t, []string{"fuse"})
			_ = fused
			row := []string{base, t.Name(), strconv.Itoa(nf), strconv.Itoa(nk),
				fmt.Sprintf("%d (%d)", fb, ub), fmt.Sprintf("%.2f us (%.2f us)", fs*1e6, us*1e6)}
			pl := strings.TrimPrefix(t.Name(), "tpu-")
			for _, p := range []string{pl, "cpu"} {
				m := xla[p][base]
				if m == nil {
					row = append(row, "-", "-")
					continue
				}
				row = append(row, fmt.Sprintf("%d / %d", m.Fusions, len(m.Kernels)), strconv.FormatInt(xlaBytes(m, t), 10))
			}
			fmt.Println("| " + strings.Join(row, " | ") + " |")
		}
	}
}

// ours compiles file with the default pipeline for t and returns the module,
// its fusions, its kernels (cost-model groups), its HBM bytes and time.
func ours(file string, t *target.Target, disable []string) (*ir.Module, int, int, int64, float64) {
	src, err := os.ReadFile(file)
	if err != nil {
		fail(err)
	}
	m, err := tir.Parse(file, src)
	if err != nil {
		fail(err)
	}
	exe, _, err := engine.Compile(m, engine.Config{Target: t.Name(), Passes: passes.Options{Disable: disable}})
	if err != nil {
		fail(err)
	}
	f := exe.Entry
	n := 0
	f.Body.Walk(func(in *ir.Instr) {
		if in.Op == ir.OpFusion {
			n++
		}
	})
	an, err := target.Analyze(f, t, nil)
	if err != nil {
		fail(err)
	}
	return m, n, len(an.Groups), an.Total.Bytes(), an.Total.Seconds
}

// xlaBytes: every kernel of XLA's entry computation reads its operands and
// writes its results once; async copy-start/copy-done pairs (prefetches between
// memory spaces) are left out.
func xlaBytes(m *xlaModule, t *target.Target) int64 {
	total := int64(0)
	for _, k := range m.Kernels {
		if k.Op == "copy-start" || k.Op == "copy-done" {
			continue
		}
		for _, s := range append(append([]string(nil), k.Operands...), k.Results...) {
			total += t.Bytes(parseType(s))
		}
	}
	return total
}

func parseType(s string) ir.Type {
	dt, dims, _ := strings.Cut(strings.TrimSuffix(s, "]"), "[")
	d, ok := ir.ParseDType(dt)
	if !ok {
		fail(fmt.Errorf("dtype %q", dt))
	}
	var ns []int64
	for _, x := range strings.Split(dims, ",") {
		if x == "" {
			continue
		}
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			fail(err)
		}
		ns = append(ns, n)
	}
	return ir.Tensor(d, ns...)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fusioncmp:", err)
	os.Exit(1)
}
