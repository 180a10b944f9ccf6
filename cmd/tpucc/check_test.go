package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
)

// sugarSrc uses numpy broadcasting and matmul, which fmt expands into core ops.
const sugarSrc = `// a comment, which fmt drops
func @f(%x: f32[2,3], %b: f32[3], %w: f32[3,2]) -> f32[2,2] {
  %0 = add %x, %b
  %1 = matmul %0, %w : f32[2,2]
  return %1
}
`

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	for _, src := range []string{expSrc, sugarSrc, twoFuncSrc} {
		model := writeFile(t, dir, "m.tir", []byte(src))
		tpucc(t, "", "check", model).want(t, 0, "", "")
		tpucc(t, src, "check", "-").want(t, 0, "", "")
	}
	// Every problem is reported, one line each, in source order.
	bad := writeFile(t, dir, "bad.tir", []byte("func @f(%x: f32[2,3]) -> f32[2,3] {\n  %0 = exp %y : f32[2,3]\n  %1 = foo %x\n  return %1\n}\n"))
	r := tpucc(t, "", "check", bad)
	r.want(t, exitProgram, "", bad+":2:12: error: undefined value %y")
	if want := bad + ":2:12: error: undefined value %y\n" + bad + ":3:8: error: unknown op 'foo'\n"; r.stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, want)
	}
	tpucc(t, "func @f() -> f32[] {\n  return %z\n}\n", "check", "-").want(t, exitProgram, "", "<stdin>:2:10: error: undefined value %z")
}

func TestFmt(t *testing.T) {
	dir := t.TempDir()
	for _, src := range []string{expSrc, sugarSrc, twoFuncSrc} {
		m, err := tir.Parse("m.tir", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		want := ir.Print(m)
		model := writeFile(t, dir, "m.tir", []byte(src))
		tpucc(t, "", "fmt", model).want(t, 0, want, "")
		// The canonical text is a fixed point.
		tpucc(t, want, "fmt", "-").want(t, 0, want, "")
	}
	model := writeFile(t, dir, "m.tir", []byte(sugarSrc))
	tpucc(t, "", "fmt", model).want(t, 0, `func @f(%x: f32[2,3], %b: f32[3], %w: f32[3,2]) -> f32[2,2] {
  %0 = broadcast %b {dims=[1]} : f32[2,3]
  %1 = add %x, %0 : f32[2,3]
  %2 = dot_general %1, %w {lhs_batch=[], lhs_contract=[1], rhs_batch=[], rhs_contract=[0]} : f32[2,2]
  return %2
}
`, "")
}

func TestPasses(t *testing.T) {
	var want strings.Builder
	for _, p := range passes.Default() {
		fmt.Fprintf(&want, "%-14s  %s\n", p.Name, p.Doc)
	}
	r := tpucc(t, "", "passes")
	r.want(t, 0, want.String(), "")
	if !strings.HasPrefix(r.stdout, "canonicalize    rewrites identities") {
		t.Errorf("tpucc passes:\n%s", r.stdout)
	}
}

// TestProgramErrors: inputs that are not programs get one positioned diagnostic from every
// command that reads a program, exit status 1, and no output file.
func TestProgramErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		src  string
		line string // after the file name
	}{
		{"empty", "", ":1:1: error: no functions"},
		{"only a comment", "// nothing here\n", ":1:1: error: no functions"},
		{"random bytes", "\x86\xad\x05\xdc\x98\x7f\x80b0\xa1<\xa0w\x96\xdav\x8fd\aH", ":1:1: error: syntax error: invalid UTF-8 byte 0x86"},
		{"NUL byte", "func @f(%x: f32[2]) -> f32[2] {\n  %0 = exp %x : f32[2]\n\x00  return %0\n}\n", ":3:1: error: syntax error: unexpected character '\\x00'"},
		{"punctuation", "}}{{ %%@@ func func -> ->", ":1:6: error: syntax error: '%' must be followed by a value name ([A-Za-z_][A-Za-z0-9_.]* or digits)"},
		{"type error", "func @f(%x: f32[2,3]) -> f32[2,3] {\n  %0 = exp %x : f32[3,2]\n  return %0\n}\n",
			":2:8: error: result type f32[3,2] of exp does not match the inferred f32[2,3]"},
	} {
		model := writeFile(t, dir, "m.tir", []byte(c.src))
		for _, cmd := range []string{"build", "run", "check", "fmt"} {
			t.Run(c.name+"/"+cmd, func(t *testing.T) {
				out := filepath.Join(dir, "out")
				args := []string{cmd, model}
				switch cmd {
				case "build":
					args = append(args, "-o", out)
				case "run":
					args = append(args, "--output-dir", out)
				}
				tpucc(t, "", args...).want(t, exitProgram, "", model+c.line)
				tpucc(t, c.src, cmd, "-").want(t, exitProgram, "", "<stdin>"+c.line)
				noFiles(t, dir, "m.tir")
			})
		}
	}
}
