package compile_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/internal/oracle"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/tensor"
)

// mlp's definition is where the recompile log says the function is (see mlpAt).
func mlp(x, w1, b1, w2 *tensor.Tensor) *tensor.Tensor {
	return x.MatMul(w1).Add(b1).Relu().MatMul(w2)
}

// mlpAt is how logs name mlp: mlp (compile_test.go:LINE), LINE that of its func line.
func mlpAt(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("compile_test.go")
	if err != nil {
		t.Fatal(err)
	}
	before, _, _ := strings.Cut(string(src), "\nfunc mlp(")
	return fmt.Sprintf("mlp (compile_test.go:%d)", strings.Count(before, "\n")+2)
}

func weights() (w1, b1, w2 *tensor.Tensor) {
	return tensor.Random(1, ir.F32, 8, 16), tensor.Random(2, ir.F32, 16), tensor.Random(3, ir.F32, 16, 4)
}

// memory is a memory-only cache, so tests never touch ~/.cache.
func memory() compile.Option { return compile.Cache(engine.NewCache("", engine.CacheOptions{})) }

// agree reports how a (a compiled function's result, on the default backend:
// LLVM kernels in f32) differs from b (eager ops, pinned to the reference
// executor by TestMain) beyond the oracle's tolerance for the dtype, the one
// every backend is held to against the reference; "" when they agree.
func agree(a, b *tensor.Tensor) string {
	if err := oracle.Compare(b.Buffer(), a.Buffer()); err != nil {
		return err.Error()
	}
	return ""
}

func TestFuncMatchesEagerAndReuses(t *testing.T) {
	w1, b1, w2 := weights()
	var log bytes.Buffer
	fast := compile.Func(mlp, memory(), compile.Log(&log))
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 40; i++ {
		b := int64(1 + rng.Intn(40))
		x := tensor.Random(int64(10+i), ir.F32, b, 8)
		if d := agree(fast(x, w1, b1, w2), mlp(x, w1, b1, w2)); d != "" {
			t.Fatalf("batch %d: %s", b, d)
		}
	}
	first := strings.SplitN(log.String(), "\n", 2)[0]
	if !strings.HasPrefix(first, "recompiling "+mlpAt(t)+": arg 0 dim 0 changed ") || !strings.Contains(first, "; now dynamic, bucket ") {
		t.Errorf("log:\n%s", log.String())
	}
}

func TestRecompileLogExact(t *testing.T) {
	w1, b1, w2 := weights()
	var log bytes.Buffer
	c, err := compile.New(mlp, memory(), compile.Log(&log))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int64{32, 48, 64, 33} {
		if _, err := c.Call(tensor.Random(b, ir.F32, b, 8), w1, b1, w2); err != nil {
			t.Fatal(err)
		}
	}
	want := "recompiling " + mlpAt(t) + ": arg 0 dim 0 changed 32 -> 48; now dynamic, bucket 64\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", &log, want)
	}
	s := c.Stats()
	if s.Compiles != 2 || s.Hits != 2 || s.Misses != 2 || s.PaddedCalls != 2 {
		t.Errorf("stats: %s", s)
	}
}

func TestConcurrentCallersCompileOncePerSignature(t *testing.T) {
	w1, b1, w2 := weights()
	fast := compile.Func(mlp, memory(), compile.NoAutoDynamic())
	c, _ := compile.New(mlp, memory(), compile.NoAutoDynamic())
	xs := []*tensor.Tensor{tensor.Random(1, ir.F32, 2, 8), tensor.Random(2, ir.F32, 3, 8), tensor.Random(3, ir.F32, 5, 8), tensor.Random(4, ir.F32, 7, 8)}
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 8; i++ {
				x := xs[(g+i)%4]
				want := mlp(x, w1, b1, w2)
				if d := agree(fast(x, w1, b1, w2), want); d != "" {
					t.Error(d)
				}
				out, err := c.Call(x, w1, b1, w2)
				if err != nil {
					t.Error(err)
				} else if d := agree(out[0], want); d != "" {
					t.Error(d)
				}
			}
		}()
	}
	wg.Wait()
	if s := c.Stats(); s.Compiles != 4 || s.Misses != 4 || s.Hits != 16*8-4 {
		t.Errorf("stats: %s", s)
	}
}

