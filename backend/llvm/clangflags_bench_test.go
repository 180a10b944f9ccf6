package llvm

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
)

// BenchmarkClangFlags builds the same kernels with clang's -O3 as it was
// (its own unrolling on) and with clangFlags, and times them in turns in
// one process, one thread, 40 rounds of 15 ms each; "O3b" is -O3 again,
// so that its ratio shows the noise. The least time of a variant is the
// figure (a loaded host slows runs, never speeds them):
// go test ./backend/llvm -run '^$' -bench ClangFlags -benchtime 1x
func BenchmarkClangFlags(t *testing.B) {
	o3 := []string{"-O3", "-march=native", "-fPIC", "-fveclib=libmvec", "-Wno-override-module"}
	variants := map[string][]string{"O3": o3, "flags": slices.Clone(clangFlags), "O3b": o3}
	defer func(f []string) { clangFlags = f }(clangFlags)
	inVariants(t, "clang-flags", clangFlagsCases, []string{"O3", "flags", "O3b"}, func(v string) { clangFlags = variants[v] })
}

// inVariants builds each case once per variant in order (set makes one
// the build's), checks each against the reference executor, times them in
// turns (inTurns) on one thread and prints a line a case: each variant's
// least and median time and their ratios to the first variant's.
func inVariants(t *testing.B, label string, cases []struct{ name, src string }, order []string, set func(v string)) {
	b := testBackend(t)
	b.threads = 1
	for _, c := range cases {
		xs := map[string]*Executable{}
		var args []*backend.Buffer
		for _, v := range order {
			set(v)
			m, f, x := compileSrc(t, b, c.src)
			agree(t, x, m, f, cpu.RandomInputs(f, 1))
			xs[v], args = x, cpu.RandomInputs(f, 2)
		}
		times := inTurns(xs, order, args)
		line := fmt.Sprintf("%s: %-24s", label, c.name)
		for _, v := range order {
			least, med := quantile(times[v], 0), quantile(times[v], 0.5)
			line += fmt.Sprintf("  %s least %8.2f us (%.3f), median %8.2f us (%.3f)", v, least, least/quantile(times[order[0]], 0), med, med/quantile(times[order[0]], 0.5))
		}
		fmt.Println(line)
	}
}

// inTurns runs each executable in order for 15 ms, 40 rounds, and
// returns each one's microseconds per run in every round.
func inTurns(xs map[string]*Executable, order []string, args []*backend.Buffer) map[string][]float64 {
	times := map[string][]float64{}
	for range 40 {
		for _, v := range order {
			runtime.GC()
			x := xs[v]
			x.Run(args)
			n := 0
			t0 := time.Now()
			for time.Since(t0) < 15*time.Millisecond {
				x.Run(args)
				n++
			}
			times[v] = append(times[v], float64(time.Since(t0).Microseconds())/float64(n))
		}
	}
	return times
}

