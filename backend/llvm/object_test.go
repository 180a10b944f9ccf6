package llvm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
)

const cacheProgram = "func @f(%x: f32[8,16], %y: f32[8,16]) -> f32[8,16] {\n  %s = add %x, %y\n  %r = tanh %s\n  return %r\n}\n"

// kernelObjects lists the cached objects of compiled programs: the thread
// pool's object is in the cache of whichever backend started it first in
// this process, so which test holds it depends on the order tests run.
func kernelObjects(b *Backend) []string {
	objs, _ := filepath.Glob(filepath.Join(b.cache.dir, "[0-9a-f]*.so"))
	pool := b.tc.objectKey(poolSource) + ".so"
	var kept []string
	for _, o := range objs {
		if filepath.Base(o) != pool {
			kept = append(kept, o)
		}
	}
	return kept
}

// TestCorruptObjectRebuilt: an object whose bytes no longer match its
// recorded hash is rebuilt by clang, never loaded.
func TestCorruptObjectRebuilt(t *testing.T) {
	b := testBackend(t)
	exe := compileText(t, "f.tir", []byte(cacheProgram))
	x := differential(t, b, exe.Module, exe.Entry, 1)
	if x.Times.Cached {
		t.Fatal("first compile came from the cache")
	}
	objs := kernelObjects(b)
	if len(objs) != 1 {
		t.Fatalf("%d objects in the cache, want 1", len(objs))
	}
	x = differential(t, b, exe.Module, exe.Entry, 1)
	if !x.Times.Cached || x.Times.Clang != 0 {
		t.Fatalf("second compile: cached %v, clang %v; want the cached object", x.Times.Cached, x.Times.Clang)
	}
	// A corrupt object, e.g. truncated or overwritten with other code.
	if err := os.WriteFile(objs[0], []byte("\x7fELF not the object that was built"), 0o600); err != nil {
		t.Fatal(err)
	}
	x = differential(t, b, exe.Module, exe.Entry, 1)
	if x.Times.Cached || x.Times.Clang == 0 {
		t.Fatalf("after corruption: cached %v, clang %v; want a rebuild", x.Times.Cached, x.Times.Clang)
	}
	if _, err := verifyObject(objs[0], strings.TrimSuffix(objs[0], ".so")+".sha256"); err != nil {
		t.Fatalf("rebuilt object does not verify: %v", err)
	}
}

// TestConcurrentBuildsOfOneKey: compiles of one program that miss the cache
// at once all succeed (each builds in its own directory and renames into
// place), and what they leave in the cache verifies. A shared temporary
// name for the hash record once let one build rename away another's.
func TestConcurrentBuildsOfOneKey(t *testing.T) {
	b := testBackend(t)
	exe := compileText(t, "f.tir", []byte(cacheProgram))
	const builds = 6
	errs := make([]error, builds)
	var wg sync.WaitGroup
	for i := range builds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = b.compile(exe.Module, exe.Entry, nil)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("build %d: %v", i, err)
		}
	}
	objs := kernelObjects(b)
	if len(objs) != 1 {
		t.Fatalf("%d objects in the cache, want 1", len(objs))
	}
	if _, err := verifyObject(objs[0], strings.TrimSuffix(objs[0], ".so")+".sha256"); err != nil {
		t.Fatalf("cached object does not verify: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(b.cache.dir, "build-*")); len(left) != 0 {
		t.Fatalf("build directories left behind: %v", left)
	}
	differential(t, b, exe.Module, exe.Entry, 1)
}

// TestWorldWritableCacheRefused: a cache directory others can write to is
// refused with a clear message, and the user's default directory is used
// instead: the same one every time, so a refused directory leaks nothing
// and costs clang once (each refusal made a temporary directory and
// rebuilt every object).
func TestWorldWritableCacheRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	home, tmp := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	t.Setenv("TMPDIR", tmp)
	b, err := Open(Options{CacheDir: dir})
	if err != nil {
		t.Skipf("llvm backend unavailable: %v", err)
	}
	want := "llvm cache directory: " + dir + " is writable by others (mode 0777): refusing to load code from it"
	if b.CacheWarning != want {
		t.Fatalf("warning %q,\nwant %q", b.CacheWarning, want)
	}
	if fb := filepath.Join(home, "tpucc", "llvm"); b.CacheDir() != fb {
		t.Fatalf("fallback %s, want %s", b.CacheDir(), fb)
	}
	exe := compileText(t, "f.tir", []byte(cacheProgram))
	differential(t, b, exe.Module, exe.Entry, 2)
	if objs, _ := filepath.Glob(filepath.Join(dir, "*")); len(objs) != 0 {
		t.Fatalf("objects written to the refused directory: %v", objs)
	}
	b2, err := Open(Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if x := differential(t, b2, exe.Module, exe.Entry, 2); !x.Times.Cached {
		t.Fatal("a second refusal rebuilt the object: the fallback is not reused")
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("left in TMPDIR: %v", left)
	}
}