func TestShapeErrorsAreTheEagerOnes(t *testing.T) {
	bad := func(x, y *tensor.Tensor) *tensor.Tensor { return x.Add(y) }
	x, y := tensor.Zeros(ir.F32, 2, 3), tensor.Zeros(ir.F32, 4)
	eager := func() (p any) {
		defer func() { p = recover() }()
		bad(x, y)
		return nil
	}()
	compiled := func() (p any) {
		defer func() { p = recover() }()
		compile.Func(bad, memory())(x, y)
		return nil
	}()
	ee, ok1 := eager.(*tensor.Error)
	ce, ok2 := compiled.(*tensor.Error)
	if !ok1 || !ok2 || ee.Msg != ce.Msg || ee.Pos.Line != ce.Pos.Line || !strings.HasSuffix(ce.Pos.File, "compile_test.go") {
		t.Fatalf("eager %v, compiled %v", eager, compiled)
	}
	c, _ := compile.New(bad, memory())
	if _, err := c.Call(x, y); err == nil || err.Error() != ce.Error() {
		t.Errorf("Call: %v, want %v", err, ce)
	}
	// A function with an error result gets the error there.
	withErr := compile.Func(func(x, y *tensor.Tensor) (*tensor.Tensor, error) { return bad(x, y), nil }, memory())
	if out, err := withErr(x, y); out != nil || !errors.As(err, new(*tensor.Error)) || err.Error() != ce.Error() {
		t.Errorf("error result: %v, %v", out, err)
	}
	// Other panics pass through unchanged.
	boom := compile.Func(func(x *tensor.Tensor) *tensor.Tensor { panic("boom") }, memory())
	if p := func() (p any) {
		defer func() { p = recover() }()
		boom(x)
		return nil
	}(); p != "boom" {
		t.Errorf("panic: %v", p)
	}
}

func TestStaticArguments(t *testing.T) {
	type act string
	f := func(x *tensor.Tensor, k int8, scale float64, a act, neg bool) *tensor.Tensor {
		y := x.Mul(tensor.Scalar(scale*float64(k), x.DType()))
		if a == "relu" {
			y = y.Relu()
		}
		if neg {
			y = y.Neg()
		}
		return y
	}
	c, err := compile.New(f, memory())
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.Random(5, ir.F32, 4)
	for _, tc := range []struct {
		k     any
		scale any
		a     act
		neg   bool
	}{{int8(2), 0.5, "relu", false}, {3, 0.5, "relu", false}, {int8(3), float32(0.5), "id", true}, {int8(2), 0.5, "relu", false}} {
		out, err := c.Call(x, tc.k, tc.scale, tc.a, tc.neg)
		if err != nil {
			t.Fatal(err)
		}
		k := int8(fmt.Sprint(tc.k)[0] - '0')
		if d := agree(out[0], f(x, k, 0.5, tc.a, tc.neg)); d != "" {
			t.Error(d)
		}
	}
	if s := c.Stats(); s.Compiles != 3 || s.Hits != 1 {
		t.Errorf("stats: %s", s)
	}
	for _, bad := range []struct {
		k    any
		want string
	}{{300, "f: argument 1 is int, want int8"}, {"2", "f: argument 1 is string, want int8"}, {2.5, "f: argument 1 is float64, want int8"}} {
		if _, err := c.Call(x, bad.k, 0.5, act("id"), false); err == nil || !strings.HasSuffix(err.Error(), bad.want[1:]) {
			t.Errorf("Call(%v): %v, want %s", bad.k, err, bad.want)
		}
	}
	if _, err := compile.New(func(x []float32) *tensor.Tensor { return nil }); err == nil ||
		err.Error() != "compile: parameter 0 of func([]float32) *tensor.Tensor is []float32; want *tensor.Tensor or a static bool, integer, float or string" {
		t.Errorf("New: %v", err)
	}
	if _, err := compile.New(f, compile.Dynamic(1, 0)); err == nil ||
		err.Error() != "compile: Dynamic(1, 0): parameter 1 of func(*tensor.Tensor, int8, float64, compile_test.act, bool) *tensor.Tensor is not a tensor" {
		t.Errorf("New: %v", err)
	}
	if _, err := compile.New(func(x *tensor.Tensor) int { return 0 }); err == nil ||
		err.Error() != "compile: result 0 of func(*tensor.Tensor) int is int; want *tensor.Tensor (and an optional final error)" {
		t.Errorf("New: %v", err)
	}
}

