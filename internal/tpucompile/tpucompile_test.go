package tpucompile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// source is one .tir program: a golden case's in.tir section or an example file.
type source struct {
	id     string // the path from the module root; it names the module everywhere
	text   string
	golden bool
}

// lowered is a source that made it to StableHLO.
type lowered struct {
	source
	hlo string
}

// sources returns every golden case's in.tir and every examples/*.tir under root,
// sorted by path.
func sources(t *testing.T, root string) []source {
	t.Helper()
	var out []source
	goldenDir := filepath.Join(root, "testdata", "golden")
	err := filepath.WalkDir(goldenDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".txtar") {
			return err
		}
		a, err := txtar.ParseFile(path)
		if err != nil {
			return err
		}
		if why, ok := noTPU(string(a.Comment)); ok {
			t.Logf("%s is not compiled for TPU: %s", rel(root, path), why)
			return nil
		}
		for _, f := range a.Files {
			if f.Name == "in.tir" {
				out = append(out, source{id: rel(root, path), text: string(f.Data), golden: true})
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Glob(filepath.Join(root, "examples", "*.tir"))
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) == 0 {
		t.Fatalf("no examples/*.tir under %s", root)
	}
	for _, path := range examples {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, source{id: rel(root, path), text: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// noTPU reads a golden case's "tpu: no (why)" line: its program calls
// kernels (custom_call targets) that libtpu does not have.
func noTPU(comment string) (string, bool) {
	for _, line := range strings.Split(comment, "\n") {
		if why, ok := strings.CutPrefix(line, "tpu: no"); ok {
			return strings.TrimSpace(why), true
		}
	}
	return "", false
}

func rel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// lower parses, optimises with the default pipeline and lowers one source. stage says
// which step failed, if one did.
func lower(s source) (hlo, stage string, err error) {
	m, err := tir.Parse(s.id, []byte(s.text))
	if err != nil {
		return "", "parse", err
	}
	// tpu-v6e: assign-layout runs as in tpucc build --target tpu-v6e.
	exe, _, err := engine.Compile(m, engine.Config{Target: "tpu-v6e"})
	if err != nil {
		return "", "compile", err
	}
	return exe.HLO, "", nil
}

// TestCompileForTPU: XLA:TPU (compile-only, v5e:2x2 and v6e:2x2) accepts the StableHLO
// of every golden module and every example.
//
// A golden case that does not get to StableHLO is left out, by name and with the reason
// in the log: error cases are meant not to parse, and some cases show what passes do
// to programs the lowering refuses (symbolic shapes). Other packages' tests judge those
// steps; this one judges XLA:TPU. Every example must get to StableHLO.
func TestCompileForTPU(t *testing.T) {
	h, err := xlacheck.FindTPU()
	if err != nil {
		t.Fatalf("TPU compile-only checks are part of the test suite: %v", err)
	}
	var mods []lowered
	var left []string
	for _, s := range sources(t, h.Root) {
		hlo, stage, err := lower(s)
		switch {
		case err == nil:
			mods = append(mods, lowered{s, hlo})
		case s.golden:
			left = append(left, fmt.Sprintf("  %s: %s: %s", s.id, stage, firstLine(err.Error())))
		default:
			t.Errorf("%s: %s: %v", s.id, stage, err)
		}
	}
	if len(left) > 0 {
		t.Logf("%d golden cases do not get to StableHLO and are not compiled:\n%s", len(left), strings.Join(left, "\n"))
	}
	if len(mods) == 0 {
		t.Fatal("no module got to StableHLO")
	}

	tms := make([]xlacheck.TPUModule, len(mods))
	for i, m := range mods {
		tms[i] = xlacheck.TPUModule{ID: m.id, Text: m.hlo}
	}
	topos := xlacheck.DefaultTPUTopologies
	rs, err := h.CompileTPU(tms, topos)
	if err != nil {
		t.Error(err)
	}
	ok := make([]int, len(topos))
	var rejected []int // indexes into mods, each once
	errs := map[int][]string{}
	firstCrash, crashes := -1, 0
	for k, r := range rs {
		i, j := k/len(topos), k%len(topos)
		switch {
		case r.OK:
			ok[j]++
		case strings.HasPrefix(r.Error, "crash: "):
			if firstCrash < 0 {
				firstCrash = i
			}
			crashes++
		default:
			if len(errs[i]) == 0 {
				rejected = append(rejected, i)
			}
			errs[i] = append(errs[i], fmt.Sprintf("%s (%s): %s", r.Topology, r.DeviceKind, r.Error))
		}
	}
	for j, topo := range topos {
		t.Logf("%s: %d/%d modules compiled", topo, ok[j], len(mods))
	}
	switch {
	case crashes == len(rs) && crashes > 0:
		t.Errorf("the compiler process stopped before it compiled anything (see the error above)")
	case firstCrash >= 0:
		// Results come module by module, so the process died compiling this module.
		m := mods[firstCrash]
		t.Errorf("the compiler process stopped at %s: %d module-topology pairs were never compiled\n--- %s ---\n%s--- StableHLO ---\n%s",
			m.id, crashes, m.id, m.text, m.hlo)
	}
	if len(rejected) == 0 {
		return
	}
	cpuVerdict := cpuVerdicts(t, h, mods, rejected)
	for _, i := range rejected {
		m := mods[i]
		t.Errorf("%s: XLA:TPU rejects it\n%s\nXLA:CPU: %s\n--- %s ---\n%s--- StableHLO ---\n%s",
			m.id, strings.Join(errs[i], "\n"), cpuVerdict[i], m.id, m.text, m.hlo)
	}
}

// cpuVerdicts says, for each rejected module, whether XLA:CPU compiles it, so a failure
// tells a TPU-only problem from a lowering that no XLA accepts. The cases carry no
// inputs: a module that compiles then fails at stage "run" for want of them.
func cpuVerdicts(t *testing.T, h *xlacheck.Harness, mods []lowered, rejected []int) map[int]string {
	t.Helper()
	cases := make([]xlacheck.Case, len(rejected))
	for k, i := range rejected {
		cases[k] = xlacheck.Case{ID: mods[i].id, Module: mods[i].hlo}
	}
	rs, err := h.Run(cases)
	if err != nil {
		t.Logf("XLA:CPU oracle: %v", err)
	}
	out := map[int]string{}
	for k, i := range rejected {
		if k >= len(rs) {
			out[i] = "not checked"
			continue
		}
		if r := rs[k]; r.OK || r.Stage == "run" {
			out[i] = "accepts it (parses, verifies and compiles)"
		} else {
			out[i] = "rejects it too: " + r.Stage + ": " + r.Error
		}
	}
	for _, r := range rs {
		if r.Dir != "" {
			os.RemoveAll(filepath.Dir(r.Dir)) // the run's work directory, kept for failed cases
			break
		}
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
