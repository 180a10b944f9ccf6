package oracle

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// loopSeeds are the input seeds each loop program runs with: random i32
// inputs lie in [-8, 8], so the data-dependent trip counts and case indices
// (in range, negative, past the last branch) differ between them.
var loopSeeds = []int64{1, 2, 3, 4, 5, 6}

// TestLoopPrograms runs every golden program with a while or a case through
// the executor and XLA:CPU, each with several input seeds: the part of
// TestGoldenModules that judges control flow, small enough to run alone
// (go test ./internal/oracle -run TestLoopPrograms).
func TestLoopPrograms(t *testing.T) {
	h := harness(t)
	var checks []*check
	for _, mod := range goldenModules(t, repoRoot(t)) {
		if mod.expectsError {
			continue
		}
		m, err := tir.Parse(mod.file, []byte(mod.src))
		if err != nil || !hasControl(m) {
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
				repro:  "go test ./internal/oracle -run TestLoopPrograms  # " + mod.file,
			})
		}
	}
	if len(checks) < 5*len(loopSeeds) {
		t.Fatalf("found %d loop checks, want at least %d", len(checks), 5*len(loopSeeds))
	}
	failed := runAll(t, h, checks)
	t.Logf("%d loop checks run, %d failed", len(checks), failed)
}

func hasControl(m *ir.Module) bool {
	found := false
	for _, f := range m.Funcs {
		f.Body.Walk(func(in *ir.Instr) { found = found || ir.IsControl(in.Op) })
	}
	return found
}
