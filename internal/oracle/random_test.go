package oracle

import (
	"flag"
	"fmt"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/internal/progen"
	"github.com/tpucc/tpucc/ir"
)

var (
	flagN    = flag.Int("oracle.n", 300, "how many random programs TestRandomPrograms runs")
	flagSeed = flag.Int64("oracle.seed", 0, "the first seed of TestRandomPrograms")
)

// genConfig is the generator's configuration for the oracle: its drift
// budget is this package's tolerance table.
func genConfig() progen.Config {
	return progen.Config{Tolerance: func(dt ir.DType) progen.Tolerance {
		t := For(dt)
		return progen.Tolerance{Rtol: t.Rtol, Atol: t.Atol}
	}}
}

// TestRandomPrograms runs -oracle.n programs from -oracle.seed on through
// the executor and XLA. Program seed S gets the inputs cpu.RandomInputs(@main, S).
func TestRandomPrograms(t *testing.T) {
	h := harness(t)
	first, n := *flagSeed, *flagN
	var checks []*check
	outputs, exact := 0, 0
	for seed := first; seed < first+int64(n); seed++ {
		p := progen.New(seed, genConfig())
		c := &check{
			name:   fmt.Sprintf("seed %d", seed),
			key:    fmt.Sprint(seed),
			m:      p.Module,
			inputs: cpu.RandomInputs(p.Module.Entry(), seed),
			about:  fmt.Sprintf("progen seed %d, inputs cpu.RandomInputs(@main, %d)", seed, seed),
			repro:  fmt.Sprintf("go test ./internal/oracle -run TestRandomPrograms -oracle.seed=%d -oracle.n=1", seed),
		}
		for _, o := range p.Outputs {
			c.exact = append(c.exact, o.Exact)
			outputs++
			if o.Exact {
				exact++
			}
		}
		checks = append(checks, c)
	}
	failed := runAll(t, h, checks)
	t.Logf("%d programs (seeds %d..%d), %d results of which %d exact: %d failed", n, first, first+int64(n)-1, outputs, exact, failed)
}

// TestForcedPrograms runs, for every op progen draws, the program with that
// op forced (progen.Config.Force, seed 0; the programs of progen.Corpus)
// through the executor and XLA: the ops added to the table after the
// seeds' bag (rng_bit_generator, ...) are drawn only there.
func TestForcedPrograms(t *testing.T) {
	h := harness(t)
	var checks []*check
	for _, op := range ir.Ops() {
		if _, skip := progen.NotGenerated(op); skip {
			continue
		}
		cfg := genConfig()
		cfg.Force = op
		p := progen.New(0, cfg)
		c := &check{
			name:   fmt.Sprintf("forced %s", op),
			key:    "forced_" + op.String(),
			m:      p.Module,
			inputs: cpu.RandomInputs(p.Module.Entry(), 0),
			about:  fmt.Sprintf("progen seed 0 forcing %s, inputs cpu.RandomInputs(@main, 0)", op),
			repro:  "go test ./internal/oracle -run TestForcedPrograms",
		}
		for _, o := range p.Outputs {
			c.exact = append(c.exact, o.Exact)
		}
		checks = append(checks, c)
	}
	if failed := runAll(t, h, checks); failed > 0 {
		t.Errorf("%d of %d forced programs differ from XLA", failed, len(checks))
	}
}