// TestFallbackToTemp: when the default directory is the refused one, the
// fallback is tpucc-llvm-UID in the temporary directory, private.
func TestFallbackToTemp(t *testing.T) {
	home, tmp := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(home, "tpucc", "llvm")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	b, err := Open(Options{CacheDir: dir})
	if err != nil {
		t.Skipf("llvm backend unavailable: %v", err)
	}
	fb := filepath.Join(tmp, fmt.Sprintf("tpucc-llvm-%d", os.Getuid()))
	if b.CacheDir() != fb {
		t.Fatalf("fallback %s, want %s", b.CacheDir(), fb)
	}
	if err := ensurePrivate(fb); err != nil {
		t.Fatalf("fallback directory is not private: %v", err)
	}
}

// TestRefusedCacheWarnsOnce: the registered backend (what tpucc run opens)
// says once on stderr why the directory was refused and what is used
// instead; it said nothing.
func TestRefusedCacheWarnsOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	t.Setenv("TPUCC_LLVM_CACHE", dir)
	var out strings.Builder
	warnOut, warnOnce = &out, sync.Once{}
	t.Cleanup(func() { warnOut, warnOnce = os.Stderr, sync.Once{} })
	for range 2 {
		if _, err := openDefault(); err != nil {
			t.Skipf("llvm backend unavailable: %v", err)
		}
	}
	want := "tpucc: warning: llvm cache directory: " + dir + " is writable by others (mode 0777): refusing to load code from it; using " +
		filepath.Join(home, "tpucc", "llvm") + " instead\n"
	if out.String() != want {
		t.Fatalf("stderr %q,\nwant %q", out.String(), want)
	}
}

// TestRunChecksArguments: wrong arguments are errors, never a crash.
func TestRunChecksArguments(t *testing.T) {
	b := testBackend(t)
	exe := compileText(t, "f.tir", []byte(cacheProgram))
	x, err := b.compile(exe.Module, exe.Entry, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := (cpu.RandomInputs(exe.Entry, 1))
	if _, err := x.Run(args[:1]); err == nil || err.Error() != "@f takes 2 arguments, got 1" {
		t.Fatalf("one argument: %v", err)
	}
	if _, err := x.Run([]*backend.Buffer{args[0], nil}); err == nil || err.Error() != "argument 1 of @f: missing (nil), want f32[8,16]" {
		t.Fatalf("nil argument: %v", err)
	}
}

// TestConcurrentRuns: Run is safe for concurrent use; each caller gets its
// own planned memory, so results never mix.
func TestConcurrentRuns(t *testing.T) {
	b := testBackend(t)
	src := []byte("func @f(%x: f32[64,96], %w: f32[96,80]) -> f32[64,80] {\n  %h = matmul %x, %w\n  %r = tanh %h\n  return %r\n}\n")
	exe := compileText(t, "f.tir", src)
	x, err := b.compile(exe.Module, exe.Entry, nil)
	if err != nil {
		t.Fatal(err)
	}
	const callers = 4
	inputs := make([][]*backend.Buffer, callers)
	wants := make([]*backend.Buffer, callers)
	for i := range inputs {
		inputs[i] = cpu.RandomInputs(exe.Entry, int64(i))
		w, err := cpu.Run(exe.Module, exe.Entry, inputs[i])
		if err != nil {
			t.Fatal(err)
		}
		wants[i] = w[0]
	}
	errs := make(chan string, callers*10)
	var wg sync.WaitGroup
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for r := 0; r < 10; r++ {
				got, err := x.Run(inputs[i])
				if err != nil {
					errs <- err.Error()
					return
				}
				if msg := compare(wants[i], got[0]); msg != "" {
					errs <- msg
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
