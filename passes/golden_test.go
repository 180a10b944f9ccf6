package passes_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/golden"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/runtime"
)

// goldenDirs are the stages under testdata/golden/passes: one per pass, and
// default for the whole pipeline.
var goldenDirs = []string{"canonicalize", "fold-constants", "cse", "dce", "default", "assign-layout", "fuse", "moe-route"}

// TestGolden runs every case of testdata/golden/passes/<dir>. A case's comment
// names its pipeline ("pipeline: cse,dce", or "pipeline: default"); in.tir is
// the input, whose canonical print must round-trip (print -> parse -> print);
// the pipeline runs with VerifyEach and the reference executor's evaluator
// (cpu.Folder), so folded values are the executor's, and with the target a
// "target: tpu-v6e" line names (runtime.LookupTarget; none without one). The test produces
// out.tir only when the printed output differs from the canonical print of the
// input (in.tir may spell a literal longhand, as cse/constants does), so an archive without out.tir asserts "must not change",
// and stats (the rewrite counters) whenever a rule fired.
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
		target, err := runtime.LookupTarget(name)
		if err != nil {
			t.Fatal(err)
		}
		opts.Target = target
	}
	if err := passes.Run(m, pipeline, opts); err != nil {
		t.Fatalf("pipeline: %v", err)
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
