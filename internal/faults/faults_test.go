package faults

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	_ "github.com/tpucc/tpucc/backend/llvm" // registers the llvm backend
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/oracle"
	"github.com/tpucc/tpucc/ir"
)

// TestMain runs the child when this binary was started as one.
func TestMain(m *testing.M) {
	if os.Getenv("FAULTS_CHILD") != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// program is testdata/small.tir for engine.Function.
type program struct{ src []byte }

func (p program) Trace([]engine.Arg) (*ir.Module, error) { return tir.Parse("small.tir", p.src) }

func (p program) Eager(args []engine.Arg) ([]*backend.Buffer, error) {
	m, err := p.Trace(args)
	if err != nil {
		return nil, err
	}
	var in []*backend.Buffer
	for _, a := range args {
		in = append(in, a.Tensor)
	}
	return cpu.Run(m, m.Entry(), in)
}

// child compiles and runs small.tir as a user's process would: the llvm
// backend with its object cache in $TPUCC_LLVM_CACHE, programs kept in
// $FAULTS_CACHE ("" in memory only), file sizes capped at $FAULTS_FSIZE
// bytes when set. It prints "ok" when the result matches the reference
// executor's; a failure is one line on stderr and a non-zero status.
func child() int {
	if s := os.Getenv("FAULTS_FSIZE"); s != "" {
		n, _ := strconv.ParseUint(s, 10, 64)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			fmt.Fprintln(os.Stderr, "setrlimit:", err)
			return 2
		}
	}
	src, err := os.ReadFile(filepath.Join("testdata", "small.tir"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	p := program{src}
	m, err := p.Trace(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	in := cpu.RandomInputs(m.Entry(), 1)
	var args []engine.Arg
	for _, b := range in {
		args = append(args, engine.TensorArg(b))
	}
	cache := engine.NewCache(os.Getenv("FAULTS_CACHE"), engine.CacheOptions{Warn: os.Stderr})
	f, err := engine.NewFunction(p, engine.Options{Name: "small", Backend: "llvm", Cache: cache})
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	got, err := f.Call(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	want, err := cpu.Run(m, m.Entry(), in)
	if err != nil || len(got) != len(want) {
		fmt.Fprintf(os.Stderr, "reference: %v, %d results for %d\n", err, len(want), len(got))
		return 2
	}
	for i := range want {
		if err := oracle.CompareWithin(want[i], got[i], oracle.For(want[i].Type().DType)); err != nil {
			fmt.Fprintf(os.Stderr, "wrong result %d: %v\n", i, err)
			return 3
		}
	}
	fmt.Println("ok")
	return 0
}

// dirs are one child's world: its llvm object cache, its program cache
// ("" for none) and its temporary and user cache directories.
type dirs struct{ llvm, cache, tmp string }

// newDirs makes a world of private directories; withCache gives it a
// persistent program cache.
func newDirs(t *testing.T, withCache bool) dirs {
	t.Helper()
	if _, err := exec.LookPath("clang"); err != nil {
		msg := "the llvm backend needs clang (make clang installs it)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; under CI this suite never skips")
		}
		t.Skip(msg)
	}
	base := t.TempDir()
	d := dirs{llvm: filepath.Join(base, "llvm"), tmp: filepath.Join(base, "tmp")}
	if withCache {
		d.cache = filepath.Join(base, "cache")
	}
	for _, p := range []string{d.llvm, d.cache, d.tmp} {
		if p == "" {
			continue
		}
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// command is the child for d, with its file size capped at fsize bytes
// when fsize > 0.
func (d dirs) command(fsize int64) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "FAULTS_CHILD=1", "TPUCC_LLVM_CACHE="+d.llvm, "FAULTS_CACHE="+d.cache,
		"TMPDIR="+d.tmp, "XDG_CACHE_HOME="+filepath.Join(d.tmp, "xdg"), "TPUCC_LLVM_VERIFY=")
	if fsize > 0 {
		cmd.Env = append(cmd.Env, "FAULTS_FSIZE="+strconv.FormatInt(fsize, 10))
	}
	return cmd
}

// result is what a child printed and its exit status.
type result struct {
	stdout, stderr string
	code           int
}

// run runs the child to its end.
func (d dirs) run(t *testing.T, fsize int64) result {
	t.Helper()
	cmd := d.command(fsize)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return result{out.String(), errs.String(), cmd.ProcessState.ExitCode()}
}

// wantOK fails unless the child computed the right result; warnings are
// allowed only when they start with one of allow.
func (r result) wantOK(t *testing.T, allow ...string) {
	t.Helper()
	if r.code != 0 || r.stdout != "ok\n" {
		t.Fatalf("child: status %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, line := range strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n") {
		if line != "" && !hasAnyPrefix(line, allow) {
			t.Errorf("unexpected stderr line %q", line)
		}
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// leftovers lists what dead or failed builds and writes leave behind in
// d: build directories and load copies in the object cache, temporary
// entries in the program cache, anything in the temporary directory
// (the llvm backend's fallback, a leaked tpucc-llvm-*).
func (d dirs) leftovers(t *testing.T) []string {
	t.Helper()
	var left []string
	for _, pat := range []string{"build-*", ".build-*", "load-*"} {
		m, _ := filepath.Glob(filepath.Join(d.llvm, pat))
		left = append(left, m...)
	}
	if d.cache != "" {
		m, _ := filepath.Glob(filepath.Join(d.cache, ".tmp-*"))
		left = append(left, m...)
	}
	es, _ := os.ReadDir(d.tmp)
	for _, e := range es {
		left = append(left, filepath.Join(d.tmp, e.Name()))
	}
	return left
}

// wantClean fails if anything was left behind.
func (d dirs) wantClean(t *testing.T) {
	t.Helper()
	if left := d.leftovers(t); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// copyFrom fills d's caches with the regular files of src's.
func (d dirs) copyFrom(t *testing.T, src dirs) {
	t.Helper()
	copyFiles(t, src.llvm, d.llvm)
	if d.cache != "" && src.cache != "" {
		copyFiles(t, src.cache, d.cache)
	}
}

func copyFiles(t *testing.T, from, to string) {
	t.Helper()
	es, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// noProcessUsing waits (up to ten seconds, for the kernel to deliver
// parent-death signals) until no process's command line names path, and
// fails if one still does, killing it.
func noProcessUsing(t *testing.T, path string) {
	t.Helper()
	var pids []int
	for range 100 {
		if pids = processesUsing(path); len(pids) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Fatalf("processes %v still use %s", pids, path)
}

// processesUsing lists the live (not zombie) processes whose command line
// holds path.
func processesUsing(path string) []int {
	var pids []int
	es, _ := os.ReadDir("/proc")
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(path)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitFor polls until found reports true or the child exits; it reports
// whether found did.
func waitFor(exited <-chan struct{}, found func() bool) bool {
	for range 1200 {
		if found() {
			return true
		}
		select {
		case <-exited:
			return false
		case <-time.After(25 * time.Millisecond):
		}
	}
	return false
}

// exists reports whether a glob matches anything.
func exists(pattern string) bool {
	m, _ := filepath.Glob(pattern)
	return len(m) > 0
}