// quantile is the q-quantile (0: the least) of s.
func quantile(s []float64, q float64) float64 {
	s = slices.Clone(s)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

var clangFlagsCases = []struct{ name, src string }{
	{"lmhead-gemv 1x1024x32768", "func @f(%x: f32[1,1024], %w: f32[32768,1024]) -> f32[1,32768] {\n  %d = dot_general %x, %w {lhs_contract=[1], rhs_contract=[1]} : f32[1,32768]\n  return %d\n}\n"},
	{"bf16 gemv 1x1024x3072", "func @f(%x: f32[1,1024], %b: bf16[3072,1024]) -> f32[1,3072] {\n  %w = convert %b : f32[3072,1024]\n  %d = dot_general %x, %w {lhs_contract=[1], rhs_contract=[1]} : f32[1,3072]\n  return %d\n}\n"},
	{"gemv 4x1024x3072", "func @f(%x: f32[4,1024], %w: f32[3072,1024]) -> f32[4,3072] {\n  %d = dot_general %x, %w {lhs_contract=[1], rhs_contract=[1]} : f32[4,3072]\n  return %d\n}\n"},
	{"gemv 1x1024x3072", "func @f(%x: f32[1,1024], %w: f32[3072,1024]) -> f32[1,3072] {\n  %d = dot_general %x, %w {lhs_contract=[1], rhs_contract=[1]} : f32[1,3072]\n  return %d\n}\n"},
	{"swapped 16x1024x3072", "func @f(%x: f32[16,1024], %w: f32[3072,1024]) -> f32[16,3072] {\n  %d = dot_general %x, %w {lhs_contract=[1], rhs_contract=[1]} : f32[16,3072]\n  return %d\n}\n"},
	{"gemm 256x1024x1024", "func @f(%x: f32[256,1024], %w: f32[1024,1024]) -> f32[256,1024] {\n  %d = matmul %x, %w : f32[256,1024]\n  return %d\n}\n"},
	{"softmax 16x16x64", "func @f(%x: f32[16,16,64]) -> f32[16,16,64] {\n  %p = softmax %x {axis=2} : f32[16,16,64]\n  return %p\n}\n"},
	{"softmax 8x4096", "func @f(%x: f32[8,4096]) -> f32[8,4096] {\n  %p = softmax %x {axis=1} : f32[8,4096]\n  return %p\n}\n"},
	{"rms_norm 64x1024", "func @f(%x: f32[64,1024], %a: f32[1024]) -> f32[64,1024] {\n  %r = rms_norm %x, %a {eps=1e-06}\n  return %r\n}\n"},
	{"transpose 16x8x128", "func @f(%x: f32[16,8,128]) -> f32[8,16,128] {\n  %t = transpose %x {perm=[1,0,2]} : f32[8,16,128]\n  return %t\n}\n"},
	{"silu*mul 64x3072", "func @f(%x: f32[64,3072], %y: f32[64,3072]) -> f32[64,3072] {\n  %s = silu %x\n  %m = mul %s, %y\n  return %m\n}\n"},
	{"exp+add 1x1024", "func @f(%x: f32[1,1024], %y: f32[1,1024]) -> f32[1,1024] {\n  %s = exp %x\n  %m = add %s, %y\n  return %m\n}\n"},
}

// BenchmarkNestInterleave builds elementwise kernels with their nest's
// loops interleaved by 4 (as every loop was) and as they are now
// (nestInterleave 1, hintNest keeping 4 where elements call or divide),
// and times them in turns as BenchmarkClangFlags does; "x4b" is the first
// again, for the noise:
// go test ./backend/llvm -run '^$' -bench NestInterleave -benchtime 1x
func BenchmarkNestInterleave(t *testing.B) {
	counts := map[string]int64{"x4": 4, "x1": 1, "x4b": 4}
	defer func(n int64) { nestInterleave = n }(nestInterleave)
	inVariants(t, "nest-interleave", nestCases, []string{"x4", "x1", "x4b"}, func(v string) { nestInterleave = counts[v] })
}

// nestCases are elementwise kernels at the decode step's sizes (one row)
// and at a prefill's (64 rows), and the clangFlagsCases that have nests.
var nestCases = append([]struct{ name, src string }{
	{"silu*mul 1x3072", "func @f(%x: f32[1,3072], %y: f32[1,3072]) -> f32[1,3072] {\n  %s = silu %x\n  %m = mul %s, %y\n  return %m\n}\n"},
	{"add 1x1024", "func @f(%x: f32[1,1024], %y: f32[1,1024]) -> f32[1,1024] {\n  %m = add %x, %y\n  return %m\n}\n"},
	{"convert bf16 64x1024", "func @f(%x: bf16[64,1024]) -> f32[64,1024] {\n  %c = convert %x : f32[64,1024]\n  return %c\n}\n"},
	{"mul+add 64x1024", "func @f(%x: f32[64,1024], %y: f32[64,1024]) -> f32[64,1024] {\n  %m = mul %x, %y\n  %a = add %m, %x\n  return %a\n}\n"},
}, clangFlagsCases[6:]...)

// BenchmarkGemvUnroll builds the streamed products that read 8 narrow rows
// at a time with their contraction loop unrolled by 4 (as they were) and
// as now (gemvUnrollFor: 2), and times them in turns as BenchmarkClangFlags
// does, weights from cache (6 MB, called over and over): where the loop's
// overhead shows most. (The first case, one lhs row, reads 4 streams in
// 16-lane vectors since the sitting of 2026-12-07 07:44: unrolled by 8 and
// by 4 there.)
// go test ./backend/llvm -run '^$' -bench GemvUnroll -benchtime 1x
func BenchmarkGemvUnroll(t *testing.B) {
	counts := map[string]int64{"u4": 8, "now": gemvUnroll, "u4b": 8}
	defer func(n int64) { gemvUnroll = n }(gemvUnroll)
	inVariants(t, "gemv-unroll", gemvUnrollCases, []string{"u4", "now", "u4b"}, func(v string) { gemvUnroll = counts[v] })
}

var gemvUnrollCases = []struct{ name, src string }{
	{"bf16 down 1x3072x1024", "func @f(%x: f32[1,3072], %b: bf16[1024,3072]) -> f32[1,1024] {\n  %w = convert %b : f32[1024,3072]\n  %d = dot_general %x, %w {lhs_contract=[1], rhs_contract=[1]} : f32[1,1024]\n  return %d\n}\n"},
	{"bf16 down 2x3072x1024", "func @f(%x: f32[2,3072], %b: bf16[1024,3072]) -> f32[2,1024] {\n  %w = convert %b : f32[1024,3072]\n  %d = dot_general %x, %w {lhs_contract=[1], rhs_contract=[1]} : f32[2,1024]\n  return %d\n}\n"},
	{"bf16 up 2x1024x3072", "func @f(%x: f32[2,1024], %b: bf16[3072,1024]) -> f32[2,3072] {\n  %w = convert %b : f32[3072,1024]\n  %d = dot_general %x, %w {lhs_contract=[1], rhs_contract=[1]} : f32[2,3072]\n  return %d\n}\n"},
}
