// Package hlosuite runs the StableHLO interpreter test suite
// (openxla/stablehlo's stablehlo/tests/interpret/*.mlir, vendored under
// testdata/stablehlo-interpret) on a tpucc backend: each test function is
// imported by frontend/stablehlo in test mode, run, and its check.expect_*
// ops evaluated on the results.
package hlosuite

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/stablehlo"
	"github.com/tpucc/tpucc/ir"
)

// Runner runs function f of m on args.
type Runner func(m *ir.Module, f *ir.Func, args []*backend.Buffer) ([]*backend.Buffer, error)

// Status is a test's outcome.
type Status int

const (
	Passed      Status = iota
	Failed             // a wrong result, or a run that failed
	Unsupported        // the test uses an op, form or dtype tpucc lacks, or has no checks
)

// Outcome is one test function's result.
type Outcome struct {
	Pos    string // FILE:LINE of the test function
	Name   string
	Status Status
	Reason string
}

// Summary counts outcomes.
type Summary struct{ Passed, Failed, Unsupported, Total int }

// Add counts o.
func (s *Summary) Add(o Outcome) {
	s.Total++
	switch o.Status {
	case Passed:
		s.Passed++
	case Failed:
		s.Failed++
	default:
		s.Unsupported++
	}
}

// Line is the summary line the command prints last.
func (s Summary) Line() string {
	return fmt.Sprintf("stablehlo-interpret: passed=%d failed=%d unsupported=%d total=%d", s.Passed, s.Failed, s.Unsupported, s.Total)
}

// Files expands the arguments: a directory stands for its *.mlir files, sorted.
func Files(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		ms, err := filepath.Glob(filepath.Join(a, "*.mlir"))
		if err != nil {
			return nil, err
		}
		sort.Strings(ms)
		out = append(out, ms...)
	}
	return out, nil
}

// RunFile runs every test function of one file.
func RunFile(path string, run Runner) ([]Outcome, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Outcome
	for _, c := range stablehlo.SplitTests(src) {
		if len(c.Tests) == 0 {
			continue
		}
		t, err := stablehlo.ParseTest(path, c.Src)
		for i, name := range c.Tests {
			o := Outcome{Pos: fmt.Sprintf("%s:%d", path, c.Lines[i]), Name: name}
			switch {
			case err != nil:
				o.Status, o.Reason = Unsupported, strings.TrimPrefix(err.Error(), path+":")
			case len(t.Checks[name]) == 0:
				o.Status, o.Reason = Unsupported, "no check.expect_eq or expect_almost_eq op to evaluate"
			default:
				o.Status, o.Reason = runTest(t, name, run)
			}
			out = append(out, o)
		}
	}
	return out, nil
}

func runTest(t *stablehlo.Tests, name string, run Runner) (Status, string) {
	m, f := t.Module, t.Module.Func(name)
	var args []*backend.Buffer
	if p := t.Parallel[name]; p != nil {
		outs, err := runParallel(m, p)
		if err != nil {
			return Failed, fmt.Sprintf("%d:%d: interpreter.run_parallel: %v", p.Pos.Line, p.Pos.Col, err)
		}
		args = outs
	}
	res, err := run(m, f, append(args, hoist(f)...))
	if err != nil {
		return Failed, "run: " + err.Error()
	}
	for _, c := range t.Checks[name] {
		if msg := compare(res[c.Got], res[c.Want], c); msg != "" {
			return Failed, fmt.Sprintf("%d:%d: %s", c.Pos.Line, c.Pos.Col, msg)
		}
	}
	return Passed, ""
}

// runParallel runs p's programs on the reference executor's process grid
// (cpu.RunGrid) and returns every process's results, in process order.
func runParallel(m *ir.Module, p *stablehlo.Parallel) ([]*backend.Buffer, error) {
	fs := make([][]*ir.Func, len(p.Programs))
	args := make([][][]*backend.Buffer, len(p.Programs))
	next := 0
	for r, row := range p.Programs {
		for _, name := range row {
			f := m.Func(name)
			var as []*backend.Buffer
			for _, q := range f.Params {
				as = append(as, literalBuffer(q.Type, p.Inputs[next]))
				next++
			}
			fs[r], args[r] = append(fs[r], f), append(args[r], as)
		}
	}
	res, err := cpu.RunGrid(m, fs, args)
	if err != nil {
		return nil, err
	}
	var out []*backend.Buffer
	for _, row := range res {
		for _, rs := range row {
			out = append(out, rs...)
		}
	}
	return out, nil
}

