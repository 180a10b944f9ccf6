package llvm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// tirFunc is a engine.Program given as .tir text of fixed shapes.
type tirFunc struct{ src string }

func (p tirFunc) Trace([]engine.Arg) (*ir.Module, error) { return tir.Parse("p.tir", []byte(p.src)) }

func (p tirFunc) Eager(args []engine.Arg) ([]*backend.Buffer, error) {
	m, err := p.Trace(args)
	if err != nil {
		return nil, err
	}
	return cpu.Run(m, m.Entry(), argBuffers(args))
}

func argBuffers(args []engine.Arg) []*backend.Buffer {
	var bs []*backend.Buffer
	for _, a := range args {
		bs = append(bs, a.Tensor)
	}
	return bs
}

// callOnce makes a Function over a fresh engine.Cache on dir (what a new
// process sees) whose llvm backend keeps objects in llvmDir, calls it and
// checks the result against the reference executor.
func callOnce(t *testing.T, dir, llvmDir string) engine.Stats {
	t.Helper()
	t.Setenv("TPUCC_LLVM_CACHE", llvmDir)
	p := tirFunc{cacheProgram}
	f, err := engine.NewFunction(p, engine.Options{Name: "f", Backend: "llvm", Cache: engine.NewCache(dir, engine.CacheOptions{})})
	if err != nil {
		t.Skipf("llvm backend unavailable: %v", err)
	}
	m, _ := p.Trace(nil)
	in := cpu.RandomInputs(m.Entry(), 3)
	var args []engine.Arg
	for _, b := range in {
		args = append(args, engine.TensorArg(b))
	}
	got, err := f.Call(args)
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.Eager(args)
	if err != nil {
		t.Fatal(err)
	}
	compareBuffers(t, got, want)
	return f.Stats()
}

// TestRestartRunsNoClang: a second process-like load (a fresh runtime over
// the same cache directory, and an empty object cache) runs the object the
// runtime's entry recorded, without running clang.
func TestRestartRunsNoClang(t *testing.T) {
	testBackend(t) // the thread pool's object, built once per process, is not counted
	dir := cacheDir(t)
	first := ClangRuns()
	if s := callOnce(t, dir, filepath.Join(t.TempDir(), "llvm1")); s.Compiles != 1 {
		t.Fatalf("first process: %s", s)
	}
	if ClangRuns() != first+1 {
		t.Fatalf("first process ran clang %d times, want 1", ClangRuns()-first)
	}
	before := ClangRuns()
	if s := callOnce(t, dir, filepath.Join(t.TempDir(), "llvm2")); s.Compiles != 0 || s.DiskHits != 1 {
		t.Fatalf("restarted: %s", s)
	}
	if n := ClangRuns() - before; n != 0 {
		t.Errorf("restarted process ran clang %d times, want 0", n)
	}
}

// TestCompileExpectingRefusesBadCode: recorded code whose bytes do not hash
// to its ID, or that was built from other IR, is rebuilt, never loaded.
func TestCompileExpectingRefusesBadCode(t *testing.T) {
	b := testBackend(t)
	exe := compileText(t, "f.tir", []byte(cacheProgram))
	x := differential(t, b, exe.Module, exe.Entry, 1)
	code, ok := x.NativeCode()
	if !ok {
		t.Fatal("no native code")
	}
	other := compileText(t, "g.tir", []byte("func @g(%x: f32[8,16], %y: f32[8,16]) -> f32[8,16] {\n  %s = mul %x, %y\n  return %s\n}\n"))
	og := differential(t, b, other.Module, other.Entry, 1)
	ocode, _ := og.NativeCode()
	corrupt := append([]byte{}, code.Data...)
	corrupt[len(corrupt)/2] ^= 0xff
	cases := map[string]backend.NativeCode{
		"good":          code,
		"corrupt bytes": {ID: code.ID, Data: corrupt},
		"other program": {ID: ocode.ID, Data: ocode.Data},
		"bad id":        {ID: "llvm-object md5:00", Data: code.Data},
	}
	for name, c := range cases {
		b2, err := Open(Options{CacheDir: filepath.Join(t.TempDir(), "empty")})
		if err != nil {
			t.Fatal(err)
		}
		before := ClangRuns()
		got, err := b2.CompileExpecting(&backend.Program{Module: exe.Module, Entry: exe.Entry}, c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantRuns := int64(1)
		if name == "good" {
			wantRuns = 0
		}
		if n := ClangRuns() - before; n != wantRuns {
			t.Errorf("%s: clang ran %d times, want %d", name, n, wantRuns)
		}
		in := cpu.RandomInputs(exe.Entry, 2)
		want, _ := cpu.Run(exe.Module, exe.Entry, in)
		out, err := got.Run(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		compareBuffers(t, out, want)
	}
}

// compareBuffers compares results with the oracle's tolerance.
func compareBuffers(t *testing.T, got, want []*backend.Buffer) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i := range want {
		if msg := compare(want[i], got[i]); msg != "" {
			t.Fatalf("result %d: %s", i, msg)
		}
	}
}

// cacheDir is a new directory for a persistent cache. t.TempDir's are made
// with os.Mkdir(0777) under the umask (0755 as a rule), which the cache
// refuses as open to others; a user's cache is created 0700.
func cacheDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
