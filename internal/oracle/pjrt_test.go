package oracle

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/frontend/tir"
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

// pjrtBackend opens the PJRT backend on the pinned XLA:CPU plugin as
// tpucc run --device pjrt does: every compile carries the XLA options that
// keep the semantics contract (pjrt.SemanticsOverrides: every f16/bf16 op
// rounded, min/max propagating NaN). XLA_FLAGS is stripped of those
// options, so that the suite passes on the compile options alone. The
// plugin reads XLA_FLAGS when its one client is created, so every test of
// the package that uses it opens it here.
func pjrtBackend(t *testing.T) backend.Backend {
	t.Helper()
	var kept []string
	for _, f := range strings.Fields(os.Getenv("XLA_FLAGS")) {
		if !strings.HasPrefix(f, "--xla_allow_excess_precision") && !strings.Contains(f, "_enable_fast_min_max") {
			kept = append(kept, f)
		}
	}
	t.Setenv("XLA_FLAGS", strings.Join(kept, " "))
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
	all, skipped := goldenChecks(t)
	var checks []*check
	for _, c := range all {
		if holdsSubByte(c.m) {
			skipped["holds i2, i4, u2 or u4 values, which tpucc's PJRT client does not carry"]++
			continue
		}
		checks = append(checks, c)
	}
	failed := runThroughPJRT(t, b, checks)
	t.Logf("%d modules run on %s, %d failed; skipped: %v", len(checks), b.Fingerprint(), failed, skipped)
}

// holdsSubByte reports whether a function of m has an i2, i4, u2 or u4 value.
func holdsSubByte(m *ir.Module) bool {
	found := false
	for _, f := range m.Funcs {
		for _, p := range f.Params {
			found = found || p.Type.DType.IsSubByte()
		}
		f.Body.Walk(func(in *ir.Instr) {
			for _, r := range in.Results {
				found = found || r.Type.DType.IsSubByte()
			}
		})
	}
	return found
}

// TestRandomProgramsThroughPJRT runs -oracle.pjrt.n random programs from
// -oracle.seed (drawing no sub-byte dtypes, which the client does not carry)
// through the PJRT client on XLA:CPU, with TestRandomPrograms'
// inputs and tolerances: the random corpus without Python, sized for CI.
func TestRandomProgramsThroughPJRT(t *testing.T) {
	b := pjrtBackend(t)
	first, n := *flagSeed, *flagPJRTN
	var checks []*check
	cfg := genConfig()
	for _, dt := range ir.DTypes {
		if !dt.IsSubByte() && !dt.IsNarrowFloat() { // tpucc's PJRT client does not carry them (PJRT packs them); progen draws no narrow floats
			cfg.DTypes = append(cfg.DTypes, dt)
		}
	}
	for seed := first; seed < first+int64(n); seed++ {
		p := progen.New(seed, cfg)
		c := &check{
			name:   fmt.Sprintf("seed %d", seed),
			key:    fmt.Sprint(seed),
			m:      p.Module,
			inputs: cpu.RandomInputs(p.Module.Entry(), seed),
			about:  fmt.Sprintf("progen seed %d (no sub-byte dtypes), inputs cpu.RandomInputs(@main, %d)", seed, seed),
		}
		for _, o := range p.Outputs {
			c.exact = append(c.exact, o.Exact)
		}
		checks = append(checks, c)
	}
	failed := runThroughPJRT(t, b, checks)
	t.Logf("%d programs (seeds %d..%d) on %s: %d failed", n, first, first+int64(n)-1, b.Fingerprint(), failed)
}

// semanticsCases are programs whose result on XLA:CPU depends on the XLA
// options every PJRT compile carries: a max reduction over rows holding NaN
// (XLA:CPU's fast min/max drops the NaN: [7, 15, 22, 31]) and a chain of
// bf16 ops (excess precision keeps a*b in f32 before the add, one bf16 unit
// off in places).
var semanticsCases = []struct{ name, src string }{
	{"reduce_max with NaN", `func @f(%x: f32[4,4]) -> f32[4] {
  %a = reduce_max %x {axes=[1]} : f32[4]
  return %a
}
`},
	{"bf16 a*b+a", `func @f(%a: bf16[64], %b: bf16[64]) -> f32[64] {
  %p = mul %a, %b : bf16[64]
  %s = add %p, %a : bf16[64]
  %y = convert %s : f32[64]
  return %y
}
`},
}

// TestSemanticsThroughPJRT runs semanticsCases through the PJRT backend
// against the reference executor, exactly: NaNs where the executor has
// them, every bf16 bit the same.
func TestSemanticsThroughPJRT(t *testing.T) {
	b := pjrtBackend(t)
	nan := math.NaN()
	rows := []float64{1, 7, 3, 2, 15, nan, 4, 0, nan, 22, 1, 1, 31, 3, 3, 3}
	var checks []*check
	for i, sc := range semanticsCases {
		m, err := tir.Parse(sc.name+".tir", []byte(sc.src))
		if err != nil {
			t.Fatal(err)
		}
		inputs := cpu.RandomInputs(m.Entry(), int64(i))
		if i == 0 {
			inputs[0] = backend.FromFloats(inputs[0].Type(), rows...)
		}
		checks = append(checks, &check{name: sc.name, key: fmt.Sprint("semantics", i), m: m,
			inputs: inputs, exact: []bool{true}, about: "TestSemanticsThroughPJRT"})
	}
	if got := runThroughPJRT(t, b, checks); got != 0 {
		t.Errorf("%d of %d programs differ from the reference executor on %s", got, len(checks), b.Fingerprint())
	}
}