func TestLowerIsTheAOTText(t *testing.T) {
	c, err := compile.New(mlp, compile.Name("mlp"), memory())
	if err != nil {
		t.Fatal(err)
	}
	w1, b1, w2 := weights()
	got, err := c.Lower(ir.Tensor(ir.F32, 64, 8), w1, b1, w2)
	if err != nil {
		t.Fatal(err)
	}
	// The same trace by hand, optimised and lowered.
	tr := trace.New("mlp")
	var ps []*tensor.Tensor
	for i, ty := range []ir.Type{ir.Tensor(ir.F32, 64, 8), w1.Type(), b1.Type(), w2.Type()} {
		ps = append(ps, tensor.Traced(tr.Param(fmt.Sprintf("arg%d", i), ty), tr))
	}
	m, err := tr.Finish(mlp(ps[0], ps[1], ps[2], ps[3]).Value())
	if err != nil {
		t.Fatal(err)
	}
	cpuTarget, _ := engine.LookupTarget("cpu")
	if err := passes.Run(m, passes.Default(), passes.Options{Eval: cpu.Folder{}, Target: cpuTarget}); err != nil {
		t.Fatal(err)
	}
	want, err := stablehlo.Lower(m, stablehlo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got != want || !strings.HasPrefix(got, "module @jit_mlp ") {
		t.Errorf("Lower:\n%s\nwant:\n%s", got, want)
	}
	// The lowered program serves a call of those shapes.
	if _, err := c.Call(tensor.Random(9, ir.F32, 64, 8), w1, b1, w2); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Compiles != 1 || s.Hits != 1 {
		t.Errorf("stats: %s", s)
	}
	if _, err := c.Lower(ir.Tensor(ir.F32, 64, 8), w1, b1); err == nil || err.Error() != "mlp takes 4 arguments, got 3" {
		t.Errorf("Lower: %v", err)
	}
}

func TestNestedCompiledFunctionsInline(t *testing.T) {
	innerF := compile.Func(func(x *tensor.Tensor) *tensor.Tensor { return x.Exp() }, memory())
	outer := compile.Func(func(x *tensor.Tensor) *tensor.Tensor { return innerF(x).Mul(x) }, memory())
	x := tensor.Random(1, ir.F32, 3)
	if d := agree(outer(x), x.Exp().Mul(x)); d != "" {
		t.Error(d)
	}
}

func TestPaddingDecisionsOnRealCode(t *testing.T) {
	// Summing exp over the rows would add exp(0) per padded row.
	var log bytes.Buffer
	expSum := compile.Func(func(x *tensor.Tensor) *tensor.Tensor { return x.Exp().Sum(0) }, compile.Name("expsum"), memory(), compile.Log(&log))
	// A mean divides by the row count, a Go value the trace bakes in.
	mean := func(x *tensor.Tensor) *tensor.Tensor {
		return x.Sum(0).Mul(tensor.Scalar(1/float64(x.Shape()[0]), x.DType()))
	}
	var mlog bytes.Buffer
	fastMean := compile.Func(mean, compile.Name("mean"), memory(), compile.Log(&mlog))
	for _, b := range []int64{3, 5, 6} {
		x := tensor.Random(b, ir.F32, b, 4)
		if d := agree(expSum(x), x.Exp().Sum(0)); d != "" {
			t.Errorf("expsum %d: %s", b, d)
		}
		if d := agree(fastMean(x), mean(x)); d != "" {
			t.Errorf("mean %d: %s", b, d)
		}
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "arg 0 dim 0 changed 3 -> 5; not padded: reduce_sum at compile_test.go:") ||
		!strings.HasSuffix(lines[0], " sums over arg 0 dim 0, whose padding is 1.0, not 0.0") {
		t.Errorf("expsum log:\n%s", &log)
	}
	if l := strings.Split(mlog.String(), "\n")[0]; !strings.Contains(l, "not padded: the program traced at 8 differs from the one traced at 5 at compile_test.go:") ||
		!strings.HasSuffix(l, "(the value of constant)") {
		t.Errorf("mean log:\n%s", &mlog)
	}
}

func TestLimitPolicies(t *testing.T) {
	scale := func(x *tensor.Tensor, k int) *tensor.Tensor { return x.Mul(tensor.Scalar(float64(k), x.DType())) }
	x := tensor.Random(1, ir.F32, 2)
	var warn bytes.Buffer
	eager := compile.Func(scale, memory(), compile.RecompileLimit(2), compile.OnLimit(compile.LimitEager), compile.Warnings(&warn))
	for k := 1; k <= 4; k++ {
		if d := agree(eager(x, k), scale(x, k)); d != "" {
			t.Error(d)
		}
	}
	// A closure is named as Go names it.
	if !strings.HasPrefix(warn.String(), "tpucc: warning: TestLimitPolicies.func1 (compile_test.go:") ||
		!strings.HasSuffix(warn.String(), ") reached its recompile limit of 2 (changing: arg 1); new signatures run eagerly\n") {
		t.Errorf("warning: %q", warn.String())
	}
	failing := compile.Func(scale, memory(), compile.RecompileLimit(1), compile.Warnings(&bytes.Buffer{}))
	failing(x, 1)
	p := func() (p any) {
		defer func() { p = recover() }()
		failing(x, 2)
		return nil
	}()
	if err, ok := p.(error); !ok || !engine.IsLimit(err) {
		t.Errorf("LimitError without an error result: %v", p)
	}
}

func TestClosuresOverOtherWeightsNeverShareAProgram(t *testing.T) {
	dir := cacheDir(t)
	mk := func(w *tensor.Tensor) func(*tensor.Tensor) *tensor.Tensor {
		return compile.Func(func(x *tensor.Tensor) *tensor.Tensor { return x.Mul(w) },
			compile.Cache(engine.NewCache(dir, engine.CacheOptions{})))
	}
	x := tensor.Random(1, ir.F32, 3)
	a, b := tensor.Random(2, ir.F32, 3), tensor.Random(3, ir.F32, 3)
	if d := agree(mk(a)(x), x.Mul(a)); d != "" {
		t.Error(d)
	}
	if d := agree(mk(b)(x), x.Mul(b)); d != "" {
		t.Errorf("second closure: %s", d)
	}
}

func TestRestartedProcessCompilesNothing(t *testing.T) {
	w1, b1, w2 := weights()
	sizes := []int64{16, 24, 32}
	if dir := os.Getenv("TPUCC_COMPILE_CHILD"); dir != "" {
		c, err := compile.New(mlp, compile.Cache(engine.NewCache(dir, engine.CacheOptions{})))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range sizes {
			x := tensor.Random(b, ir.F32, b, 8)
			out, err := c.Call(x, w1, b1, w2)
			if err != nil {
				t.Fatal(err)
			}
			if d := agree(out[0], mlp(x, w1, b1, w2)); d != "" {
				t.Fatal(d)
			}
		}
		s := c.Stats()
		fmt.Printf("child: compiles=%d disk-hits=%d hits=%d\n", s.Compiles, s.DiskHits, s.Hits)
		return
	}
	dir := cacheDir(t)
	var got []string
	for i := 0; i < 2; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRestartedProcessCompilesNothing$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TPUCC_COMPILE_CHILD="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "child: ") {
				got = append(got, line)
			}
		}
	}
	// 16 exactly, 24 in bucket 32, 32 is that bucket.
	want := "child: compiles=2 disk-hits=0 hits=1\nchild: compiles=0 disk-hits=2 hits=3"
	if strings.Join(got, "\n") != want {
		t.Errorf("children:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	// And in this process, a fresh cache object on the same directory.
	c, _ := compile.New(mlp, compile.Cache(engine.NewCache(dir, engine.CacheOptions{})))
	for _, b := range sizes {
		if _, err := c.Call(tensor.Random(b, ir.F32, b, 8), w1, b1, w2); err != nil {
			t.Fatal(err)
		}
	}
	if s := c.Stats(); s.Compiles != 0 || s.DiskHits != 2 {
		t.Errorf("fresh cache object: %s", s)
	}
}

func TestDynamicAndBucketOptions(t *testing.T) {
	w1, b1, w2 := weights()
	var log bytes.Buffer
	c, err := compile.New(mlp, memory(), compile.Dynamic(0, 0), compile.Buckets(16, 64), compile.Log(&log), compile.Target("tpu-v5e"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int64{10, 12, 40, 100} {
		x := tensor.Random(b, ir.F32, b, 8)
		out, err := c.Call(x, w1, b1, w2)
		if err != nil {
			t.Fatal(err)
		}
		if d := agree(out[0], mlp(x, w1, b1, w2)); d != "" {
			t.Error(d)
		}
	}
	want := "recompiling " + mlpAt(t) + ": arg 0 dim 0 changed 10 -> 40; bucket 64\n" +
		"recompiling " + mlpAt(t) + ": arg 0 dim 0 changed 40 -> 100; not padded: no bucket holds 100\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", &log, want)
	}
	if _, err := compile.New(mlp, compile.Target("tpu-v9")); err == nil ||
		err.Error() != `compile: unknown target "tpu-v9" (want one of tpu-v4, tpu-v5e, tpu-v5p, tpu-v6e, tpu-v7x, cpu)` {
		t.Errorf("target: %v", err)
	}
}

// TestTargetRefusesWhatTheTPUCannotCompile: compiled functions go through the
// same compile path as tpucc build, so an i64 matmul that build --target
// tpu-v6e refuses is refused here with the same message, at the Go line of
// the op; the cpu target compiles it.
func TestTargetRefusesWhatTheTPUCannotCompile(t *testing.T) {
	mm := func(a, b *tensor.Tensor) *tensor.Tensor { return a.MatMul(b) }
	_, file, line, _ := runtime.Caller(0)
	a, b := tensor.Full(2, ir.I64, 2, 3), tensor.Full(3, ir.I64, 3, 4)
	c, err := compile.New(mm, compile.Target("tpu-v6e"), compile.Name("mm"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Call(a, b)
	want := fmt.Sprintf("mm: compiling for i64[2,3], i64[3,4]: %s:%d: error: tpu-v6e has no 64-bit integer matmul: dot_general on i64 cannot be compiled for it (use i32, or a float type)",
		filepath.Base(file), line-1)
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	onCPU, err := compile.New(mm, compile.Name("mm"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := onCPU.Call(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if d := agree(out[0], mm(a, b)); d != "" {
		t.Error(d)
	}
}
