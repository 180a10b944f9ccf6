package engine

import (
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/passes"
)

func TestConcurrentSignaturesCompileOnce(t *testing.T) {
	// Four signatures that automatic dynamic dimensions would not merge:
	// each differs in the static argument.
	scale := &tirProgram{name: "scale", text: func(a []Arg) string {
		return fmt.Sprintf(`func @scale(%%x: f32[3,4]) -> f32[3,4] {
  %%k = constant %d.0 : f32[3,4]
  %%y = mul %%x, %%k
  return %%y
}
`, a[1].Static.(int))
	}}
	f, _, _ := newFunc(t, scale, Options{})
	x := seeded(f32(3, 4), 1)
	var wg sync.WaitGroup
	errs := make(chan string, 16*8)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 8; i++ {
				k := (g + i) % 4
				kArg, _ := StaticArg(k)
				args := []Arg{TensorArg(x), kArg}
				got, err := f.Call(args)
				if err != nil {
					errs <- err.Error()
					continue
				}
				want, _ := scale.Eager(args)
				if d := sameTensors(got, want); d != "" {
					errs <- d
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	s := f.Stats()
	if s.Compiles != 4 || s.Misses != 4 || s.Hits != 16*8-4 || s.Calls != 16*8 || s.Programs != 4 {
		t.Errorf("stats: %s", s)
	}
}

func TestConcurrentShapesNoAutoDynamic(t *testing.T) {
	f, _, _ := newFunc(t, mlpProgram, Options{NoAutoDynamic: true})
	args := [][]Arg{mlpArgs(2, 1), mlpArgs(3, 2), mlpArgs(5, 3), mlpArgs(8, 4)}
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 4; i++ {
				if _, err := f.Call(args[(g+i)%4]); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if s := f.Stats(); s.Compiles != 4 || s.Misses != 4 || s.Hits != 60 || s.PaddedCalls != 0 {
		t.Errorf("stats: %s", s)
	}
}

func TestRecompileLogText(t *testing.T) {
	f, log, _ := newFunc(t, mlpProgram, Options{})
	call(t, f, mlpProgram, mlpArgs(32, 1))
	call(t, f, mlpProgram, mlpArgs(48, 2))
	call(t, f, mlpProgram, mlpArgs(40, 3))  // bucket 64 again: no compile
	call(t, f, mlpProgram, mlpArgs(100, 4)) // bucket 128
	call(t, f, mlpProgram, mlpArgs(32, 5))  // the first program
	want := "recompiling mlp (main.go:12): arg 0 dim 0 changed 32 -> 48; now dynamic, bucket 64\n" +
		"recompiling mlp (main.go:12): arg 0 dim 0 changed 48 -> 100; bucket 128\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log, want)
	}
	wantExplain := []string{
		"compiling mlp (main.go:12) for f32[32,4], f32[4,3], f32[3]",
		"recompiling mlp (main.go:12): arg 0 dim 0 changed 32 -> 48; now dynamic, bucket 64",
		"mlp (main.go:12): f32[48,4], f32[4,3], f32[3] runs in bucket f32[64,4], f32[4,3], f32[3]",
		"mlp (main.go:12): f32[40,4], f32[4,3], f32[3] runs in bucket f32[64,4], f32[4,3], f32[3]",
		"recompiling mlp (main.go:12): arg 0 dim 0 changed 48 -> 100; bucket 128",
		"mlp (main.go:12): f32[100,4], f32[4,3], f32[3] runs in bucket f32[128,4], f32[4,3], f32[3]",
	}
	if got := f.Explain(); strings.Join(got, "\n") != strings.Join(wantExplain, "\n") {
		t.Errorf("explain:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantExplain, "\n"))
	}
	s := f.Stats()
	if s.Compiles != 3 || s.Hits != 2 || s.Misses != 3 || s.PaddedCalls != 3 || s.Specialisations != 1 {
		t.Errorf("stats: %s", s)
	}
	// Padding: 48->64, 40->64, 100->128 rows of 4.
	if s.PaddedElements != (16+24+28)*4 || s.RealElements != (48+40+100)*4 {
		t.Errorf("padding: %d added, %d real", s.PaddedElements, s.RealElements)
	}
}

func TestBucketPaddingMatchesExact(t *testing.T) {
	f, _, _ := newFunc(t, mlpProgram, Options{})
	rng := rand.New(rand.NewSource(7))
	sizes := map[int64]bool{}
	for i := 0; i < 40; i++ {
		b := int64(1 + rng.Intn(40))
		sizes[b] = true
		call(t, f, mlpProgram, mlpArgs(b, int64(i)))
	}
	s := f.Stats()
	// The first size exactly (a class of its own unless it is a power of
	// two), then buckets 1..64.
	if s.Compiles != 8 || s.Specialisations != 2 || len(sizes) < 15 {
		t.Errorf("%d sizes: %s", len(sizes), s)
	}
}

func TestUserBuckets(t *testing.T) {
	f, log, _ := newFunc(t, mlpProgram, Options{Buckets: []int64{10, 20}, Dynamic: []DimRef{{0, 0}}})
	call(t, f, mlpProgram, mlpArgs(3, 1))
	call(t, f, mlpProgram, mlpArgs(12, 1))
	call(t, f, mlpProgram, mlpArgs(25, 1))
	want := "recompiling mlp (main.go:12): arg 0 dim 0 changed 3 -> 12; bucket 20\n" +
		"recompiling mlp (main.go:12): arg 0 dim 0 changed 12 -> 25; not padded: no bucket holds 25\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log, want)
	}
	if s := f.Stats(); s.Compiles != 3 || s.Specialisations != 2 {
		t.Errorf("stats: %s", s)
	}
}

// expSum sums exp(x) over the rows: padding would add exp(0) = 1 per row.
var expSum = &tirProgram{name: "s", text: func(a []Arg) string {
	return fmt.Sprintf(`func @s(%%x: f32[%d,4]) -> f32[4] {
  %%e = exp %%x
  %%s = reduce_sum %%e {axes=[0]}
  return %%s
}
`, dim(a, 0, 0))
}}

func TestUnsafePaddingRecompilesPerValue(t *testing.T) {
	f, log, _ := newFunc(t, expSum, Options{Name: "s", Pos: ir.Pos{File: "s.go", Line: 3}})
	for _, b := range []int64{3, 5, 6, 5} {
		call(t, f, expSum, []Arg{TensorArg(seeded(f32(b, 4), b))})
	}
	why := "reduce_sum at s.tir:3 sums over arg 0 dim 0, whose padding is 1.0, not 0.0"
	want := "recompiling s (s.go:3): arg 0 dim 0 changed 3 -> 5; not padded: " + why + "\n" +
		"recompiling s (s.go:3): arg 0 dim 0 changed 5 -> 6; not padded since the call at 5: " + why + "\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log, want)
	}
	if s := f.Stats(); s.Compiles != 3 || s.Specialisations != 3 || s.PaddedCalls != 0 || s.Hits != 1 {
		t.Errorf("stats: %s", s)
	}
}

// maskedSum sums x*mask over the rows: zero padding of both keeps the sum.
var maskedSum = &tirProgram{name: "ms", text: func(a []Arg) string {
	return fmt.Sprintf(`func @ms(%%x: f32[%[1]d,4], %%m: f32[%[1]d,4]) -> (f32[4], f32[%[1]d,4]) {
  %%xm = mul %%x, %%m
  %%s = reduce_sum %%xm {axes=[0]}
  %%c = cumsum %%x {axis=0}
  return %%s, %%c
}
`, dim(a, 0, 0))
}}

func TestMaskedReductionIsPadded(t *testing.T) {
	f, _, _ := newFunc(t, maskedSum, Options{})
	for _, b := range []int64{3, 5, 7, 9} {
		call(t, f, maskedSum, []Arg{TensorArg(seeded(f32(b, 4), b)), TensorArg(seeded(f32(b, 4), b+50))})
	}
	// 3 exactly, then buckets 8 and 16.
	if s := f.Stats(); s.Compiles != 3 || s.PaddedCalls != 3 {
		t.Errorf("stats: %s\n%s", s, strings.Join(f.Explain(), "\n"))
	}
}

// meanRows divides by the number of rows, a constant that differs per size.
var meanRows = &tirProgram{name: "mean", text: func(a []Arg) string {
	n := dim(a, 0, 0)
	return fmt.Sprintf(`func @mean(%%x: f32[%d,4]) -> f32[4] {
  %%s = reduce_sum %%x {axes=[0]}
  %%inv = constant %s : f32[4]
  %%m = mul %%s, %%inv
  return %%m
}
`, n, ir.FormatFloat(ir.F32.RoundFloat(1/float64(n)), ir.F32))
}}

func TestSizeUsedAsValueIsNotPadded(t *testing.T) {
	f, log, _ := newFunc(t, meanRows, Options{Name: "mean", Pos: ir.Pos{File: "m.go", Line: 9}})
	for _, b := range []int64{3, 5} {
		call(t, f, meanRows, []Arg{TensorArg(seeded(f32(b, 4), b))})
	}
	want := "recompiling mean (m.go:9): arg 0 dim 0 changed 3 -> 5; not padded: the program traced at 8 differs from the one traced at 5 at mean.tir:3 (the value of constant)\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log, want)
	}
}