// compare evaluates one check as the upstream interpreter does: equality
// (NaN equal to NaN), or |got-want| <= tolerance with NaNs and infinities
// matching exactly.
func compare(got, want *backend.Buffer, c stablehlo.Check) string {
	n := want.Len()
	if c.Close {
		return compareULP(got, want, c)
	}
	if want.Type().DType.IsComplex() {
		return compareComplex(got, want, c)
	}
	if !want.Type().DType.IsFloat() {
		g, w := make([]int64, n), make([]int64, n)
		got.ReadInt64s(0, g)
		want.ReadInt64s(0, w)
		for i := range w {
			if g[i] != w[i] && want.Type().DType == ir.U64 { // bit patterns: print them unsigned
				return fmt.Sprintf("element %d is %d, want %d", i, uint64(g[i]), uint64(w[i]))
			}
			if g[i] != w[i] {
				return fmt.Sprintf("element %d is %d, want %d", i, g[i], w[i])
			}
		}
		return ""
	}
	g, w := make([]float64, n), make([]float64, n)
	got.ReadFloat64s(0, g)
	want.ReadFloat64s(0, w)
	for i := range w {
		if !closeEnough(g[i], w[i], c) {
			return fmt.Sprintf("element %d is %v, want %v", i, g[i], w[i])
		}
	}
	return ""
}

// closeEnough compares one float as the check asks.
func closeEnough(g, w float64, c stablehlo.Check) bool {
	if g == w || math.IsNaN(g) && math.IsNaN(w) {
		return true
	}
	finite := !math.IsInf(g, 0) && !math.IsInf(w, 0) && !math.IsNaN(g) && !math.IsNaN(w)
	return c.Almost && finite && math.Abs(g-w) <= c.Tolerance
}

// compareComplex compares complex elements part by part, each as a float.
func compareComplex(got, want *backend.Buffer, c stablehlo.Check) string {
	for i := range want.Len() {
		g, w := got.Complex128At(i), want.Complex128At(i)
		if !closeEnough(real(g), real(w), c) || !closeEnough(imag(g), imag(w), c) {
			return fmt.Sprintf("element %d is %v, want %v", i, g, w)
		}
	}
	return ""
}

// compareULP evaluates check.expect_close: each float (each part of a
// complex) of got is MinULP to MaxULP steps of its type from want's, a
// step being one bit pattern of the type; equal values (NaN and NaN, -0
// and +0) are 0 steps apart, a NaN and a number are never close.
func compareULP(got, want *backend.Buffer, c stablehlo.Check) string {
	part := want.Type().DType.ComplexPart()
	size := part.Bits() / 8
	gb, wb := got.Bytes(), want.Bytes()
	for i := 0; i < len(wb); i += size {
		d, ok := ulps(bitsAt(gb, i, size), bitsAt(wb, i, size), part)
		if !ok || d < c.MinULP || d > c.MaxULP {
			elem := i / (want.Type().DType.Bits() / 8)
			if !ok {
				return fmt.Sprintf("element %d: a NaN against a number", elem)
			}
			return fmt.Sprintf("element %d differs from the expected value by %d ulps of %s, want %d to %d", elem, d, part, c.MinULP, c.MaxULP)
		}
	}
	return ""
}

func bitsAt(b []byte, i, size int) uint64 {
	var v uint64
	for k := range size {
		v |= uint64(b[i+k]) << (8 * k)
	}
	return v
}

// ulpExponents are the exponent fields of the float types expect_close reads.
var ulpExponents = map[ir.DType]uint64{ir.F16: 0x7c00, ir.BF16: 0x7f80, ir.F32: 0x7f800000, ir.F64: 0x7ff0000000000000}

// ulps is the number of bit patterns of dt between two floats:
// sign-magnitude patterns mapped onto a line where -0 and +0 meet.
func ulps(g, w uint64, dt ir.DType) (int64, bool) {
	sign := uint64(1) << (dt.Bits() - 1)
	exp := ulpExponents[dt]
	isNaN := func(x uint64) bool { return x&^sign&exp == exp && x&^sign&^exp != 0 }
	if isNaN(g) || isNaN(w) {
		return 0, isNaN(g) && isNaN(w)
	}
	line := func(x uint64) int64 {
		if x&sign != 0 {
			return -int64(x &^ sign)
		}
		return int64(x)
	}
	d := line(g) - line(w)
	return max(d, -d), true
}
