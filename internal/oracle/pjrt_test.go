package oracle

import (
	"os"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/ir"
)

// TestGoldenModulesThroughPJRT runs the checks of TestGoldenModules through
// tpucc's own PJRT client on the pinned XLA:CPU plugin (backend/pjrt, make
// pjrt-cpu-plugin) instead of JAX, and judges them by the same comparison.
func TestGoldenModulesThroughPJRT(t *testing.T) {
	// As xlacheck.py does for JAX: every f16/bf16 op rounded, as the
	// semantics contract says. The plugin reads XLA_FLAGS when its client is
	// created.
	if cur := os.Getenv("XLA_FLAGS"); !strings.Contains(cur, "xla_allow_excess_precision") {
		t.Setenv("XLA_FLAGS", strings.TrimSpace(cur+" --xla_allow_excess_precision=false"))
	}
	b, err := backend.Lookup(pjrt.BackendName)
	if err != nil {
		t.Fatalf("the PJRT backend: %v (run make pjrt-cpu-plugin)", err)
	}
	checks, skipped := goldenChecks(t)
	failed := 0
	for _, c := range checks {
		if err := c.prepare(); err != nil {
			failed++
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		problems := []string{}
		exe, err := b.Compile(&backend.Program{Module: c.m, Entry: c.m.Entry(), HLO: c.hlo})
		if err == nil {
			var outs []*backend.Buffer
			if outs, err = exe.Run(c.inputs); err == nil {
				problems = c.compareResults(outs)
			}
		}
		if err != nil {
			problems = append(problems, err.Error())
		}
		if len(problems) > 0 {
			failed++
			t.Errorf("%s through PJRT:\n  %s\nprogram (%s):\n%sStableHLO:\n%s",
				c.name, strings.Join(problems, "\n  "), c.about, ir.Print(c.m), c.hlo)
		}
	}
	t.Logf("%d modules run on %s, %d failed; skipped: %v", len(checks), b.Fingerprint(), failed, skipped)
}
