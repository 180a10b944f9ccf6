package llvm

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// TestControlFallback: programs with while and case run on the llvm backend
// and agree with the reference executor, on several input seeds (the trip
// counts and case indices depend on them). Their bodies are not compiled
// yet: the while or case is one step the reference executor runs, as
// Coverage reports (the documented exception in docs/CPU_BACKEND.md), while
// the code around it is generated.
func TestControlFallback(t *testing.T) {
	b := testBackend(t)
	files := []string{"op_while", "op_case", "while_nested", "while_collatz", "while_stacked", "while_scan", "case_no_operands", "while_call"}
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			a, err := txtar.ParseFile(filepath.Join("..", "..", "testdata", "golden", "parse", name+".txtar"))
			if err != nil {
				t.Fatal(err)
			}
			var src []byte
			for _, f := range a.Files {
				if f.Name == "in.tir" {
					src = f.Data
				}
			}
			exe := compileText(t, name, src)
			var x *Executable
			for seed := int64(1); seed <= 4; seed++ {
				x = differential(t, b, exe.Module, exe.Entry, seed)
			}
			gen, fb := x.Coverage()
			if !strings.Contains(fb, "while=") && !strings.Contains(fb, "case=") {
				t.Errorf("fallbacks %q, want the while or case there (generated: %q)", fb, gen)
			}
			t.Logf("generated: %s; reference: %s", gen, fb)
		})
	}
}