// Once padding is refused for a dimension, later sizes compile exactly
// without tracing again; their reason says at which size it was refused
// rather than naming those old shapes as if they were the new call's.
func TestNotPaddedReasonNamesWhereItWasDecided(t *testing.T) {
	f, log, _ := newFunc(t, meanRows, Options{Name: "mean", Pos: ir.Pos{File: "m.go", Line: 9}})
	for _, b := range []int64{3, 5, 6, 7} {
		call(t, f, meanRows, []Arg{TensorArg(seeded(f32(b, 4), b))})
	}
	want := "recompiling mean (m.go:9): arg 0 dim 0 changed 3 -> 5; not padded: the program traced at 8 differs from the one traced at 5 at mean.tir:3 (the value of constant)\n" +
		"recompiling mean (m.go:9): arg 0 dim 0 changed 5 -> 6; not padded since the call at 5: the program traced at 8 differs from the one traced at 5 at mean.tir:3 (the value of constant)\n" +
		"recompiling mean (m.go:9): arg 0 dim 0 changed 6 -> 7; not padded since the call at 5: the program traced at 8 differs from the one traced at 5 at mean.tir:3 (the value of constant)\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log, want)
	}
}

func TestStaticArgumentsAndLimitPolicies(t *testing.T) {
	scale := &tirProgram{name: "scale", text: func(a []Arg) string {
		return fmt.Sprintf(`func @scale(%%x: f32[2]) -> f32[2] {
  %%k = constant %d.0 : f32[2]
  %%y = mul %%x, %%k
  return %%y
}
`, a[1].Static.(int))
	}}
	x := seeded(f32(2), 1)
	argsK := func(k int) []Arg {
		s, err := StaticArg(k)
		if err != nil {
			t.Fatal(err)
		}
		return []Arg{TensorArg(x), s}
	}
	wantWarn := "tpucc: warning: scale (scale.go:4) reached its recompile limit of 3 (changing: arg 1); new signatures "
	for _, tc := range []struct {
		policy Policy
		action string
	}{{LimitError, "are errors"}, {LimitEager, "run eagerly"}, {LimitPanic, "panic"}} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			f, log, warn := newFunc(t, scale, Options{Name: "scale", Pos: ir.Pos{File: "scale.go", Line: 4}, RecompileLimit: 3, OnLimit: tc.policy})
			for k := 1; k <= 3; k++ {
				call(t, f, scale, argsK(k))
			}
			for rep := 0; rep < 2; rep++ {
				var got []*backend.Buffer
				var err error
				panicked := func() (p any) {
					defer func() { p = recover() }()
					got, err = f.Call(argsK(4))
					return nil
				}()
				switch tc.policy {
				case LimitError:
					want := "scale (scale.go:4) reached its recompile limit of 3: arg 1 changed 3 -> 4"
					if err == nil || err.Error() != want || !IsLimit(err) {
						t.Errorf("error: %v, want %s", err, want)
					}
				case LimitEager:
					want, _ := scale.Eager(argsK(4))
					if err != nil || sameTensors(got, want) != "" {
						t.Errorf("eager: %v %v", got, err)
					}
				case LimitPanic:
					if e, ok := panicked.(error); !ok || !IsLimit(e) {
						t.Errorf("panic: %v", panicked)
					}
				}
			}
			if warn.String() != wantWarn+tc.action+"\n" {
				t.Errorf("warning:\n%s\nwant:\n%s%s", warn, wantWarn, tc.action)
			}
			wantLog := "recompiling scale (scale.go:4): arg 1 changed 1 -> 2\nrecompiling scale (scale.go:4): arg 1 changed 2 -> 3\n"
			if log.String() != wantLog {
				t.Errorf("log:\n%s", log)
			}
			s := f.Stats()
			if s.Compiles != 3 || (tc.policy == LimitEager && s.Eager != 2) || (tc.policy != LimitEager && s.Rejected != 2) {
				t.Errorf("stats: %s", s)
			}
		})
	}
}

