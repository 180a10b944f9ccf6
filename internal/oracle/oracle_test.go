package oracle

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/target"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// harness finds the XLA oracle or fails the test: a skipped oracle test is a
// failed one. xlacheck.py itself sets --xla_allow_excess_precision=false.
func harness(t *testing.T) *xlacheck.Harness {
	t.Helper()
	h, err := xlacheck.Find()
	if err != nil {
		t.Fatalf("the XLA oracle is not installed: %v\n"+
			"Run `make venv` at the repository root: it installs tools/xlacheck's pinned jax into .venv. "+
			"The oracle test never skips.", err)
	}
	return h
}

// check is one module on its way through both sides.
type check struct {
	name   string // "seed 17", or the module's file
	key    string // names the directory kept on failure
	m      *ir.Module
	hlo    string
	inputs []*backend.Buffer
	want   []*backend.Buffer // the executor's results
	exact  []bool            // per result: compare without tolerance; nil means none
	about  string            // how the inputs were made
	repro  string            // the go test command that runs just this check
}

// prepare runs c.m as written on the executor (the reference), then compiles
// it as tpucc build does — the default pass pipeline, then the lowering — so
// that XLA checks the passes as well as the lowering. The error says which
// step failed. c.m is left as written.
func (c *check) prepare() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	if c.want, err = cpu.Run(c.m, c.m.Entry(), c.inputs); err != nil {
		return fmt.Errorf("backend/cpu.Run failed: %v", err)
	}
	opt, err := tir.Parse(c.name+".tir", []byte(ir.Print(c.m)))
	if err != nil {
		return fmt.Errorf("frontend/tir.Parse of the printed program failed: %v", err)
	}
	// With a TPU target, so that assign-layout runs (and folds transposes into
	// dot_general) as in tpucc build --target tpu-v6e; a program that target
	// refuses (an i64 dot_general) is compiled for the cpu target instead.
	name := "tpu-v6e"
	if target.V6e.Check(opt) != nil {
		name = "cpu"
	}
	exe, _, err := engine.Compile(opt, engine.Config{Target: name, Passes: passes.Options{VerifyEach: true}})
	if err != nil {
		return fmt.Errorf("engine.Compile failed: %v", err)
	}
	// XLA:CPU runs it: the optimised program is lowered as for the cpu
	// target (ragged_dot as a gather and a dot, not chlo.ragged_dot, which
	// only TPU targets get and XLA:CPU does not compile).
	if c.hlo, err = stablehlo.Lower(exe.Module, stablehlo.Options{Entry: exe.Entry.Name, Precision: *flagPrecision}); err != nil {
		return fmt.Errorf("lower/stablehlo.Lower failed: %v", err)
	}
	return nil
}

func (c *check) xlaCase() xlacheck.Case {
	in := make([]*npy.Array, len(c.inputs))
	for i, x := range c.inputs {
		in[i] = npyOf(x)
	}
	return xlacheck.Case{ID: c.name, Module: c.hlo, Inputs: in}
}

// npyOf shares x's storage with an array for the harness: a buffer's bytes
// are exactly .npy's data.
func npyOf(x *backend.Buffer) *npy.Array {
	return &npy.Array{DType: x.Type().DType.String(), Shape: x.Type().Dims(), Data: x.Bytes()}
}

// bufferOf reads an array the harness returned as a buffer, through the
// public .npy reader.
func bufferOf(a *npy.Array) (*backend.Buffer, error) {
	var b bytes.Buffer
	if err := npy.Write(&b, a); err != nil {
		return nil, err
	}
	return backend.ReadNPY(&b)
}

// compare judges XLA's result for c; it returns one message per problem.
func (c *check) compare(r xlacheck.Result) []string {
	if !r.OK {
		return []string{fmt.Sprintf("XLA refused the module at stage %q:\n%s", r.Stage, r.Error)}
	}
	gots := make([]*backend.Buffer, len(r.Outputs))
	for i, a := range r.Outputs {
		got, err := bufferOf(a)
		if err != nil {
			return []string{fmt.Sprintf("result %d: unreadable XLA output: %v", i, err)}
		}
		gots[i] = got
	}
	return c.compareResults(gots)
}

