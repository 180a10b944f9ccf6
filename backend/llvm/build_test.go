package llvm

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBuildChild is the child of the build tests: it compiles
// cacheProgram with the cache in $TPUCC_TEST_BUILD_CHILD (using the clang
// on its PATH, a wrapper the parent wrote) and checks its results.
func TestBuildChild(t *testing.T) {
	dir := os.Getenv("TPUCC_TEST_BUILD_CHILD")
	if dir == "" {
		t.Skip("run by TestKilledBuildLeavesNothing and TestOneBuildAcrossProcesses")
	}
	b, err := Open(Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	exe := compileText(t, "f.tir", []byte(cacheProgram))
	differential(t, b, exe.Module, exe.Entry, 4)
}

// clangWrapper writes a clang for children's PATH that runs body for a
// kernel build (an argument names kernels.ll, or partN.ll when a program
// is built in parts, split.go) and the real clang for
// everything else (--version, the thread pool); it returns the PATH.
func clangWrapper(t *testing.T, body string) string {
	t.Helper()
	real, err := exec.LookPath("clang")
	if err != nil {
		t.Skip("no clang")
	}
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\ncase \"$*\" in *kernels.ll*|*/part[0-9]*.ll*) %s;; esac\nexec %s \"$@\"\n", body, real)
	if err := os.WriteFile(filepath.Join(dir, "clang"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir + string(os.PathListSeparator) + os.Getenv("PATH")
}

// buildChild starts this test binary as TestBuildChild on cache.
func buildChild(path, cache string, out *bytes.Buffer) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBuildChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PATH="+path, "TPUCC_TEST_BUILD_CHILD="+cache)
	cmd.Stdout, cmd.Stderr = out, out
	return cmd
}

// TestKilledBuildLeavesNothing: a run SIGKILLed while clang builds leaves
// no clang running (it ran on; 36 were found after 18 kills), and the
// build directory it left is collected by the next process to open the
// cache, which then builds and computes right.
func TestKilledBuildLeavesNothing(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "clang.pid")
	path := clangWrapper(t, fmt.Sprintf("echo $$ > %s; exec sleep 600", pidFile))
	cache := filepath.Join(t.TempDir(), "cache")
	var out bytes.Buffer
	child := buildChild(path, cache, &out)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	pid := waitForPid(t, pidFile, child)
	child.Process.Kill()
	child.Wait()
	if !waitGone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("clang (pid %d) outlived its killed parent", pid)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "build-*")); len(left) != 1 {
		t.Fatalf("build directories after the kill: %v, want the killed one", left)
	}
	swept.Delete(cache)
	b, err := Open(Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "build-*")); len(left) != 0 {
		t.Fatalf("build directories left after the next open: %v", left)
	}
	exe := compileText(t, "f.tir", []byte(cacheProgram))
	differential(t, b, exe.Module, exe.Entry, 4)
}

// TestOneBuildAcrossProcesses: two processes that miss the same key at
// once run clang once between them (each ran its own); the second finds
// the first's object once the lock is free, and both compute right.
func TestOneBuildAcrossProcesses(t *testing.T) {
	count := filepath.Join(t.TempDir(), "builds")
	path := clangWrapper(t, fmt.Sprintf("echo build >> %s; sleep 1", count))
	cache := filepath.Join(t.TempDir(), "cache")
	var outs [2]bytes.Buffer
	var children [2]*exec.Cmd
	for i := range children {
		children[i] = buildChild(path, cache, &outs[i])
		if err := children[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range children {
		if err := c.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i].String())
		}
	}
	data, _ := os.ReadFile(count)
	if n := strings.Count(string(data), "build\n"); n != 1 {
		t.Fatalf("%d kernel builds by two processes, want 1", n)
	}
}

// waitForPid waits for the wrapper to write its pid (the child is then
// running clang), failing if the child exits first.
func waitForPid(t *testing.T, file string, child *exec.Cmd) int {
	t.Helper()
	for range 600 {
		if data, err := os.ReadFile(file); err == nil && strings.HasSuffix(string(data), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(100 * time.Millisecond)
	}
	child.Process.Kill()
	t.Fatal("the child never started clang")
	return 0
}

// waitGone reports whether pid has exited (or is a zombie no one reaps),
// waiting up to ten seconds for the kernel to deliver the signal.
func waitGone(pid int) bool {
	for range 100 {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// TestCompileRunsInClangsProcess: the compile step's cc1 runs inside the
// clang that runTool started (clang -### says "(in-process)"), so the
// parent-death signal reaches the compiler itself. Compiling and linking
// in one run spawned cc1 as a grandchild, which outlived a killed run.
func TestCompileRunsInClangsProcess(t *testing.T) {
	tc, err := findToolchain()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	ll := filepath.Join(dir, "k.ll")
	if err := os.WriteFile(ll, []byte("define i32 @f() {\n  ret i32 0\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append(compileArgs(filepath.Join(dir, "k.o"), ll), "-###")
	out, err := exec.Command(tc.clang, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "(in-process)") {
		t.Fatalf("clang runs its compiler in another process:\n%s", out)
	}
}
