package oracle

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
)

var (
	flagLoopsDir   = flag.String("loops.dir", filepath.Join("testdata", "loops"), "the directory of .tir programs TestLoopFiles runs")
	flagLoopsSeeds = flag.Int("loops.seeds", 3, "how many input seeds (1, 2, ...) TestLoopFiles runs each program with")
)

// TestLoopFiles runs the while and case programs of testdata/loops, written
// by hand in the text format (data-dependent trip counts with zero trips, a
// condition on a reduction, nested regions, case indices out of range,
// carried i1/i32/i64/bf16/f32, scans over stacked weights, unused and
// loop-invariant carried values, swapped and aliased carried buffers, a
// stack read after it is updated in place, bf16 stacked layer weights),
// each with input seeds 1..-loops.seeds (random i32 inputs lie in [-8, 8]:
// trip counts of zero and more, case indices in range, negative and past
// the end): on the executor against XLA:CPU, and on the llvm backend, with
// its loops compiled, against the executor. -loops.dir runs another
// directory's programs (a sweep).
func TestLoopFiles(t *testing.T) {
	h := harness(t)
	b, err := backend.Lookup("llvm")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(*flagLoopsDir, "*.tir"))
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no .tir program in %s", *flagLoopsDir)
	}
	var checks []*check
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for seed := int64(1); seed <= int64(*flagLoopsSeeds); seed++ {
			m, err := tir.Parse(file, src)
			if err != nil {
				t.Fatal(err)
			}
			base := strings.TrimSuffix(filepath.Base(file), ".tir")
			checks = append(checks, &check{name: fmt.Sprintf("%s (seed %d)", file, seed), key: fmt.Sprintf("loops_%s_%d", base, seed),
				m: m, inputs: cpu.RandomInputs(m.Entry(), seed), about: fmt.Sprintf("inputs cpu.RandomInputs(@%s, %d)", m.Entry().Name, seed),
				repro: "go test ./internal/oracle -run TestLoopFiles  # " + file})
		}
	}
	failed := runLoopChecks(t, h, b, checks)
	t.Logf("%d programs, %d checks on XLA:CPU and llvm, %d failed", len(files), len(checks), failed)
}
