package autodiff_test

import (
	"path/filepath"
	"testing"

	"github.com/tpucc/tpucc/autodiff"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/golden"
	"github.com/tpucc/tpucc/ir"
)

// TestGolden: testdata/golden/grad/*.txtar hold in.tir and what tpucc grad writes for
// it (out.tir), or its error; each VJP is also checked against finite differences.
func TestGolden(t *testing.T) {
	golden.Run(t, filepath.Join("..", "testdata", "golden", "grad"), func(t *testing.T, c *golden.Case) map[string]string {
		src, ok := c.Input("in.tir")
		if !ok {
			t.Fatalf("%s has no in.tir section", c.Path)
		}
		m, err := tir.Parse("in.tir", []byte(src))
		if err != nil {
			t.Fatalf("in.tir does not parse: %v", err)
		}
		if printed := ir.Print(m); printed != src {
			t.Errorf("in.tir is not in canonical form; ir.Print gives\n%s", printed)
		}
		v, err := autodiff.Module(m)
		if err != nil {
			return map[string]string{"error": err.Error()}
		}
		// The golden VJPs are right, too: against finite differences.
		runCheck(t, m, 1)
		out := ir.Print(v)
		if again := vjpRoundTrip(t, out); again != out {
			t.Errorf("out.tir does not print back the same after parsing:\n%s", again)
		}
		return map[string]string{"out.tir": out}
	})
}
