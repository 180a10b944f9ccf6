package oracle

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// seededOps are ops whose golden programs run with several input seeds:
// those read from StableHLO's interpreter suite (issue 33), checked here on
// more inputs than TestGoldenModules's one seed.
var seededOps = map[ir.Op]bool{ir.OpTriangularSolve: true}

// TestOpPrograms runs every golden program holding one of seededOps through
// the executor and XLA:CPU with each of loopSeeds' inputs
// (go test ./internal/oracle -run TestOpPrograms).
func TestOpPrograms(t *testing.T) {
	h := harness(t)
	var checks []*check
	found := map[ir.Op]bool{}
	for _, mod := range goldenModules(t, repoRoot(t)) {
		m, err := tir.Parse(mod.file, []byte(mod.src))
		if mod.expectsError || err != nil || !holds(m, found) {
			continue
		}
		for _, seed := range loopSeeds {
			m, _ := tir.Parse(mod.file, []byte(mod.src))
			key := unsafeName.ReplaceAllString(strings.TrimSuffix(mod.file, ":in.tir"), "_") + fmt.Sprintf("_seed%d", seed)
			checks = append(checks, &check{
				name:   fmt.Sprintf("%s (seed %d)", mod.file, seed),
				key:    key,
				m:      m,
				inputs: cpu.RandomInputs(m.Entry(), seed),
				about:  fmt.Sprintf("inputs cpu.RandomInputs(@%s, %d)", m.Entry().Name, seed),
				repro:  "go test ./internal/oracle -run TestOpPrograms  # " + mod.file,
			})
		}
	}
	for op := range seededOps {
		if !found[op] {
			t.Errorf("no golden program holds %s", op)
		}
	}
	failed := runAll(t, h, checks)
	t.Logf("%d checks run, %d failed", len(checks), failed)
}

// holds reports whether m has an op of seededOps, recording which in found.
func holds(m *ir.Module, found map[ir.Op]bool) bool {
	any := false
	for _, f := range m.Funcs {
		f.Body.Walk(func(in *ir.Instr) {
			if seededOps[in.Op] {
				found[in.Op], any = true, true
			}
		})
	}
	return any
}
