package oracle

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// goldenSeed is the input seed of every golden and example module.
const goldenSeed = 1

// repoRoot is the directory holding go.mod, above the test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// module is one program to check: its file (relative to the root) and text.
type module struct {
	file, src string
	// mustParse: an example must parse; a golden case's in.tir may be an
	// error case, which is skipped.
	mustParse bool
	// expectsError: the case has an "error" section, so some stage must
	// refuse it; it is not run.
	expectsError bool
}

func goldenModules(t *testing.T, root string) []module {
	var mods []module
	err := filepath.WalkDir(filepath.Join(root, "testdata", "golden"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".txtar") {
			return err
		}
		a, err := txtar.ParseFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		mod := module{file: rel + ":in.tir"}
		found := false
		for _, f := range a.Files {
			switch f.Name {
			case "in.tir":
				mod.src, found = string(f.Data), true
			case "error":
				mod.expectsError = true
			}
		}
		if found {
			mods = append(mods, mod)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading testdata/golden: %v", err)
	}
	examples, _ := filepath.Glob(filepath.Join(root, "examples", "*.tir"))
	for _, path := range examples {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		mods = append(mods, module{file: rel, src: string(b), mustParse: true})
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].file < mods[j].file })
	return mods
}

// TestGoldenModules runs every golden case's in.tir that parses, and every
// example, through the executor and XLA, with inputs cpu.RandomInputs(entry, 1).
func TestGoldenModules(t *testing.T) {
	h := harness(t)
	checks, skipped := goldenChecks(t)
	failed := runAll(t, h, checks)
	t.Logf("%d modules run, %d failed; skipped: %v", len(checks), failed, skipped)
}

// goldenChecks is one check per golden case's in.tir that parses and every
// example, with inputs cpu.RandomInputs(entry, 1), and the count of modules
// left out by reason.
func goldenChecks(t *testing.T) ([]*check, map[string]int) {
	root := repoRoot(t)
	var checks []*check
	skipped := map[string]int{}
	for _, mod := range goldenModules(t, root) {
		if mod.expectsError {
			skipped["expects an error"]++
			continue
		}
		m, err := tir.Parse(mod.file, []byte(mod.src))
		if err != nil {
			if mod.mustParse {
				t.Errorf("%s does not parse:\n%v", mod.file, err)
			}
			skipped["does not parse (an error case)"]++
			continue
		}
		entry := m.Entry()
		if entry == nil {
			skipped["has no function"]++
			continue
		}
		if reason := unrunnable(m, entry); reason != "" {
			if mod.mustParse {
				t.Errorf("%s cannot run: %s", mod.file, reason)
			}
			skipped[reason]++
			continue
		}
		checks = append(checks, &check{
			name:   mod.file,
			key:    unsafeName.ReplaceAllString(strings.TrimSuffix(mod.file, ":in.tir"), "_"),
			m:      m,
			inputs: cpu.RandomInputs(entry, goldenSeed),
			about:  "inputs cpu.RandomInputs(@" + entry.Name + ", 1)",
			repro:  "go test ./internal/oracle -run TestGoldenModules  # " + mod.file,
		})
	}
	if len(checks) == 0 {
		t.Fatalf("found no golden or example module to run (skipped: %v)", skipped)
	}
	return checks, skipped
}

// unrunnable says why a parsed module cannot be run on random inputs: a
// symbolic shape has no size to draw, and a module too large for the
// executor is refused by it.
func unrunnable(m *ir.Module, f *ir.Func) string {
	for _, p := range f.Params {
		if !p.Type.IsStatic() {
			return "has symbolic shapes"
		}
	}
	if err := cpu.CheckMemory(m, f, cpu.DefaultMemoryLimit()); err != nil {
		return "is too large for the executor"
	}
	for _, g := range m.Funcs {
		custom, f6 := false, false
		g.Body.Walk(func(in *ir.Instr) {
			custom = custom || in.Op == ir.OpCustomCall
			for _, r := range in.Results {
				f6 = f6 || r.Type.DType == ir.F6E2M3FN || r.Type.DType == ir.F6E3M2FN
			}
		})
		if custom {
			return "calls a custom_call, a kernel outside the IR that XLA may not have"
		}
		if beyondProcess0(g) {
			return "has a collective over processes other than 0, which a program run alone does not have"
		}
		if f6 {
			return "holds f6 values, which XLA:CPU cannot compile (jax 0.10.2: \"Invalid bitcast i6 to i8\")"
		}
	}
	return ""
}

// beyondProcess0 reports whether a collective of g names a process other
// than 0 (XLA runs the module with one replica and one partition).
func beyondProcess0(g *ir.Func) bool {
	found := false
	g.Body.Walk(func(in *ir.Instr) {
		var groups [][]int64
		switch a := in.Attr.(type) {
		case ir.Collectiver:
			groups = a.Collective().Groups
		case *ir.PermuteAttr:
			groups = a.Pairs
		}
		for _, grp := range groups {
			for _, id := range grp {
				found = found || id != 0
			}
		}
	})
	return found
}
