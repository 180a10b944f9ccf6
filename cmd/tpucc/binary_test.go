package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
)

// TestBinary builds tpucc and runs it as a user would, checking exit statuses and that no
// input ever produces a Go panic or stack trace.
func TestBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tpucc")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	model := writeFile(t, dir, "m.tir", []byte(expSrc))
	empty := writeFile(t, dir, "empty.tir", nil)
	random := writeFile(t, dir, "random.tir", []byte("\x86\xad\x05\xdc\x98\x7f\x80b0\xa1<\xa0w\x96"))
	big := writeFile(t, dir, "big.tir", []byte("func @f(%x: f32[100000000000]) -> f32[100000000000] {\n  %0 = exp %x : f32[100000000000]\n  return %0\n}\n"))
	f64 := writeNPY(t, dir, "f64.npy", npy.Of([]int64{3}, []float64{1, 2, 3}))
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args   []string
		stdin  string
		code   int
		stdout string // prefix
		line   string // first line of stderr
	}{
		{[]string{"build", model}, "", 0, "module @jit_f attributes", ""},
		{[]string{"fmt", "-"}, expSrc, 0, expSrc, ""},
		{[]string{"check", model}, "", 0, "", ""},
		{[]string{"passes"}, "", 0, "canonicalize ", ""},
		{[]string{"help"}, "", 0, "tpucc compiles", ""},
		{[]string{"run", model, "--seed", "2"}, "", 0, "result0: f32[2,3] = [", ""},
		{nil, "", 2, "", usageHint},
		{[]string{"bulid", model}, "", 2, "", `tpucc: unknown command "bulid"`},
		{[]string{"build", model, "--fast"}, "", 2, "", "tpucc build: unknown flag --fast"},
		{[]string{"run", model, "--input", "y=" + f64}, "", 2, "", "tpucc run: --input y: @f has no parameter %y (it has %x)"},
		{[]string{"build", empty, "-o", out}, "", 1, "", empty + ":1:1: error: no functions"},
		{[]string{"check", random}, "", 1, "", random + ":1:1: error: syntax error: invalid UTF-8 byte 0x86"},
		{[]string{"fmt", dir}, "", 1, "", dir + ": error: is a directory"},
		{[]string{"run", filepath.Join(dir, "nope.tir")}, "", 1, "", filepath.Join(dir, "nope.tir") + ": error: no such file or directory"},
		{[]string{"run", big, "--output-dir", out}, "", 1, "", big + ":1:9: error: %x needs 400000000000 bytes (f32[100000000000]); the limit is "},
		{[]string{"run", model, "--input", "x=" + f64, "--output-dir", out}, "", 1, "", f64 + ": error: input %x wants f32[2,3], file has f64[3]"},
	} {
		cmd := exec.Command(bin, c.args...)
		cmd.Stdin = strings.NewReader(c.stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		name := strings.Join(c.args, " ")
		if code != c.code {
			t.Errorf("tpucc %s: exit status %d, want %d; stderr:\n%s", name, code, c.code, stderr.String())
		}
		if !strings.HasPrefix(stdout.String(), c.stdout) || (c.stdout == "" && stdout.Len() > 0) {
			t.Errorf("tpucc %s: stdout:\n%s\nwant it to start with:\n%s", name, stdout.String(), c.stdout)
		}
		if got := firstLine(stderr.String()); !strings.HasPrefix(got, c.line) || (c.line == "" && got != "") {
			t.Errorf("tpucc %s: first line of stderr:\n%s\nwant:\n%s", name, got, c.line)
		}
		for _, bad := range []string{"goroutine", "panic:"} {
			if strings.Contains(stderr.String(), bad) {
				t.Errorf("tpucc %s: stderr has %q:\n%s", name, bad, stderr.String())
			}
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("tpucc %s: %s exists", name, out)
		}
	}
}

// TestInternalError: a panic anywhere below run becomes one line and exit status 1.
func TestInternalError(t *testing.T) {
	saved := commands
	defer func() { commands = saved }()
	commands = append(commands[:len(commands):len(commands)], &command{name: "boom", run: func(*env, *parsed) error {
		var m *ir.Module
		return errors.New(m.Funcs[0].Name) // a nil dereference
	}})
	r := tpucc(t, "", "boom")
	if r.code != exitProgram || r.stdout != "" || r.stderr != "tpucc: internal error: runtime error: invalid memory address or nil pointer dereference\n" {
		t.Errorf("status %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestDiag: how errors of the program's stages are printed.
func TestDiag(t *testing.T) {
	pos := ir.Pos{File: "a.tir", Line: 2, Col: 3}
	for _, c := range []struct {
		err  error
		want string
	}{
		{ir.Errorf(pos, "bad"), "a.tir:2:3: error: bad"},
		{ir.Errorf(ir.Pos{Line: 4, Col: 1}, "no file"), "m.tir:4:1: error: no file"},
		{ir.Errorf(ir.Pos{}, "nowhere"), "m.tir: error: nowhere"},
		{&ir.ErrorList{Errs: []*ir.Error{ir.Errorf(pos, "one"), ir.Errorf(ir.Pos{Line: 5, Col: 6}, "two")}}, "a.tir:2:3: error: one\nm.tir:5:6: error: two"},
		{errors.New("plain"), "m.tir: error: plain"},
		{&passes.PanicError{Pass: "cse", Func: "f", Value: "oops"}, "tpucc: internal error: pass cse panicked on @f: oops"},
		{errors.New("internal error in the cpu executor running @f: oops"), "tpucc: internal error in the cpu executor running @f: oops"},
	} {
		if got := diag("m.tir", c.err).Error(); got != c.want {
			t.Errorf("diag(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
