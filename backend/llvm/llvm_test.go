package llvm

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/oracle"
	"github.com/tpucc/tpucc/internal/progen"
	"github.com/tpucc/tpucc/ir"
	"golang.org/x/tools/txtar"
)

// testBackend opens the backend with a cache private to the test.
func testBackend(t testing.TB) *Backend {
	t.Helper()
	verifyIR.Store(true)
	dir := os.Getenv("TPUCC_LLVM_TEST_CACHE") // keep objects and IR to read them
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "cache")
	}
	b, err := Open(Options{CacheDir: dir})
	if err != nil {
		t.Skipf("llvm backend unavailable: %v", err)
	}
	if b.CacheWarning != "" {
		t.Fatalf("fresh cache refused: %s", b.CacheWarning)
	}
	// The hand-tuned blocking: tests never calibrate (gemmTuner), and
	// their products are blocked alike on every host.
	b.gemm = fixedGemm(staticGemm(b.wide))
	return b
}

// compileText runs the one compile path for the cpu target on src.
func compileText(t testing.TB, name string, src []byte) *engine.Executable {
	t.Helper()
	m, err := tir.Parse(name, src)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	exe, _, err := engine.Compile(m, engine.Config{Target: "cpu"})
	if err != nil {
		t.Fatalf("%s: compile: %v", name, err)
	}
	return exe
}

// differential runs f on both executors with seeded inputs and compares
// every result within progen's oracle tolerance for its dtype (integers
// and bools exactly). It returns the executable.
func differential(t testing.TB, b *Backend, m *ir.Module, f *ir.Func, seed int64) *Executable {
	t.Helper()
	x, err := b.compile(m, f, nil)
	if err != nil {
		t.Fatalf("llvm compile: %v\n%s", err, ir.Print(m))
	}
	agree(t, x, m, f, cpu.RandomInputs(f, seed))
	return x
}

// compileSrc parses the .tir text src and compiles its entry on b.
func compileSrc(t testing.TB, b *Backend, src string) (*ir.Module, *ir.Func, *Executable) {
	t.Helper()
	m, err := tir.Parse("test.tir", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	f := m.Entry()
	x, err := b.compile(m, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m, f, x
}

// agree runs x (compiled from f in m) and the reference executor on in
// and compares every result within the oracle's tolerance; an error on
// one side must be an error on the other.
func agree(t testing.TB, x *Executable, m *ir.Module, f *ir.Func, in []*backend.Buffer) {
	t.Helper()
	want, werr := cpu.Run(m, f, in)
	got, gerr := x.Run(in)
	if werr != nil || gerr != nil {
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("reference error %v, llvm error %v", werr, gerr)
		}
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i := range want {
		if msg := compare(want[i], got[i]); msg != "" {
			t.Fatalf("result %d: %s\nplan:\n%s\nmodule:\n%s", i, msg, x.plan, ir.Print(m))
		}
	}
}

// compare is the oracle's comparison, with its tolerance for the dtype
// (integers and bools exactly).
func compare(want, got *backend.Buffer) string {
	if got.Type().DType != want.Type().DType || !got.Type().SameShape(want.Type()) {
		return fmt.Sprintf("type %s, want %s", got.Type(), want.Type())
	}
	if err := oracle.CompareWithin(want, got, oracle.For(want.Type().DType)); err != nil {
		return err.Error()
	}
	return ""
}

func TestExamples(t *testing.T) {
	b := testBackend(t)
	files, _ := filepath.Glob("../../examples/*.tir")
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			exe := compileText(t, file, src)
			cold := differential(t, b, exe.Module, exe.Entry, 1)
			warm := differential(t, b, exe.Module, exe.Entry, 1)
			if cold.Times.Cached || !warm.Times.Cached || warm.Times.Clang != 0 {
				t.Fatalf("cold compile cached=%v, warm cached=%v clang %v: want clang once, then the cache",
					cold.Times.Cached, warm.Times.Cached, warm.Times.Clang)
			}
			g, f := cold.Coverage()
			t.Logf("generated: %s; reference: %s", g, f)
			if f != "" { // moe_dense.tir's integer div and reduce_sum included
				t.Errorf("the example falls back to the reference for %s", f)
			}
			t.Logf("cold: IR %v, clang %v, load %v; warm: IR %v, load %v", cold.Times.IRGen, cold.Times.Clang,
				cold.Times.Load, warm.Times.IRGen, warm.Times.Load)
		})
	}
}

var (
	flagCorpusSeed = flag.Int64("corpus.seed", 0, "the first progen seed TestCorpus runs")
	flagCorpusN    = flag.Int("corpus.n", 40, "how many progen seeds TestCorpus runs")
)

// TestCorpus runs progen's random programs, after the cpu pipeline, on
// both executors. An instruction left to the reference executor fails
// unless coverage.go documents why (an op in refOps, or a type limit).
//
// -corpus.seed and -corpus.n sweep other seeds:
// go test ./backend/llvm -run 'TestCorpus$' -corpus.seed=20000 -corpus.n=500
func TestCorpus(t *testing.T) {
	b := testBackend(t)
	n := int64(*flagCorpusN)
	if testing.Short() {
		n = min(n, 15)
	}
	gen, ref := map[ir.Op]int{}, map[ir.Op]int{}
	for seed := *flagCorpusSeed; seed < *flagCorpusSeed+n; seed++ {
		m := progen.Generate(seed, progen.Config{})
		exe, _, err := engine.Compile(m, engine.Config{Target: "cpu"})
		if err != nil {
			t.Fatalf("seed %d: compile: %v", seed, err)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			x := differential(t, b, exe.Module, exe.Entry, seed)
			for op, k := range x.plan.generated {
				gen[op] += k
			}
			for op, k := range x.plan.fallback {
				ref[op] += k
			}
			for _, st := range x.plan.steps {
				if st.kind == stepRef && fallbackReason(st.instr) == "" {
					t.Errorf("%s %s runs on the reference executor with no documented reason", st.instr.Op, signature(st.instr))
				}
			}
		})
	}
	t.Logf("generated: %s", opCounts(gen))
	t.Logf("reference: %s", opCounts(ref))
}

