package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// expSrc is the smallest useful program: one parameter, one op.
const expSrc = "func @f(%x: f32[2,3]) -> f32[2,3] {\n  %0 = exp %x : f32[2,3]\n  return %0\n}\n"

// result is one invocation of run: exit status and what it printed.
type result struct {
	code           int
	stdout, stderr string
}

// tpucc runs the command line in-process with stdin as standard input.
func tpucc(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// writeFile writes a file under dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// firstLine is the first line of s, without its newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// want checks an invocation's exit status, exact stdout and exact first line of stderr.
func (r result) want(t *testing.T, code int, stdout, stderrLine string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit status %d, want %d (stderr %q)", r.code, code, r.stderr)
	}
	if r.stdout != stdout {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, stdout)
	}
	if got := firstLine(r.stderr); got != stderrLine {
		t.Errorf("first line of stderr:\n%s\nwant:\n%s", got, stderrLine)
	}
	for _, bad := range []string{"goroutine", "panic:", "internal error"} {
		if strings.Contains(r.stderr, bad) {
			t.Errorf("stderr has %q:\n%s", bad, r.stderr)
		}
	}
}

// entries lists the names in dir, sorted; nil if dir does not exist.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// noFiles checks that dir holds exactly the names given (no output, no temporaries).
func noFiles(t *testing.T, dir string, keep ...string) {
	t.Helper()
	got := strings.Join(entries(t, dir), " ")
	if want := strings.Join(keep, " "); got != want {
		t.Errorf("%s holds [%s], want [%s]", dir, got, want)
	}
}

const usageHint = "usage: tpucc COMMAND [flags] [MODEL.tir]; 'tpucc help' lists the commands"

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(expSrc))
	for _, c := range []struct {
		name  string
		args  []string
		lines string // the whole of stderr
	}{
		{"no arguments", nil, usageHint + "\n"},
		{"unknown command", []string{"bulid", model}, "tpucc: unknown command \"bulid\"\n" + usageHint + "\n"},
		{"unknown flag", []string{"build", "--fast", model},
			"tpucc build: unknown flag --fast\nusage: tpucc build [flags] MODEL.tir; 'tpucc help build' lists the flags\n"},
		{"unknown flag with value", []string{"check", model, "--x=1"},
			"tpucc check: unknown flag --x\nusage: tpucc check MODEL.tir; 'tpucc help check' lists the flags\n"},
		{"missing file", []string{"build", "-o", filepath.Join(dir, "out.hlo")},
			"tpucc build: missing the model file argument\nusage: tpucc build [flags] MODEL.tir; 'tpucc help build' lists the flags\n"},
		{"two files", []string{"fmt", model, model},
			"tpucc fmt: one model file expected, got 2 arguments: " + model + " " + model + "\nusage: tpucc fmt MODEL.tir; 'tpucc help fmt' lists the flags\n"},
		{"passes takes no file", []string{"passes", model},
			"tpucc passes: takes no arguments, got " + model + "\nusage: tpucc passes; 'tpucc help passes' lists the flags\n"},
		{"flag without value", []string{"build", model, "-o"},
			"tpucc build: flag --o needs a value (FILE)\nusage: tpucc build [flags] MODEL.tir; 'tpucc help build' lists the flags\n"},
		{"bad bool", []string{"build", model, "--verify-each=yes"},
			"tpucc build: flag --verify-each takes no value or =true/=false, not \"yes\"\nusage: tpucc build [flags] MODEL.tir; 'tpucc help build' lists the flags\n"},
		{"help for unknown command", []string{"help", "bulid"},
			"tpucc help: unknown command \"bulid\"\nusage: tpucc help [COMMAND]; 'tpucc help' lists the commands\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := tpucc(t, "", c.args...)
			r.want(t, exitUsage, "", firstLine(c.lines))
			if r.stderr != c.lines {
				t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr, c.lines)
			}
		})
	}
	noFiles(t, dir, "m.tir")
}

