package oracle

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/internal/progen"
	"github.com/tpucc/tpucc/ir"
)

var (
	flagPJRTN = flag.Int("oracle.pjrt.n", 60, "how many random programs TestRandomProgramsThroughPJRT runs")
	// flagPrecision lowers every product at this precision: on a GPU,
	// "highest" asks XLA for f32 products where its default is TF32
	// (tools/pjrtgpu).
	flagPrecision = flag.String("oracle.precision", "", "the precision of every product the oracle lowers (stablehlo.Options.Precision)")
)

// pjrtBackend opens the PJRT backend on the pinned XLA:CPU plugin with the
// flags xlacheck.py gives JAX (every f16/bf16 op rounded, as the semantics
// contract says) and with min/max propagating NaN, as JAX's XLA:CPU does and
// the semantics contract says (the plugin's default, fast min/max, drops
// NaNs from max reductions). The plugin reads XLA_FLAGS when its one client
// is created, so every test of the package that uses it opens it here.
func pjrtBackend(t *testing.T) backend.Backend {
	t.Helper()
	flags := os.Getenv("XLA_FLAGS")
	for _, f := range []string{"--xla_allow_excess_precision=false", "--xla_cpu_enable_fast_min_max=false"} {
		if name, _, _ := strings.Cut(f, "="); !strings.Contains(flags, name) {
			flags = strings.TrimSpace(flags + " " + f)
		}
	}
	t.Setenv("XLA_FLAGS", flags)
	b, err := backend.Lookup(pjrt.BackendName)
	if err != nil {
		t.Fatalf("the PJRT backend: %v (run make pjrt-cpu-plugin)", err)
	}
	return b
}

// runThroughPJRT compiles and runs each check on b and judges its results
// by the oracle's comparison; it returns how many failed.
func runThroughPJRT(t *testing.T, b backend.Backend, checks []*check) int {
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
	return failed
}

// TestGoldenModulesThroughPJRT runs the checks of TestGoldenModules through
// tpucc's own PJRT client on the pinned XLA:CPU plugin (backend/pjrt, make
// pjrt-cpu-plugin) instead of JAX, and judges them by the same comparison.
func TestGoldenModulesThroughPJRT(t *testing.T) {
	b := pjrtBackend(t)
	checks, skipped := goldenChecks(t)
	failed := runThroughPJRT(t, b, checks)
	t.Logf("%d modules run on %s, %d failed; skipped: %v", len(checks), b.Fingerprint(), failed, skipped)
}

// TestRandomProgramsThroughPJRT runs -oracle.pjrt.n random programs from
// -oracle.seed through the PJRT client on XLA:CPU, with TestRandomPrograms'
// inputs and tolerances: the random corpus without Python, sized for CI.
func TestRandomProgramsThroughPJRT(t *testing.T) {
	b := pjrtBackend(t)
	first, n := *flagSeed, *flagPJRTN
	var checks []*check
	for seed := first; seed < first+int64(n); seed++ {
		p := progen.New(seed, genConfig())
		c := &check{
			name:   fmt.Sprintf("seed %d", seed),
			key:    fmt.Sprint(seed),
			m:      p.Module,
			inputs: cpu.RandomInputs(p.Module.Entry(), seed),
			about:  fmt.Sprintf("progen seed %d, inputs cpu.RandomInputs(@main, %d)", seed, seed),
		}
		for _, o := range p.Outputs {
			c.exact = append(c.exact, o.Exact)
		}
		checks = append(checks, c)
	}
	failed := runThroughPJRT(t, b, checks)
	t.Logf("%d programs (seeds %d..%d) on %s: %d failed", n, first, first+int64(n)-1, b.Fingerprint(), failed)
}
