package oracle

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/gradcheck"
	"github.com/tpucc/tpucc/ir"
)

// gradLoopIndices are the values the i32[] parameters of testdata/gradloop take, one
// check each: each branch of a two-branch case, and an index past the last. A program
// without one is checked once.
var gradLoopIndices = []int64{0, 1, 2}

var gradLoopDir = filepath.Join("testdata", "gradloop")

var flagGradLoopDir = flag.String("gradloop.dir", gradLoopDir, "the directory of .tir programs TestGradLoopPrograms differentiates")

// TestGradLoopPrograms differentiates while and case programs: those of
// testdata/gradloop (a counted loop, a scan over stacked layer weights, a case, a case
// in a loop, a nested loop, a counted loop written limit first and one counting down,
// a scan of attention layers stacking their outputs), each with its i32[] parameters set to each of
// gradLoopIndices, and every golden program with control flow whose loops have a
// static trip count. Each VJP is compiled and run by XLA in f32 against central
// differences of the f64 program run by XLA, as TestGradPrograms does.
//
// -gradloop.dir runs another directory's programs instead, and no golden one.
func TestGradLoopPrograms(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(*flagGradLoopDir, "*.tir"))
	sort.Strings(files)
	if own := *flagGradLoopDir == gradLoopDir; own && len(files) < 5 || len(files) == 0 {
		t.Fatalf("found %d programs in %s, want 5", len(files), *flagGradLoopDir)
	}
	var cases []*gradCase
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m, err := tir.Parse(file, src)
		if err != nil {
			t.Fatal(err)
		}
		f := m.Entry()
		indices := gradLoopIndices
		if !hasIndex(f) {
			indices = indices[:1]
		}
		for s, k := range indices {
			seed := int64(s + 1)
			inputs := cpu.RandomInputs(f, seed)
			for i, p := range f.Params {
				if isIndex(p) {
					inputs[i].SetInt64(0, k)
				}
			}
			g, why, err := newGradCaseAt(file, m, inputs, seed)
			switch {
			case err != nil:
				t.Errorf("%s: %v", file, err)
			case g == nil:
				t.Errorf("%s is not differentiated: %s", file, why)
			default:
				cases = append(cases, g)
			}
		}
	}
	own := len(cases)
	skipped := map[string]int{}
	for _, md := range goldenModules(t, repoRoot(t)) {
		if *flagGradLoopDir != gradLoopDir {
			break
		}
		m, err := tir.Parse(md.file, []byte(md.src))
		if md.expectsError || err != nil || !hasControl(m) {
			continue
		}
		if m, err = gradcheck.Retype(m, ir.F32); err != nil {
			t.Errorf("%s in f32: %v", md.file, err)
			continue
		}
		g, why, err := newGradCase(md.file, m, goldenSeed)
		switch {
		case err != nil:
			t.Errorf("%s: %v", md.file, err)
		case g == nil:
			skipped[why]++
		default:
			cases = append(cases, g)
		}
	}
	picks, rough := runGradCases(t, cases)
	t.Logf("%d loop and case programs differentiated (%d golden), %d input elements checked, %d of them skipped (not smooth within the step); not differentiated: %v",
		len(cases), len(cases)-own, picks, rough, skipped)
}

func carriesFloat(in *ir.Instr) bool {
	for _, a := range in.Args {
		if a.Type.DType.IsFloat() {
			return true
		}
	}
	return false
}

func isIndex(p *ir.Value) bool { return p.Type.DType == ir.I32 && p.Type.Rank() == 0 }

func hasIndex(f *ir.Func) bool {
	for _, p := range f.Params {
		if isIndex(p) {
			return true
		}
	}
	return false
}
