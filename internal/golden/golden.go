// Package golden runs txtar golden cases: one behaviour per archive, inputs and
// expected outputs side by side. It owns the single -update flag, which rewrites
// the expected outputs from what the code now produces. Only tests import it.
//
// An archive's comment says what the case shows; lines of the form "key: value"
// in it are directives (for example "pipeline: cse,dce"). Sections a test reads
// with Case.Input are inputs; every other section is an expected output, and the
// test must produce exactly those.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected outputs of golden cases")

// Updating reports whether -update was given.
func Updating() bool { return *update }

// Case is one archive.
type Case struct {
	Name    string // file name without .txtar
	Path    string
	Comment string
	archive *txtar.Archive
	inputs  map[string]bool
}

// Directive returns the value of a "key: value" line of the comment, or "".
func (c *Case) Directive(key string) string {
	for _, line := range strings.Split(c.Comment, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Input returns the section name, marking it as an input; ok is false if absent.
func (c *Case) Input(name string) (string, bool) {
	c.inputs[name] = true
	for _, f := range c.archive.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// Has reports whether the archive has a section name (input or expected).
func (c *Case) Has(name string) bool {
	for _, f := range c.archive.Files {
		if f.Name == name {
			return true
		}
	}
	return false
}

// Run calls fn for every .txtar file in dir (sorted), as a subtest, and compares
// the sections fn returns with the archive's expected sections.
func Run(t *testing.T, dir string, fn func(t *testing.T, c *Case) map[string]string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no golden cases in %s", dir)
	}
	sort.Strings(paths)
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			a, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c := &Case{Name: name, Path: path, Comment: string(a.Comment), archive: a, inputs: map[string]bool{}}
			got := fn(t, c)
			if t.Failed() {
				return
			}
			check(t, c, got)
		})
	}
}

func check(t *testing.T, c *Case, got map[string]string) {
	t.Helper()
	if *update {
		var files []txtar.File
		for _, f := range c.archive.Files {
			if c.inputs[f.Name] {
				files = append(files, f)
			}
		}
		names := make([]string, 0, len(got))
		for n := range got {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			files = append(files, txtar.File{Name: n, Data: []byte(withNewline(got[n]))})
		}
		c.archive.Files = files
		if err := os.WriteFile(c.Path, txtar.Format(c.archive), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, f := range c.archive.Files {
		if c.inputs[f.Name] {
			continue
		}
		out, ok := got[f.Name]
		if !ok {
			t.Errorf("%s: expected section %q, but the test produced none", c.Path, f.Name)
			continue
		}
		if diff := cmp.Diff(string(f.Data), withNewline(out)); diff != "" {
			t.Errorf("%s: section %q differs (-want +got):\n%s\nrun with -update to accept", c.Path, f.Name, diff)
		}
	}
	for n, out := range got {
		if !c.Has(n) {
			t.Errorf("%s: the test produced section %q, which the archive lacks:\n%s\nrun with -update to accept", c.Path, n, out)
		}
	}
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}
