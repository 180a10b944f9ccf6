package llvm

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
)

// BenchmarkGemm times plain f32 products of bench/cpu's shapes (the
// matmul, the MLP's two layers) on one goroutine and on all cores; the
// same shapes as bench/cpu/sgemm.py, for the OpenBLAS comparison, and the
// projections of bench/cpu's transformer block (1024 tokens, width 256):
// go test ./backend/llvm -run '^$' -bench Gemm -benchtime 10x
//
// The rhsT cases store the rhs as a Hugging Face weight, [N, K], and
// contract it along K (x · Wᵀ: a model's prefill and batched decode; 8 rows stream the rhs, gemv.go).
func BenchmarkGemm(b *testing.B) {
	for _, s := range [][3]int64{{1024, 1024, 1024}, {64, 1024, 4096}, {64, 4096, 1024},
		{1024, 256, 768}, {1024, 256, 512}, {1024, 512, 256}} {
		for _, threads := range []int{1, 0} {
			b.Run(fmt.Sprintf("%dx%dx%d/threads=%d", s[0], s[1], s[2], threads), func(b *testing.B) {
				gemmBench{m: s[0], k: s[1], n: s[2], threads: threads}.run(b)
			})
		}
		// The blocked product's AVX2 tiles on an AVX-512 host, beside its
		// own (gemmTile).
		b.Run(fmt.Sprintf("%dx%dx%d/avx2-tiles", s[0], s[1], s[2]), func(b *testing.B) {
			gemmBench{m: s[0], k: s[1], n: s[2], avx2: true}.run(b)
		})
	}
	// This host's GEMM candidates (gemm_tune.go), each on all cores: what
	// the calibration times, to read at leisure.
	for _, s := range [][3]int64{{1024, 1024, 1024}, {64, 1024, 4096}} {
		for _, p := range gemmCandidates(readGemmHost()) {
			b.Run(fmt.Sprintf("candidate/%dx%dx%d/%s", s[0], s[1], s[2], strings.ReplaceAll(p.String(), " ", ",")), func(b *testing.B) {
				gemmBench{m: s[0], k: s[1], n: s[2], gemm: p}.run(b)
			})
		}
	}
	// The MLP's layers with their weights from memory, as in bench/cpu
	// (its two weights, 32 MiB, do not stay in this machine's L3): each
	// call takes the next of 4 copies.
	for _, s := range [][3]int64{{64, 1024, 4096}, {64, 4096, 1024}} {
		b.Run(fmt.Sprintf("cold/%dx%dx%d", s[0], s[1], s[2]), func(b *testing.B) {
			gemmBench{m: s[0], k: s[1], n: s[2], copies: 4}.run(b)
		})
	}
	// The lhsT cases store the lhs [K, M] and contract it along K (xᵀ · dy:
	// a weight's gradient in a training step, bench/train).
	for _, s := range [][3]int64{{1024, 1024, 1024}, {3072, 1024, 1024}, {1024, 1024, 3072}} {
		b.Run(fmt.Sprintf("lhsT/%dx%dx%d", s[0], s[1], s[2]), func(b *testing.B) {
			gemmBench{m: s[0], k: s[1], n: s[2], lhsT: true}.run(b)
		})
	}
	for _, s := range [][3]int64{{512, 1024, 3072}, {64, 1024, 3072}, {8, 1024, 3072}} {
		b.Run(fmt.Sprintf("rhsT/%dx%dx%d", s[0], s[1], s[2]), func(b *testing.B) {
			gemmBench{m: s[0], k: s[1], n: s[2], rhsT: true}.run(b)
		})
	}
	// A model's weights come from memory: each call takes the next of 32
	// weight matrices (384 MiB at 1024x3072), none of them in a cache.
	for _, s := range [][3]int64{{512, 1024, 3072}, {64, 1024, 3072}} {
		b.Run(fmt.Sprintf("rhsT-cold/%dx%dx%d", s[0], s[1], s[2]), func(b *testing.B) {
			gemmBench{m: s[0], k: s[1], n: s[2], rhsT: true, copies: 32}.run(b)
		})
	}
	// Half-precision weights widened as they are read, beside f32 ones, at
	// a batched decode's and a prefill's rows (the swapped product): f16
	// has no vdpbf16ps, and bf16 has none on hosts without avx512_bf16.
	for _, s := range [][3]int64{{64, 1024, 3072}, {512, 1024, 3072}} {
		for _, dt := range []string{"f32", "f16", "bf16"} {
			b.Run(fmt.Sprintf("rhsT-cold-%s/%dx%dx%d", dt, s[0], s[1], s[2]), func(b *testing.B) {
				gemmBench{m: s[0], k: s[1], n: s[2], rhsT: true, copies: 32, wdt: dt}.run(b)
			})
		}
	}
	// A prefill's projections (Qwen3-0.6B, 512 tokens) with their fused
	// epilogues, weights cold: gate·up's mul, the residual's add.
	for _, s := range []struct {
		m, k, n int64
		epi     string
	}{{512, 1024, 3072, "mul"}, {512, 3072, 1024, "add"}, {512, 2048, 1024, "add"}} {
		for _, dt := range []string{"f32", "f16"} {
			b.Run(fmt.Sprintf("rhsT-cold-%s-%s/%dx%dx%d", dt, s.epi, s.m, s.k, s.n), func(b *testing.B) {
				gemmBench{m: s.m, k: s.k, n: s.n, rhsT: true, copies: 8, wdt: dt, epi: s.epi}.run(b)
			})
		}
	}
	// A bf16 model's batched decode: bf16 rows by bf16 weights, the swapped
	// product on vdpbf16ps (dotSwapBF16Fits), weights cold.
	for _, s := range [][3]int64{{64, 1024, 3072}, {64, 3072, 1024}} {
		b.Run(fmt.Sprintf("rhsT-cold-bf16xbf16/%dx%dx%d", s[0], s[1], s[2]), func(b *testing.B) {
			gemmBench{m: s[0], k: s[1], n: s[2], rhsT: true, copies: 32, wdt: "bf16", xbf16: true}.run(b)
		})
	}
	// And its lm head (Qwen3's 151936-token vocabulary at hidden 2048, as
	// bench/models' moe_decode_b64): 622 MB of weights, one copy, which no
	// cache holds.
	b.Run("rhsT-cold-bf16xbf16/64x2048x151936", func(b *testing.B) {
		gemmBench{m: 64, k: 2048, n: 151936, rhsT: true, wdt: "bf16", xbf16: true}.run(b)
	})
	// A bf16 checkpoint's weights, read at their width (narrow.go), beside
	// f32 ones: a decode step's products, cold. GB/s counts weight bytes.
	for _, s := range [][3]int64{{1, 1024, 3072}, {4, 1024, 3072}} {
		for _, dt := range []string{"f32", "bf16"} {
			b.Run(fmt.Sprintf("rhsT-cold-%s/%dx%dx%d", dt, s[0], s[1], s[2]), func(b *testing.B) {
				gemmBench{m: s[0], k: s[1], n: s[2], rhsT: true, copies: 64, wdt: dt}.run(b)
			})
		}
		// bf16 activations too (a bf16 product, models' linear): bf16Dot's
		// tiles (vdpbf16ps), and the gemv widening both operands.
		for _, widen := range []bool{false, true} {
			b.Run(fmt.Sprintf("rhsT-cold-bf16xbf16-widen=%v/%dx%dx%d", widen, s[0], s[1], s[2]), func(b *testing.B) {
				gemmBench{m: s[0], k: s[1], n: s[2], rhsT: true, copies: 64, wdt: "bf16", xbf16: true, widen: widen}.run(b)
			})
		}
	}
}

