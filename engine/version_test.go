package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/golden"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/target"
)

// fingerprintFile records what the compiler makes of a fixed corpus, with
// the Version it was made under (see TestVersionFingerprint).
const fingerprintFile = "testdata/version-fingerprint.txt"

// TestVersionFingerprint enforces the rule of docs/CACHE.md: a change that
// changes any compiled program must bump Version, or the persistent caches
// of users would serve programs of the old compiler under the new one.
//
// It compiles a corpus (the examples and the inputs of the lowering and
// pass goldens) for every target and hashes each program's optimised
// module and StableHLO text, and the pass list. When those differ from the
// record while Version is the one the record was made under, the test
// fails and says to bump Version; a changed Version with an old record, or
// a program not yet recorded, asks for the record to be rewritten with
// go test ./engine -run TestVersionFingerprint -update.
func TestVersionFingerprint(t *testing.T) {
	got := fingerprint(t)
	data, err := os.ReadFile(fingerprintFile)
	if golden.Updating() {
		if err := os.WriteFile(fingerprintFile, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	rec, err := parseFingerprint(string(data))
	if err != nil {
		t.Fatalf("%s: %v", fingerprintFile, err)
	}
	if msg := compareFingerprints(rec, got); msg != "" {
		t.Error(msg)
	}
}

// prints is the compiler's fingerprint: its Version, its pass list, and a
// hash of the output for each program of the corpus.
type prints struct {
	version, pipeline string
	programs          map[string]string
}

func (p prints) String() string {
	var b strings.Builder
	b.WriteString("# What the compiler makes of a fixed corpus; see TestVersionFingerprint and docs/CACHE.md.\n")
	b.WriteString("# Rewrite with: go test ./engine -run TestVersionFingerprint -update\n")
	fmt.Fprintf(&b, "version %s\npipeline %s\n", p.version, p.pipeline)
	names := make([]string, 0, len(p.programs))
	for n := range p.programs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s\n", n, p.programs[n])
	}
	return b.String()
}

func parseFingerprint(text string) (prints, error) {
	p := prints{programs: map[string]string{}}
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, " ")
		switch {
		case !ok:
			return p, fmt.Errorf("line %d: %q", i+1, line)
		case k == "version":
			p.version = v
		case k == "pipeline":
			p.pipeline = v
		default:
			p.programs[k] = v
		}
	}
	return p, nil
}

// compareFingerprints says what the record (rec) and the compiler (got)
// disagree on and what to do, "" when they agree.
func compareFingerprints(rec, got prints) string {
	const rewrite = "go test ./engine -run TestVersionFingerprint -update"
	if rec.version != got.version {
		return fmt.Sprintf("Version is %s but %s was made under %s: rewrite it with %s", got.version, fingerprintFile, rec.version, rewrite)
	}
	var changed, added []string
	for n, h := range got.programs {
		switch old, ok := rec.programs[n]; {
		case !ok:
			added = append(added, n)
		case old != h:
			changed = append(changed, n)
		}
	}
	slices.Sort(changed)
	slices.Sort(added)
	if rec.pipeline != got.pipeline {
		changed = append([]string{"the pass list (" + rec.pipeline + " -> " + got.pipeline + ")"}, changed...)
	}
	switch {
	case len(changed) > 0:
		return fmt.Sprintf("the compiler's output changed but Version is still %s: bump engine.Version (persistent caches would serve the old programs), then %s\nchanged: %s",
			got.version, rewrite, strings.Join(changed, ", "))
	case len(added) > 0:
		return fmt.Sprintf("programs not in %s (no Version bump needed): %s\nrecord them with %s", fingerprintFile, strings.Join(added, ", "), rewrite)
	}
	return ""
}

// fingerprint compiles the corpus for every target, the cpu target being
// target.ReferenceCPU: the record depends on the compiler, not on the machine
// (the key holds the host's own figures apart).
func fingerprint(t *testing.T) prints {
	saved := hostTarget
	hostTarget = func() *target.Target { return target.ReferenceCPU }
	defer func() { hostTarget = saved }()
	p := prints{version: Version, pipeline: pipelineText(), programs: map[string]string{}}
	for name, text := range corpus(t) {
		h := sha256.New()
		for _, target := range Targets() {
			m, err := tir.Parse(name, []byte(text))
			if err != nil {
				break // a parse-error case: nothing is compiled
			}
			exe, _, err := Compile(m, Config{Target: target})
			if err != nil {
				fmt.Fprintf(h, "%s: error %s\n", target, firstLine(err.Error()))
				continue
			}
			fmt.Fprintf(h, "%s:\n%s\n%s\n", target, ir.Print(exe.Module), exe.HLO)
		}
		p.programs[name] = hex.EncodeToString(h.Sum(nil))[:16]
	}
	return p
}

// corpus is the programs the fingerprint compiles, by their path from the
// module's root: the examples and the in.tir of the lowering and pass
// goldens.
func corpus(t *testing.T) map[string]string {
	out := map[string]string{}
	examples, err := filepath.Glob("../examples/*.tir")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range examples {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(path, "../")] = string(data)
	}
	for _, pattern := range []string{"../testdata/golden/lower/*.txtar", "../testdata/golden/passes/*/*.txtar"} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			a, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range a.Files {
				if f.Name == "in.tir" {
					out[strings.TrimPrefix(path, "../")] = string(f.Data)
				}
			}
		}
	}
	if len(out) < 100 {
		t.Fatalf("the corpus has only %d programs", len(out))
	}
	return out
}
