package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsStayInRepository: the README and docs/DESIGN.md point only at files of the
// repository, and every file they link to exists: a reader of a checkout has nothing else.
func TestDocsStayInRepository(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, doc := range []string{"README.md", "docs/DESIGN.md"} {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "../shared") || strings.Contains(line, "/work/") {
				t.Errorf("%s:%d points outside the repository: %s", doc, i+1, line)
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") {
					continue
				}
				p := filepath.Join(root, filepath.Dir(doc), target)
				if rel, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s:%d links outside the repository: %s", doc, i+1, target)
				} else if _, err := os.Stat(p); err != nil {
					t.Errorf("%s:%d links to a missing file: %s", doc, i+1, target)
				}
			}
		}
	}
}
