package llvm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
)

const cacheProgram = "func @f(%x: f32[8,16], %y: f32[8,16]) -> f32[8,16] {\n  %s = add %x, %y\n  %r = tanh %s\n  return %r\n}\n"

// TestCorruptObjectRebuilt: an object whose bytes no longer match its
// recorded hash is rebuilt by clang, never loaded.
func TestCorruptObjectRebuilt(t *testing.T) {
	b := testBackend(t)
	exe := compileText(t, "f.tir", []byte(cacheProgram))
	x := differential(t, b, exe.Module, exe.Entry, 1)
	if x.Times.Cached {
		t.Fatal("first compile came from the cache")
	}
	objs, _ := filepath.Glob(filepath.Join(b.cache.dir, "[0-9a-f]*.so"))
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

// TestWorldWritableCacheRefused: a cache directory others can write to is
// refused with a clear message, and a private directory is used instead.
func TestWorldWritableCacheRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	b, err := Open(Options{CacheDir: dir})
	if err != nil {
		t.Skipf("llvm backend unavailable: %v", err)
	}
	want := "llvm cache directory " + dir + " is writable by others (mode 0777): refusing to load code from it"
	if b.CacheWarning != want {
		t.Fatalf("warning %q,\nwant %q", b.CacheWarning, want)
	}
	if b.cache.dir == dir {
		t.Fatal("the refused directory is still used")
	}
	exe := compileText(t, "f.tir", []byte(cacheProgram))
	differential(t, b, exe.Module, exe.Entry, 2)
	if objs, _ := filepath.Glob(filepath.Join(dir, "*")); len(objs) != 0 {
		t.Fatalf("objects written to the refused directory: %v", objs)
	}
	if err := ensurePrivate(b.cache.dir); err != nil {
		t.Fatalf("fallback directory is not private: %v", err)
	}
}

// TestRunChecksArguments: wrong arguments are errors, never a crash.
func TestRunChecksArguments(t *testing.T) {
	b := testBackend(t)
	exe := compileText(t, "f.tir", []byte(cacheProgram))
	x, err := b.compile(exe.Module, exe.Entry)
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
