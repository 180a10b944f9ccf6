package passes_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/target"
)

// fuseModules are the programs fusion is checked on: the examples and the
// inputs of the fuse golden cases.
func fuseModules(t *testing.T) map[string]string {
	t.Helper()
	srcs := map[string]string{}
	for _, name := range []string{"mlp", "moe_dense", "transformer_block"} {
		file := filepath.Join("..", "examples", name+".tir")
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		srcs[file] = string(src)
	}
	files, err := filepath.Glob(filepath.Join("..", "testdata", "golden", "passes", "fuse", "*.txtar"))
	if err != nil || len(files) < 15 {
		t.Fatalf("fuse golden cases: %d, %v; want at least 15", len(files), err)
	}
	for _, file := range files {
		a, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if f.Name == "in.tir" {
				srcs[file] = string(f.Data)
			}
		}
	}
	return srcs
}

// TestFusePreservesResults: the CPU executor runs a fused program's bodies with
// the same kernels, so its results equal the unfused program's bit for bit,
// with and without a target.
func TestFusePreservesResults(t *testing.T) {
	targets := []passes.Target{nil, target.V5e, target.V6e}
	for file, src := range fuseModules(t) {
		for _, target := range targets {
			name := "none"
			if target != nil {
				name = target.Name()
			}
			unfused := parseRun(t, file, src, target, []string{"fuse"})
			fused := parseRun(t, file, src, target, nil)
			f := unfused.Entry()
			if len(f.Params) > 0 && !f.Params[0].Type.IsStatic() {
				continue
			}
			n := 0
			fused.Entry().Body.Walk(func(in *ir.Instr) {
				if in.Op == ir.OpFusion {
					n++
				}
			})
			if strings.Contains(file, "examples") && n == 0 {
				t.Errorf("%s on %s: no fusion", file, name)
			}
			args := cpu.RandomInputs(f, 7)
			want, err := cpu.Run(unfused, f, args)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			got, err := cpu.Run(fused, fused.Entry(), cpu.RandomInputs(fused.Entry(), 7))
			if err != nil {
				t.Fatalf("%s fused on %s: %v", file, name, err)
			}
			for i := range want {
				if !sameTensor(want[i], got[i]) {
					t.Errorf("%s on %s: result %d differs after fusion", file, name, i)
				}
			}
		}
	}
}

func parseRun(t *testing.T, file, src string, target passes.Target, disable []string) *ir.Module {
	t.Helper()
	m, err := tir.Parse(file, []byte(src))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	opts := passes.Options{VerifyEach: true, Eval: cpu.Folder{}, Disable: disable, Target: target}
	if err := passes.Run(m, passes.Default(), opts); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	// Every fused dump parses back to itself.
	printed := ir.Print(m)
	m2, err := tir.Parse("printed.tir", []byte(printed))
	if err != nil {
		t.Fatalf("%s: the fused program does not parse: %v\n%s", file, err, printed)
	}
	if again := ir.Print(m2); again != printed {
		t.Fatalf("%s: print -> parse -> print is not the identity:\n%s\nthen\n%s", file, printed, again)
	}
	return m
}

func sameTensor(a, b *backend.Buffer) bool { return a.Equal(b) }