// BenchmarkMLP times examples/mlp.tir (64x1024 -> 4096 -> 1024) on one
// goroutine and on all cores:
// go test ./backend/llvm -run '^$' -bench MLP -count 5
func BenchmarkMLP(b *testing.B) {
	for _, threads := range []int{1, 0} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) { benchMLP(b, threads) })
	}
}

func benchMLP(b *testing.B, threads int) {
	be := testBackend(b)
	be.threads = threads
	if threads == 0 {
		be.threads = runtime.NumCPU()
	}
	src, err := os.ReadFile("../../examples/mlp.tir")
	if err != nil {
		b.Fatal(err)
	}
	exe := compileText(b, "mlp.tir", src)
	x, err := be.compile(exe.Module, exe.Entry, nil)
	if err != nil {
		b.Fatal(err)
	}
	args := (cpu.RandomInputs(exe.Entry, 1))
	x.Run(args)
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := x.Run(args); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time is what a loaded machine does not distort.
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestSteadyStateAllocs: a warm executable allocates only its results (a
// Buffer and its storage each) and the result slice.
func TestSteadyStateAllocs(t *testing.T) {
	b := testBackend(t)
	src := []byte("func @f(%x: f32[64,256], %w: f32[256,128], %c: f32[128]) -> f32[64,128] {\n" +
		"  %h = matmul %x, %w\n  %y = add %h, %c\n  %r = relu %y\n  return %r\n}\n")
	exe := compileText(t, "f.tir", src)
	x := differential(t, b, exe.Module, exe.Entry, 3)
	args := (cpu.RandomInputs(exe.Entry, 3))
	if _, err := x.Run(args); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := x.Run(args); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 3 && !testing.Short() {
		t.Fatalf("%v allocations per Run, want at most 3 (one result: Buffer, its bytes, the slice)", allocs)
	}
}

// FuzzDifferential generates a random program from the seed (internal/progen),
// compiles it for the cpu target and fails when this backend and the
// reference executor disagree beyond the oracle's tolerance:
// go test ./backend/llvm -fuzz FuzzDifferential
func FuzzDifferential(f *testing.F) {
	for _, s := range []int64{1, 7, 42, 1000} {
		f.Add(s)
	}
	b := testBackend(f)
	f.Fuzz(func(t *testing.T, seed int64) {
		m := progen.Generate(seed, progen.Config{})
		exe, _, err := engine.Compile(m, engine.Config{Target: "cpu"})
		if err != nil {
			t.Fatalf("seed %d: compile: %v", seed, err)
		}
		differential(t, b, exe.Module, exe.Entry, seed)
	})
}

// TestGoldenModules runs every golden case's in.tir that parses and
// compiles for the cpu target (error cases are skipped) through both
// executors with inputs cpu.RandomInputs(entry, 1).
func TestGoldenModules(t *testing.T) {
	b := testBackend(t)
	var files []string
	filepath.WalkDir("../../testdata/golden", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".txtar") {
			files = append(files, path)
		}
		return err
	})
	ran := 0
	for _, path := range files {
		a, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var src []byte
		for _, f := range a.Files {
			switch f.Name {
			case "in.tir":
				src = f.Data
			case "error":
				src = nil
			}
		}
		if src == nil {
			continue
		}
		m, err := tir.Parse(path, src)
		if err != nil || m.Entry() == nil || cpu.CheckMemory(m, m.Entry(), cpu.DefaultMemoryLimit()) != nil {
			continue
		}
		if m.NumReplicas() > 1 {
			continue // several replicas: refused here (TestReplicasRefused), run by backend/pjrt's TestReplicasRun
		}
		exe, _, err := engine.Compile(m, engine.Config{Target: "cpu"})
		if err != nil || kernelOnly(exe.Module) {
			continue // symbolic shapes, refused for the target, or a custom_call without a fallback
		}
		ran++
		t.Run(strings.TrimPrefix(path, "../../testdata/golden/"), func(t *testing.T) {
			t.Parallel() // clang dominates: keep both cores busy
			differential(t, b, exe.Module, exe.Entry, 1)
		})
	}
	if ran < 100 {
		t.Fatalf("only %d golden modules ran", ran)
	}
}

// kernelOnly reports whether m has a custom_call without a fallback: it runs
// on no CPU backend (TestCustomCallFallback checks the refusal).
func kernelOnly(m *ir.Module) bool {
	found := false
	for _, f := range m.Funcs {
		f.Body.Walk(func(in *ir.Instr) {
			if a, ok := in.Attr.(*ir.CustomCallAttr); ok && a.Fallback == "" {
				found = true
			}
		})
	}
	return found
}

// TestReplicasRefused: the llvm backend runs one process, so a program of
// several replicas is refused by name, not run as one replica.
func TestReplicasRefused(t *testing.T) {
	b := testBackend(t)
	m, err := tir.Parse("r.tir", []byte("replicas = 2\n\nfunc @f(%x: f32[2]) -> f32[2] {\n  %s = all_reduce %x {groups=[[0,1]], kind=sum} : f32[2]\n  return %s\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Compile(&backend.Program{Module: m, Entry: m.Entry()})
	if want := "@f runs as 2 replicas, and the llvm backend runs one: the pjrt and reference backends run replicas"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
