package oracle

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestNarrowFloatModules runs the golden cases with f8, f6 or f4 values
// (TestGoldenModules runs them too, among all the others) through the
// executor and XLA: converts to each narrow type and back, dot_general in
// f32, compare, select and constants with NaN and infinities.
func TestNarrowFloatModules(t *testing.T) {
	h := harness(t)
	var checks []*check
	golden, skipped := goldenChecks(t)
	for _, c := range golden {
		narrow := false
		for _, g := range c.m.Funcs {
			g.Body.Walk(func(in *ir.Instr) {
				for _, r := range in.Results {
					narrow = narrow || r.Type.DType.IsNarrowFloat()
				}
			})
		}
		if narrow {
			checks = append(checks, c)
		}
	}
	// op_narrow_float holds f6 values, which XLA:CPU cannot compile.
	if len(checks) < 1 || !strings.Contains(strings.Join(keys(skipped), "\n"), "f6") {
		t.Fatalf("found %d golden modules with narrow floats (want lower/narrow_float), skipped %v", len(checks), skipped)
	}
	if failed := runAll(t, h, checks); failed > 0 {
		t.Logf("%d of %d narrow float modules differ from XLA", failed, len(checks))
	}
}

func keys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