func TestDefaultLimitCountsSpecialisationsNotBuckets(t *testing.T) {
	f, _, warn := newFunc(t, expSum, Options{Name: "s", Pos: ir.Pos{File: "s.go", Line: 3}})
	for b := int64(1); b <= 8; b++ {
		call(t, f, expSum, []Arg{TensorArg(seeded(f32(b, 4), b))})
	}
	_, err := f.Call([]Arg{TensorArg(seeded(f32(9, 4), 9))})
	if !IsLimit(err) || warn.String() != "tpucc: warning: s (s.go:3) reached its recompile limit of 8 (changing: arg 0 dim 0); new signatures are errors\n" {
		t.Errorf("err %v, warning %q", err, warn)
	}
	// A padded function reaches far more sizes without a specialisation.
	g, _, gwarn := newFunc(t, mlpProgram, Options{})
	for b := int64(1); b <= 300; b += 23 {
		call(t, g, mlpProgram, mlpArgs(b, b))
	}
	// 1 exactly (a bucket size), then buckets 32 to 512.
	if s := g.Stats(); s.Specialisations != 1 || s.Compiles != 6 || gwarn.String() != "" {
		t.Errorf("stats: %s", s)
	}
}

func TestLower(t *testing.T) {
	f, _, _ := newFunc(t, mlpProgram, Options{})
	args := []Arg{ShapeArg(f32(5, 4)), ShapeArg(f32(4, 3)), ShapeArg(f32(3))}
	got, err := f.Lower(args)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tir.Parse("mlp.tir", []byte(mlpProgram.text(args)))
	if err != nil {
		t.Fatal(err)
	}
	cpuTarget, _ := LookupTarget("cpu")
	if err := passes.Run(m, passes.Default(), passes.Options{Eval: cpu.Folder{}, Target: cpuTarget}); err != nil {
		t.Fatal(err)
	}
	want, err := stablehlo.Lower(m, stablehlo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Lower:\n%s\nwant:\n%s", got, want)
	}
	// The program serves calls of that shape.
	call(t, f, mlpProgram, mlpArgs(5, 1))
	if s := f.Stats(); s.Compiles != 1 || s.Hits != 1 || s.Misses != 0 {
		t.Errorf("stats: %s", s)
	}
}

