package tir

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tpucc/tpucc/ir"
)

var fuzzDiag = regexp.MustCompile(`^fuzz\.tir:[0-9]+:[0-9]+: error: `)

// FuzzParse: Parse never panics; what it accepts prints, parses and prints
// back identically; what it refuses is reported as fuzz.tir:LINE:COL: error: ...
// The corpus is every golden case's in.tir (and testdata/fuzz/FuzzParse).
func FuzzParse(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no golden cases: %v", err)
	}
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range a.Files {
			if file.Name == "in.tir" {
				f.Add(file.Data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := Parse("fuzz.tir", src)
		if err != nil {
			if m != nil {
				t.Errorf("Parse returned both a module and an error")
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !fuzzDiag.MatchString(line) {
					t.Fatalf("diagnostic %q is not fuzz.tir:LINE:COL: error: MSG", line)
				}
			}
			return
		}
		out := ir.Print(m)
		m2, err := Parse("fuzz.tir", []byte(out))
		if err != nil {
			t.Fatalf("printed module does not parse: %v\n%s", err, out)
		}
		if out2 := ir.Print(m2); out2 != out {
			t.Fatalf("print(parse(print(m))) != print(m)\n--- first\n%s--- second\n%s", out, out2)
		}
	})
}
