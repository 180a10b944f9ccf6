package passes_test

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/golden"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
)

// goldenDirs are the stages under testdata/golden/passes: one per pass, and
// default for the whole pipeline.
var goldenDirs = []string{"canonicalize", "fold-constants", "cse", "dce", "default", "assign-layout", "fuse", "moe-route", "contract", "licm"}

// TestGolden runs every case of testdata/golden/passes/<dir>. A case's comment
// names its pipeline ("pipeline: cse,dce", or "pipeline: default"); in.tir is
// the input, whose canonical print must round-trip (print -> parse -> print);
// the pipeline runs with VerifyEach and the reference executor's evaluator
// (cpu.Folder), so folded values are the executor's, and with the target a
// "target: tpu-v6e" line names (engine.LookupTarget; none without one). The test produces
// out.tir only when the printed output differs from the canonical print of the
// input (in.tir may spell a literal longhand, as cse/constants does), so an archive without out.tir asserts "must not change",
// and stats (the rewrite counters) whenever a rule fired. A "numbers: 1e-6"
// line also runs the input and the output on the reference executor with
// the same random inputs and requires them to agree within that relative
// tolerance (0: exactly).
func TestGolden(t *testing.T) {
	for _, dir := range goldenDirs {
		t.Run(dir, func(t *testing.T) {
			golden.Run(t, filepath.Join("..", "testdata", "golden", "passes", dir), runGoldenCase)
		})
	}
}

func runGoldenCase(t *testing.T, c *golden.Case) map[string]string {
	src, ok := c.Input("in.tir")
	if !ok {
		t.Fatal("no in.tir section")
	}
	m, err := tir.Parse("in.tir", []byte(src))
	if err != nil {
		t.Fatalf("parse in.tir: %v", err)
	}
	printed := ir.Print(m)
	m2, err := tir.Parse("printed.tir", []byte(printed))
	if err != nil {
		t.Fatalf("parse of the printed input: %v", err)
	}
	if again := ir.Print(m2); again != printed {
		t.Fatalf("print -> parse -> print is not the identity:\n%s\nthen\n%s", printed, again)
	}

	pipeline := goldenPipeline(t, c.Directive("pipeline"))
	var st passes.Stats
	opts := passes.Options{VerifyEach: true, Eval: cpu.Folder{}, Stats: &st}
	if name := c.Directive("target"); name != "" {
		target, err := engine.LookupTarget(name)
		if err != nil {
			t.Fatal(err)
		}
		opts.Target = target
	}
	if err := passes.Run(m, pipeline, opts); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	if tol := c.Directive("numbers"); tol != "" {
		sameNumbers(t, m2, m, tol)
	}
	out := map[string]string{}
	if got := ir.Print(m); got != printed {
		out["out.tir"] = got
		// The output is .tir too (layouts included): it parses back to itself.
		m3, err := tir.Parse("out.tir", []byte(got))
		if err != nil {
			t.Fatalf("parse of the output: %v", err)
		}
		if again := ir.Print(m3); again != got {
			t.Fatalf("the output does not round-trip:\n%s\nthen\n%s", got, again)
		}
	}
	if s := st.String(); s != "" {
		out["stats"] = s
	}
	return out
}

// sameNumbers runs the program before and after the pipeline on the
// reference executor with the same random inputs and requires every result
// element to agree within the relative tolerance tol (a "numbers: 1e-6"
// directive; integers exactly).
func sameNumbers(t *testing.T, before, after *ir.Module, tol string) {
	t.Helper()
	rel, err := strconv.ParseFloat(tol, 64)
	if err != nil {
		t.Fatalf("numbers: %v", err)
	}
	args := cpu.RandomInputs(before.Entry(), 5)
	want, err := cpu.Run(before, before.Entry(), args)
	if err != nil {
		t.Fatalf("the input program: %v", err)
	}
	got, err := cpu.Run(after, after.Entry(), args)
	if err != nil {
		t.Fatalf("the output program: %v", err)
	}
	for r := range want {
		for i := 0; i < want[r].Len(); i++ {
			w, g := want[r].Float64At(i), got[r].Float64At(i)
			if math.Abs(w-g) > rel*(1+math.Abs(w)) || (rel == 0 && w != g) {
				t.Fatalf("result %d element %d is %g after the pipeline, %g before", r, i, g, w)
			}
		}
	}
}

func goldenPipeline(t *testing.T, spec string) []passes.Pass {
	t.Helper()
	if spec == "" {
		t.Fatal(`the case's comment has no "pipeline:" line`)
	}
	if spec == "default" {
		return passes.Default()
	}
	var ps []passes.Pass
	for _, name := range strings.Split(spec, ",") {
		p, ok := passes.Lookup(strings.TrimSpace(name))
		if !ok {
			t.Fatalf("pipeline names unknown pass %q", name)
		}
		ps = append(ps, p)
	}
	return ps
}