// gemmBench is one case of BenchmarkGemm: an m x k x n f32 product on
// threads threads (0: one per CPU), its rhs stored [n, k] when rhsT, taken
// in turn from copies distinct copies (0: one). A rhs of dtype wdt other
// than f32 (stored [n, k]: a bf16 checkpoint's weights) is converted to f32
// in the program, which the kernels read at its width (narrow.go); GB/s
// counts the rhs's bytes. avx2: generate AVX2's tiles even on an AVX-512
// host.
type gemmBench struct {
	m, k, n    int64
	threads    int
	rhsT, avx2 bool
	lhsT       bool // the lhs stored [k, m]
	copies     int
	wdt        string
	gemm       gemmParams // the blocked product's parameters; zero: the hand-tuned ones
	// xbf16 makes the lhs bf16 too (rhsT with wdt bf16: a bf16 product's
	// activations, models' linear), read by vdpbf16ps where the host has
	// it, or, with widen, by the widening kernels.
	xbf16, widen bool
	// epi, with rhsT, is an elementwise op ("mul", "add") of the product
	// and a third parameter [m, n], fused into the product's tile: a
	// prefill's gate (silu(gate)·up is gate's mul), down and o projections
	// (the residual's add).
	epi string
}

func (g gemmBench) run(b *testing.B) {
	m, k, n, copies, wdt := g.m, g.k, g.n, max(g.copies, 1), cmp.Or(g.wdt, "f32")
	be := testBackend(b)
	be.threads = g.threads
	if g.threads == 0 {
		be.threads = runtime.NumCPU()
	}
	if g.avx2 {
		be.wide = false
	}
	if g.gemm != (gemmParams{}) {
		be.gemm = fixedGemm(g.gemm)
	}
	if g.widen {
		be.bf16 = bf16Widen
	}
	src := fmt.Sprintf("func @mm(%%a: f32[%d,%d], %%b: f32[%d,%d]) -> f32[%d,%d] {\n  %%c = matmul %%a, %%b : f32[%d,%d]\n  return %%c\n}\n",
		m, k, k, n, m, n, m, n)
	if g.lhsT {
		src = fmt.Sprintf("func @mm(%%a: f32[%d,%d], %%b: f32[%d,%d]) -> f32[%d,%d] {\n  %%c = dot_general %%a, %%b {lhs_contract=[0], rhs_contract=[0]} : f32[%d,%d]\n  return %%c\n}\n",
			k, m, k, n, m, n, m, n)
	}
	if g.rhsT {
		w, conv, x, xdt := "%b", "", "%a", "f32"
		if wdt != "f32" {
			w, conv = "%w", fmt.Sprintf("  %%w = convert %%b : f32[%d,%d]\n", n, k)
		}
		if g.xbf16 {
			x, xdt = "%x", "bf16"
			conv += fmt.Sprintf("  %%x = convert %%a : f32[%d,%d]\n", m, k)
		}
		params, epi, ret := "", "", "%c"
		if g.epi != "" {
			params, ret = fmt.Sprintf(", %%u: f32[%d,%d]", m, n), "%e"
			epi = fmt.Sprintf("  %%e = %s %%c, %%u : f32[%d,%d]\n", g.epi, m, n)
		}
		src = fmt.Sprintf("func @mm(%%a: %s[%d,%d], %%b: %s[%d,%d]%s) -> f32[%d,%d] {\n%s  %%c = dot_general %s, %s {lhs_contract=[1], rhs_contract=[1]} : f32[%d,%d]\n%s  return %s\n}\n",
			xdt, m, k, wdt, n, k, params, m, n, conv, x, w, m, n, epi, ret)
	}
	_, f, x := compileSrc(b, be, src)
	args := cpu.RandomInputs(f, 1)
	// The rhs, and an epilogue's operand (a product's result in a model,
	// which a later step reads from memory), each call the next copy.
	rhs, epiIn := []*backend.Buffer{args[1]}, []*backend.Buffer{nil}
	if g.epi != "" {
		epiIn[0] = args[2]
	}
	for i := 1; i < copies; i++ {
		in := cpu.RandomInputs(f, int64(i+1))
		rhs = append(rhs, in[1])
		if g.epi != "" {
			epiIn = append(epiIn, in[2])
		}
	}
	x.Run(args)
	b.ResetTimer()
	c0 := cpuTime()
	best := time.Duration(math.MaxInt64)
	times := make([]time.Duration, b.N)
	for i := 0; i < b.N; i++ {
		args[1] = rhs[(i+1)%copies] // the warm-up call read rhs[0]
		if g.epi != "" {
			args[2] = epiIn[(i+1)%copies]
		}
		t0 := time.Now()
		if _, err := x.Run(args); err != nil {
			b.Fatal(err)
		}
		times[i] = time.Since(t0)
		best = min(best, times[i])
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(2*m*k*n)/perOp, "GFLOP/s")
	b.ReportMetric(float64(len(rhs[0].Bytes()))/perOp, "GB/s")
	// The best run: on a shared machine the mean moves by tens of percent
	// with the neighbours, the best run much less.
	b.ReportMetric(float64(2*m*k*n)/float64(best.Nanoseconds()), "best-GFLOP/s")
	slices.Sort(times)
	b.ReportMetric(float64(len(rhs[0].Bytes()))/float64(times[len(times)/2].Nanoseconds()), "median-GB/s")
}
