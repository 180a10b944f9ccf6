package layering

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/tpucc/tpucc/"

// rule: packages matching one of from (a path, or a prefix ending in /...)
// import only the project packages that match allowed, or none of those
// that match forbidden.
type rule struct {
	why       string
	from      []string
	allowed   []string // nil: any but forbidden
	forbidden []string
}

// rules are the import rule docs/DESIGN.md states, in its words.
var rules = []rule{
	{why: "ir imports nothing of the project", from: []string{"ir"}, allowed: []string{}},
	{why: "target describes machines (TPU generations, the host) and their costs: it imports only ir",
		from: []string{"target"}, allowed: []string{"ir"}},
	{why: "the frontends, the passes and the lowering import only ir (and passes/padding the passes' evaluator)",
		from:    []string{"frontend/...", "passes", "lower/..."},
		allowed: []string{"ir"}},
	{why: "the frontends, the passes and the lowering import only ir (and passes/padding the passes' evaluator)",
		from: []string{"passes/padding"}, allowed: []string{"ir", "passes"}},
	{why: "backends import the backend interfaces, ir and each other, never the compile path or the libraries above it",
		from:      []string{"backend", "backend/..."},
		forbidden: []string{"frontend/...", "passes/...", "lower/...", "engine/...", "compile/...", "tensor/...", "models/...", "cmd/..."}},
	{why: "engine (the compile path) imports passes, lowering and backends, never a frontend or the libraries above it",
		from:      []string{"engine/..."},
		forbidden: []string{"frontend/...", "compile/...", "tensor/...", "models/...", "cmd/..."}},
	{why: "tensor records through frontend/trace and runs on backends, never through the compile path",
		from:      []string{"tensor/..."},
		forbidden: []string{"engine/...", "passes/...", "lower/...", "frontend/tir", "compile/...", "models/...", "cmd/..."}},
	{why: "compile wraps engine and tensor; models sit on tensor and engine; neither imports the other or the command",
		from:      []string{"compile/..."},
		forbidden: []string{"models/...", "cmd/..."}},
	{why: "compile wraps engine and tensor; models sit on tensor and engine; neither imports the other or the command",
		from:      []string{"models/..."},
		forbidden: []string{"compile/...", "cmd/..."}},
	{why: "models/hf, models/safetensors and models/tokenizer read files into backend.Buffers: they compute nothing",
		from:      []string{"models/hf", "models/safetensors", "models/tokenizer", "models/internal/..."},
		forbidden: []string{"tensor/...", "engine/...", "compile/...", "passes/...", "lower/...", "frontend/...", "backend/cpu", "backend/llvm", "backend/pjrt", "target"}},
}

func match(pkg string, patterns []string) bool {
	for _, p := range patterns {
		if base, ok := strings.CutSuffix(p, "/..."); ok && (pkg == base || strings.HasPrefix(pkg, base+"/")) || pkg == p {
			return true
		}
	}
	return false
}

// imports maps each package of the module (by its path inside it) to the
// module's packages its non-test files import.
func imports(t *testing.T, root string) map[string][]string {
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here
		}
		rel, _ := filepath.Rel(root, path)
		for _, imp := range p.Imports {
			if dep, ok := strings.CutPrefix(imp, module); ok {
				out[filepath.ToSlash(rel)] = append(out[filepath.ToSlash(rel)], dep)
			}
		}
		if _, ok := out[filepath.ToSlash(rel)]; !ok {
			out[filepath.ToSlash(rel)] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestImportRule(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	all := imports(t, root)
	for _, need := range []string{"ir", "passes", "engine", "tensor", "backend/cpu", "models/hf"} {
		if _, ok := all[need]; !ok {
			t.Fatalf("package %s not found under %s: the walk is broken", need, root)
		}
	}
	pkgs := make([]string, 0, len(all))
	for p := range all {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		for _, r := range rules {
			if !match(pkg, r.from) {
				continue
			}
			for _, dep := range all[pkg] {
				if r.allowed != nil && !slices.Contains(r.allowed, dep) || match(dep, r.forbidden) {
					t.Errorf("%s imports %s, but %s", pkg, dep, r.why)
				}
			}
		}
	}
}

// The rule check itself: a forbidden edge and one outside an allowed list
// are both reported.
func TestRuleMatching(t *testing.T) {
	if !match("passes", []string{"passes/..."}) || !match("passes/padding", []string{"passes/..."}) || match("passesx", []string{"passes/..."}) {
		t.Error("a /... pattern must match the package and those below it, nothing else")
	}
	if match("ir", []string{"frontend/..."}) || !match("frontend/tir", []string{"frontend/tir"}) {
		t.Error("an exact pattern matches only its package")
	}
}