// compareResults judges results computed for c against the executor's.
func (c *check) compareResults(gots []*backend.Buffer) []string {
	if len(gots) != len(c.want) {
		return []string{fmt.Sprintf("XLA returned %d results, the executor %d", len(gots), len(c.want))}
	}
	var msgs []string
	for i, got := range gots {
		kind, cmp := "approximate", Compare(c.want[i], got)
		if c.exact != nil && c.exact[i] {
			kind, cmp = "exact", CompareExact(c.want[i], got)
		}
		if cmp != nil {
			msgs = append(msgs, fmt.Sprintf("result %d (%s, %s): %v", i, c.want[i].Type(), kind, cmp))
		}
	}
	return msgs
}

// report writes c's files where they outlive the test and returns the
// failure message: what differed, the program, the files and the commands
// that reproduce it.
func (c *check) report(h *xlacheck.Harness, problems []string, r *xlacheck.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", c.name, strings.Join(problems, "\n  "))
	fmt.Fprintf(&b, "program (%s):\n%s", c.about, ir.Print(c.m))
	dir := filepath.Join(os.TempDir(), "tpucc-oracle-"+c.key)
	if err := c.keep(dir, r); err != nil {
		fmt.Fprintf(&b, "could not keep the files: %v\n", err)
		return b.String()
	}
	inputs := make([]string, len(c.inputs))
	for i := range inputs {
		inputs[i] = filepath.Join(dir, fmt.Sprintf("input%d.npy", i))
	}
	fmt.Fprintf(&b, "files kept in %s (program.tir, module.hlo, input*.npy, executor*.npy, xla*.npy)\n", dir)
	fmt.Fprintf(&b, "reproduce:\n  %s\n  %s\n", c.repro, h.ReproCommand(filepath.Join(dir, "module.hlo"), inputs, filepath.Join(dir, "xla-out")))
	return b.String()
}

func (c *check) keep(dir string, r *xlacheck.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, data []byte) error { return os.WriteFile(filepath.Join(dir, name), data, 0o644) }
	if err := write("program.tir", []byte(ir.Print(c.m))); err != nil {
		return err
	}
	if err := write("module.hlo", []byte(c.hlo)); err != nil {
		return err
	}
	for i, x := range c.inputs {
		if err := npy.WriteFile(filepath.Join(dir, fmt.Sprintf("input%d.npy", i)), npyOf(x)); err != nil {
			return err
		}
	}
	for i, x := range c.want {
		if err := npy.WriteFile(filepath.Join(dir, fmt.Sprintf("executor%d.npy", i)), npyOf(x)); err != nil {
			return err
		}
	}
	if r != nil {
		for i, a := range r.Outputs {
			if err := npy.WriteFile(filepath.Join(dir, fmt.Sprintf("xla%d.npy", i)), a); err != nil {
				return err
			}
		}
	}
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// runAll prepares every check, runs the prepared ones through XLA in one
// harness call, and fails t once per check that goes wrong. It returns how
// many checks failed.
func runAll(t *testing.T, h *xlacheck.Harness, checks []*check) int {
	t.Helper()
	failed := 0
	var ready []*check
	for _, c := range checks {
		if err := c.prepare(); err != nil {
			failed++
			t.Errorf("%s", c.report(h, []string{err.Error()}, nil))
			continue
		}
		ready = append(ready, c)
	}
	cases := make([]xlacheck.Case, len(ready))
	for i, c := range ready {
		cases[i] = c.xlaCase()
	}
	results := runCases(t, h, cases)
	for i, c := range ready {
		r := results[i]
		if problems := c.compare(r); problems != nil {
			failed++
			msg := c.report(h, problems, &r)
			if !r.OK {
				msg += "StableHLO module:\n" + c.hlo
			}
			t.Errorf("%s", msg)
		}
	}
	return failed
}

// runCases runs cases in one harness process. A case that crashes XLA kills
// the process; it is reported (stage "crash") and the cases it never reached
// run in a fresh process.
func runCases(t *testing.T, h *xlacheck.Harness, cases []xlacheck.Case) []xlacheck.Result {
	t.Helper()
	var out []xlacheck.Result
	for len(cases) > 0 {
		results, err := h.Run(cases)
		if err == nil {
			return append(out, results...)
		}
		crashed := -1
		for i, r := range results {
			if r.Stage == "crash" {
				crashed = i
				break
			}
		}
		if crashed < 0 || len(results) != len(cases) {
			t.Fatalf("the XLA harness failed: %v", err)
		}
		out = append(out, results[:crashed+1]...)
		out[len(out)-1].Error += "\n" + err.Error()
		cases = cases[crashed+1:]
	}
	return out
}