func TestHelp(t *testing.T) {
	r := tpucc(t, "", "help")
	if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "tpucc compiles .tir tensor programs") {
		t.Fatalf("tpucc help: status %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	for _, c := range commands {
		if !strings.Contains(r.stdout, "\n  "+c.name+" ") {
			t.Errorf("tpucc help does not list %s:\n%s", c.name, r.stdout)
		}
	}
	// The summaries start in one column (generate's and test-stablehlo's
	// were pushed right of the others').
	listed := strings.Split(strings.SplitN(strings.SplitN(r.stdout, "commands:\n", 2)[1], "\n\n", 2)[0], "\n")
	at := map[int]bool{}
	for _, l := range listed {
		name := strings.Fields(l)[0]
		at[len(l)-len(strings.TrimLeft(l[2+len(name):], " "))] = true
	}
	if len(listed) != len(commands)+1 || len(at) != 1 {
		t.Errorf("tpucc help lists %d commands (want %d), summaries at columns %v:\n%s", len(listed), len(commands)+1, at, r.stdout)
	}
	for _, args := range [][]string{{"-h"}, {"--help"}} {
		if got := tpucc(t, "", args...); got != r {
			t.Errorf("tpucc %s differs from tpucc help", args[0])
		}
	}
	for _, c := range commands {
		h := tpucc(t, "", "help", c.name)
		if h.code != 0 || h.stderr != "" || !strings.HasPrefix(h.stdout, "usage: "+usageLine(c)+"\n\n") {
			t.Errorf("tpucc help %s: status %d, stderr %q, stdout:\n%s", c.name, h.code, h.stderr, h.stdout)
		}
		for _, f := range c.flags {
			if !strings.Contains(h.stdout, "-"+f.name+" ") {
				t.Errorf("tpucc help %s does not describe -%s:\n%s", c.name, f.name, h.stdout)
			}
		}
		// -h anywhere on a command's line shows the same help and does nothing else.
		if got := tpucc(t, "", c.name, "nonexistent.tir", "-h"); got != h {
			t.Errorf("tpucc %s nonexistent.tir -h differs from tpucc help %s", c.name, c.name)
		}
	}
}

func TestHelpBuildSaysWhatTheTargetChanges(t *testing.T) {
	r := tpucc(t, "", "help", "build")
	if !strings.Contains(r.stdout, "The StableHLO carries no layouts; it differs between targets only where assign-layout\nfolded a transpose into a dot_general.") {
		t.Errorf("tpucc help build does not say what --target changes in the output:\n%s", r.stdout)
	}
}

// TestFileErrors covers model files that cannot be read, for every command that reads one.
func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.tir")
	sub := filepath.Join(dir, "sub.tir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, line string
	}{
		{"missing", missing, missing + ": error: no such file or directory"},
		{"directory", sub, sub + ": error: is a directory"},
	}
	if runtime.GOOS == "linux" {
		// Readable by name but failing on read, even for root.
		cases = append(cases, struct{ name, path, line string }{"unreadable", "/proc/self/mem", "/proc/self/mem: error: input/output error"})
	}
	if os.Geteuid() != 0 {
		locked := writeFile(t, dir, "locked.tir", []byte(expSrc))
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct{ name, path, line string }{"permission", locked, locked + ": error: permission denied"})
	}
	for _, c := range cases {
		for _, cmd := range []string{"build", "run", "check", "fmt"} {
			t.Run(c.name+"/"+cmd, func(t *testing.T) {
				out := filepath.Join(dir, "out")
				args := []string{cmd, c.path}
				switch cmd {
				case "build":
					args = append(args, "-o", out)
				case "run":
					args = append(args, "--output-dir", out)
				}
				tpucc(t, "", args...).want(t, exitProgram, "", c.line)
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("%s exists after a failed %s", out, cmd)
				}
			})
		}
	}
}