func TestBadArguments(t *testing.T) {
	f, _, _ := newFunc(t, mlpProgram, Options{})
	if _, err := StaticArg([]int{1}); err == nil || err.Error() != "static argument of type []int: want a bool, integer, float or string" {
		t.Errorf("StaticArg: %v", err)
	}
	_, err := f.Call([]Arg{ShapeArg(f32(2, 4)), ShapeArg(f32(4, 3)), ShapeArg(f32(3))})
	if err == nil || err.Error() != "mlp: argument 0 has no value" {
		t.Errorf("Call: %v", err)
	}
	if _, err := NewFunction(mlpProgram, Options{Target: "gpu"}); err == nil ||
		err.Error() != `unknown target "gpu" (want one of tpu-v4, tpu-v5e, tpu-v5p, tpu-v6e, tpu-v7x, cpu)` {
		t.Errorf("target: %v", err)
	}
}

func TestTPUCCLogs(t *testing.T) {
	old := stderr
	defer func() { stderr = old }()
	for _, tc := range []struct{ env, want string }{
		{"", ""},
		{"recompiles", "recompiling mlp (main.go:12): arg 0 dim 0 changed 8 -> 12; now dynamic, bucket 16\n"},
		{"fallback,+recompiles", "recompiling mlp (main.go:12): arg 0 dim 0 changed 8 -> 12; now dynamic, bucket 16\n"},
		{"cache", "compiling mlp (main.go:12) for f32[8,4], f32[4,3], f32[3]\n" +
			"recompiling mlp (main.go:12): arg 0 dim 0 changed 8 -> 12; now dynamic, bucket 16\n" +
			"mlp (main.go:12): f32[12,4], f32[4,3], f32[3] runs in bucket f32[16,4], f32[4,3], f32[3]\n"},
		{"all", "compiling mlp (main.go:12) for f32[8,4], f32[4,3], f32[3]\n" +
			"recompiling mlp (main.go:12): arg 0 dim 0 changed 8 -> 12; now dynamic, bucket 16\n" +
			"mlp (main.go:12): f32[12,4], f32[4,3], f32[3] runs in bucket f32[16,4], f32[4,3], f32[3]\n"},
		{"recompile, graph", "tpucc: warning: TPUCC_LOGS: unknown word \"recompile\" ignored (valid: recompiles, cache, fallback, all)\n" +
			"tpucc: warning: TPUCC_LOGS: unknown word \"graph\" ignored (valid: recompiles, cache, fallback, all)\n"},
	} {
		logWarned = map[string]bool{}
		t.Setenv("TPUCC_LOGS", tc.env)
		var buf syncBuffer
		stderr = &buf
		f, err := NewFunction(mlpProgram, Options{Name: "mlp", Pos: ir.Pos{File: "main.go", Line: 12}, Cache: NewCache("", CacheOptions{})})
		if err != nil {
			t.Fatal(err)
		}
		call(t, f, mlpProgram, mlpArgs(8, 1))
		call(t, f, mlpProgram, mlpArgs(12, 1))
		if buf.String() != tc.want {
			t.Errorf("TPUCC_LOGS=%s:\n%s\nwant:\n%s", tc.env, buf.String(), tc.want)
		}
	}
}
