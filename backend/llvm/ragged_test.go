package llvm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// raggedCase is one ragged_dot lhs [m,k] x rhs [g,k,n] with two sets of
// group sizes, run one after the other on the same executable (a second
// run with fewer rows covered would show stale rows if the kernel did not
// zero them).
type raggedCase struct {
	m, k, g, n int64
	sizes      [2][]int64
}

var raggedCases = []raggedCase{
	// decode-like: a few rows per expert, an empty group, k and n not multiples of 16
	{32, 40, 8, 48, [2][]int64{{4, 4, 0, 1, 7, 4, 4, 8}, {1, 0, 0, 0, 2, 0, 0, 3}}},
	// empty groups, m not covered by the sizes, n = 2 tiles + 3 columns
	{20, 17, 4, 35, [2][]int64{{0, 5, 0, 6}, {20, 0, 0, 0}}},
	// sizes summing past m (the second group is cut, the third is past m), negative sizes
	{10, 16, 3, 16, [2][]int64{{4, 9, 5}, {-3, 4, -1}}},
	// prefill-like: groups large enough to pack panels, a group of one row
	{200, 64, 3, 80, [2][]int64{{70, 1, 129}, {13, 12, 11}}},
	// groups of one row, then a group past m; n narrower than a tile
	{7, 33, 8, 5, [2][]int64{{1, 1, 1, 1, 1, 1, 1, 5}, {0, 0, 0, 0, 0, 0, 0, 7}}},
	// large enough to be split across goroutines (work >= splitWork)
	{64, 128, 16, 256, [2][]int64{{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}, {0, 30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}}},
	// fewer rows than two a group (a batch-1 decode): with [g,n,k] weights
	// read by expert (sweepT), a group of 5 rows is a block of 4 and one
	// more; k = 200 is three 64-float steps and 8 single products, k = 80
	// one step and one 16-float vector
	{12, 200, 8, 37, [2][]int64{{1, 0, 2, 0, 3, 1, 0, 5}, {0, 1, 0, 0, 0, 0, 4, 0}}},
	{9, 80, 6, 19, [2][]int64{{0, 4, 0, 1, 1, 3}, {1, 1, 1, 1, 1, 1}}},
	// a long contraction (k not a multiple of 8): with [g,n,k] weights the
	// swapped product packs one 16-row panel at a time, so 40 rows are
	// three chunks, the last partial; then 16 rows and a tail of 2, and
	// a tile of 16, one of 8 and a tail of 3
	{45, 4100, 2, 40, [2][]int64{{40, 5}, {18, 27}}},
}

// TestRaggedDot compiles every case into one function (one clang run),
// its ragged_dot results feeding an add so that they live in planned
// (reused) memory, and compares each run with the reference executor.
// Then again with every rhs given as [g,n,k] and transposed in the
// program (as the moe-route pass does with Hugging Face's expert weights):
// the kernel reads it as stored, and nothing copies it. Then with those
// weights in bf16 and f16, converted to f32 in the program (a bf16
// checkpoint's experts): the kernels read them at their width, and
// nothing converts them. The f32 cases run with AVX-512's 16-float tiles
// (gemmTile, swapKinds) and with the AVX2 ones, whatever the host: without
// AVX-512, clang splits each 16-float vector into two AVX2 halves (slower,
// the same sums). Last, bf16 weights times rows that hold bf16 values (a
// bf16 checkpoint's experts: the model rounds their inputs to bf16): on a
// host with avx512_bf16 the groups of many rows run on vdpbf16ps.
func TestRaggedDot(t *testing.T) {
	for _, c := range []struct {
		rhsT     bool
		wdt, ldt string
		wide     bool
	}{{false, "f32", "f32", false}, {true, "f32", "f32", false}, {true, "bf16", "f32", false}, {true, "f16", "f32", false},
		{false, "f32", "f32", true}, {true, "f32", "f32", true}, {true, "bf16", "f32", true}, {true, "bf16", "bf16", true}} {
		t.Run(fmt.Sprintf("rhsT=%v/%s/lhs=%s/wide=%v", c.rhsT, c.wdt, c.ldt, c.wide), func(t *testing.T) {
			b := testBackend(t)
			b.wide = c.wide
			plan := testRaggedDot(t, b, c.rhsT, c.wdt, c.ldt)
			dp := c.ldt == "bf16" && hostBF16(cpuFeatures()) == bf16AVX512
			if n := strings.Count(plan, "(vdpbf16ps)"); dp && n != len(raggedCases) || !dp && n != 0 {
				t.Errorf("%d ragged_dots on vdpbf16ps, want %d of %d:\n%s", n, map[bool]int{true: len(raggedCases)}[dp], len(raggedCases), plan)
			}
		})
	}
}

// testRaggedDot runs raggedCases with weights of wdt (stored [g,n,k] when
// rhsT) and rows of ldt (converted to f32 in the program), and returns
// the plan.
func testRaggedDot(t *testing.T, b *Backend, rhsT bool, wdt, ldt string) string {
	var params, body, rets, types []string
	for i, c := range raggedCases {
		rhs, lhs := fmt.Sprintf("%%r%d", i), fmt.Sprintf("%%l%d", i)
		if ldt != "f32" {
			body = append(body, fmt.Sprintf("  %%lc%d = convert %%l%d : f32[%d,%d]\n", i, i, c.m, c.k))
			lhs = fmt.Sprintf("%%lc%d", i)
		}
		if rhsT {
			params = append(params, fmt.Sprintf("%%l%d: %s[%d,%d], %%r%d: %s[%d,%d,%d], %%s%d: i32[%d]", i, ldt, c.m, c.k, i, wdt, c.g, c.n, c.k, i, c.g))
			if wdt != "f32" {
				body = append(body, fmt.Sprintf("  %%c%d = convert %%r%d : f32[%d,%d,%d]\n", i, i, c.g, c.n, c.k))
				rhs = fmt.Sprintf("%%c%d", i)
			}
			body = append(body, fmt.Sprintf("  %%t%d = transpose %s {perm=[0,2,1]} : f32[%d,%d,%d]\n", i, rhs, c.g, c.k, c.n))
			rhs = fmt.Sprintf("%%t%d", i)
		} else {
			params = append(params, fmt.Sprintf("%%l%d: f32[%d,%d], %%r%d: f32[%d,%d,%d], %%s%d: i32[%d]", i, c.m, c.k, i, c.g, c.k, c.n, i, c.g))
		}
		body = append(body, fmt.Sprintf("  %%y%d = ragged_dot %s, %s, %%s%d\n  %%z%d = add %%y%d, %%y%d\n", i, lhs, rhs, i, i, i, i))
		rets = append(rets, fmt.Sprintf("%%z%d", i))
		types = append(types, fmt.Sprintf("f32[%d,%d]", c.m, c.n))
	}
	src := fmt.Sprintf("func @f(%s) -> (%s) {\n%s  return %s\n}\n", strings.Join(params, ", "),
		strings.Join(types, ", "), strings.Join(body, ""), strings.Join(rets, ", "))
	m, f, x := compileSrc(t, b, src)
	if g, fb := x.Coverage(); !strings.Contains(g, "ragged_dot") || strings.Contains(fb, "ragged_dot") {
		t.Fatalf("ragged_dot not generated: generated %s; reference %s", g, fb)
	}
	if plan := x.plan.String(); rhsT && (strings.Count(plan, "ragged_dot (rhs [g,n,k])") != len(raggedCases) ||
		strings.Contains(plan, "transpose") || strings.Count(plan, "convert") > map[bool]int{true: len(raggedCases)}[ldt != "f32"]) {
		t.Fatalf("the transposed weights are not read as stored:\n%s", plan)
	}
	in := cpu.RandomInputs(f, 5)
	for run := 0; run < 2; run++ {
		for i, c := range raggedCases {
			in[3*i+2] = backend.FromInts(ir.Tensor(ir.I32, c.g), c.sizes[run]...)
		}
		want, err := cpu.Run(m, f, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if msg := compare(want[i], got[i]); msg != "" {
				t.Errorf("run %d, case %d %+v: %s", run, i, raggedCases[i], msg)
			}
		}
	}
	return x.plan.String()
}

// BenchmarkRaggedDot times the grouped matmul at a decode-like shape
// (4 rows per expert: reading the weights once is the cost, reported as
// GB/s) and a prefill-like one (64 rows per expert: GFLOP/s). On a shared
// machine cpu-weight-GB/s, the weights over the process's CPU time per
// thread, moves less than the wall-clock rate: another process holding a
// core stops the wall clock's rate, not this one (other processes' memory
// traffic still moves it). A plain streaming read measured this way on the
// 2-core EPYC at load average 28 ran 26.6 GB/s per thread:
// go test ./backend/llvm -run '^$' -bench RaggedDot
func BenchmarkRaggedDot(b *testing.B) {
	for _, c := range []struct {
		name          string
		rows, g, k, n int64
		rhsT          bool
		bf16          bool // the weights bf16, converted in the program (narrow.go)
		rows16        bool // the rows bf16 too (a bf16 model's experts: vdpbf16ps)
		// used: when not 0, only that many groups (spread evenly) have
		// rows, the others are empty, and the rates count their weights
		used int64
		// drawn: the sizes drawn as a prefill routes its tokens (rows
		// tokens, top-8 of g experts, seeded), not rows for every group
		drawn bool
	}{
		{"decode", 4, 64, 1024, 768, false, false, false, 0, false},
		// bench/moe's qwen3 decode (batch 64, top-8 of 128: 4 rows per expert)
		{"decode-qwen3-up", 4, 128, 2048, 768, false, false, false, 0, false},
		{"decode-qwen3-down", 4, 128, 768, 2048, false, false, false, 0, false},
		{"decode-gemma4-up", 4, 128, 2816, 704, false, false, false, 0, false},
		{"decode-gemma4-down", 4, 128, 704, 2816, false, false, false, 0, false},
		// bench/moe's batch 1 (one token, 8 of the 128 experts)
		{"decode1-qwen3-up", 1, 128, 2048, 768, false, false, false, 8, false},
		{"decode1-qwen3-down", 1, 128, 768, 2048, false, false, false, 8, false},
		{"decode1-gemma4-up", 1, 128, 2816, 704, false, false, false, 8, false},
		{"decode1-gemma4-down", 1, 128, 704, 2816, false, false, false, 8, false},
		{"prefill", 64, 64, 1024, 768, false, false, false, 0, false},
		// bench/moe's prefill shapes (64 rows per expert on average), 16 of the 128 experts
		{"prefill-qwen3-up", 64, 16, 2048, 768, false, false, false, 0, false},
		{"prefill-qwen3-down", 64, 16, 768, 2048, false, false, false, 0, false},
		{"prefill-gemma4-up", 64, 16, 2816, 704, false, false, false, 0, false},
		{"prefill-gemma4-down", 64, 16, 704, 2816, false, false, false, 0, false},
		// the weights as Hugging Face stores them ([experts, out, in], the
		// models' case): bench/models' 512-token prefill gives an expert 32
		// rows on average, bench/moe's 1024 tokens 64; all 128 experts
		{"prefill-t32-qwen3-up", 32, 128, 2048, 768, true, false, false, 0, false},
		{"prefill-t32-qwen3-down", 32, 128, 768, 2048, true, false, false, 0, false},
		// the same, each expert's rows as 512 tokens' top-8 routing gives
		// them (bench/models' MoE prefill): most groups end in a part panel
		{"prefill-t32-drawn-qwen3-up", 32, 128, 2048, 768, true, false, false, 0, true},
		{"prefill-t32-drawn-qwen3-down", 32, 128, 768, 2048, true, false, false, 0, true},
		{"prefill-t64-qwen3-up", 64, 128, 2048, 768, true, false, false, 0, false},
		{"prefill-t16-qwen3-up", 16, 128, 2048, 768, true, false, false, 0, false},
		{"prefill-t8-qwen3-up", 8, 128, 2048, 768, true, false, false, 0, false},
		{"prefill-t4-qwen3-up", 4, 128, 2048, 768, true, false, false, 0, false},
		// a bf16 checkpoint's experts, read at their width
		{"prefill-t32-qwen3-up-bf16", 32, 128, 2048, 768, true, true, false, 0, false},
		{"prefill-t4-qwen3-up-bf16", 4, 128, 2048, 768, true, true, false, 0, false},
		// and its rows rounded to bf16, as the models give them (ragged_bf16.go)
		{"prefill-t32-qwen3-up-bf16-rows", 32, 128, 2048, 768, true, true, true, 0, false},
		{"prefill-t32-qwen3-down-bf16-rows", 32, 128, 768, 2048, true, true, true, 0, false},
		{"prefill-t32-drawn-qwen3-up-bf16-rows", 32, 128, 2048, 768, true, true, true, 0, true},
		{"prefill-t32-drawn-qwen3-down-bf16-rows", 32, 128, 768, 2048, true, true, true, 0, true},
		{"prefill-t32-qwen3-down-bf16", 32, 128, 768, 2048, true, true, false, 0, false},
		{"prefill-t4-qwen3-up-bf16-rows", 4, 128, 2048, 768, true, true, true, 0, false},
		{"prefill-t4-qwen3-down-bf16-rows", 4, 128, 768, 2048, true, true, true, 0, false},
		{"prefill-t4-qwen3-down-bf16", 4, 128, 768, 2048, true, true, false, 0, false},
		// batch-1 decode as the models run it: one token's 8 experts of
		// 128, stored [n,k], f32 and bf16; the experts used move on every
		// run (as a token's do), so the weights come from memory
		{"decode1-t-qwen3-up", 1, 128, 2048, 768, true, false, false, 8, false},
		{"decode1-t-qwen3-down", 1, 128, 768, 2048, true, false, false, 8, false},
		{"decode1-t-qwen3-up-bf16", 1, 128, 2048, 768, true, true, false, 8, false},
		{"decode1-t-qwen3-down-bf16", 1, 128, 768, 2048, true, true, false, 8, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			used := c.g
			if c.used > 0 {
				used = c.used
			}
			m := c.rows * used
			rhs, dims := "%r", fmt.Sprintf("%d,%d,%d", c.g, c.k, c.n)
			if c.rhsT {
				rhs, dims = "%t", fmt.Sprintf("%d,%d,%d", c.g, c.n, c.k)
			}
			wdt, wbytes := "f32", int64(4)
			if c.bf16 {
				wdt, wbytes = "bf16", 2
			}
			ldt, lhs := "f32", "%l"
			if c.rows16 {
				ldt, lhs = "bf16", "%lc"
			}
			src := fmt.Sprintf("func @f(%%l: %s[%d,%d], %%r: %s[%s], %%s: i32[%d]) -> f32[%d,%d] {\n", ldt, m, c.k, wdt, dims, c.g, m, c.n)
			if c.rows16 {
				src += fmt.Sprintf("  %%lc = convert %%l : f32[%d,%d]\n", m, c.k)
			}
			w := "%r"
			if c.bf16 {
				src += fmt.Sprintf("  %%c = convert %%r : f32[%s]\n", dims)
				w = "%c"
			}
			if c.rhsT {
				src += fmt.Sprintf("  %%t = transpose %s {perm=[0,2,1]} : f32[%d,%d,%d]\n", w, c.g, c.k, c.n)
			}
			src += fmt.Sprintf("  %%y = ragged_dot %s, %s, %%s\n  return %%y\n}\n", lhs, rhs)
			_, f, x := compileSrc(b, testBackend(b), src)
			in := cpu.RandomInputs(f, 1)
			sizes := make([]int64, c.g)
			for i := int64(0); i < used; i++ {
				sizes[i*c.g/used] = c.rows
			}
			if c.drawn {
				sizes = drawnSizes(c.rows*c.g/8, c.g)
			}
			in[2] = backend.FromInts(ir.Tensor(ir.I32, c.g), sizes...)
			x.Run(in)
			// The batch-1 cases move their experts on from run to run.
			moving := c.rows == 1 && c.rhsT
			var turns []*backend.Buffer
			for shift := range c.g / used {
				moved := make([]int64, c.g)
				for i := range sizes {
					moved[(int64(i)+int64(shift))%c.g] = sizes[i]
				}
				turns = append(turns, backend.FromInts(ir.Tensor(ir.I32, c.g), moved...))
			}
			b.ResetTimer()
			best := time.Duration(math.MaxInt64)
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				if moving {
					in[2] = turns[i%len(turns)]
				}
				t0 := time.Now()
				if _, err := x.Run(in); err != nil {
					b.Fatal(err)
				}
				best = min(best, time.Since(t0))
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			cpuSec := (processCPU() - cpu0).Seconds() / float64(b.N) / float64(x.threads)
			b.ReportMetric(float64(used*c.k*c.n*wbytes)/sec/1e9, "weight-GB/s")
			b.ReportMetric(float64(used*c.k*c.n*wbytes)/cpuSec/1e9, "cpu-weight-GB/s")
			b.ReportMetric(float64(2*m*c.k*c.n)/sec/1e9, "GFLOP/s")
			b.ReportMetric(float64(2*m*c.k*c.n)/best.Seconds()/1e9, "best-GFLOP/s") // as BenchmarkGemm
		})
	}
}

// drawnSizes are the group sizes of tokens routed to their top 8 of g
// experts, each token's 8 drawn without repeats from a seeded source: the
// sizes sum to 8*tokens, scattered about their mean as a prefill's are.
func drawnSizes(tokens, g int64) []int64 {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := make([]int64, g)
	for range tokens {
		for _, e := range r.Perm(int(g))[:8] {
			sizes[e]++
		}
	}
	return sizes
}

// processCPU is the CPU time the process has used (user and system): the
// weights over it per thread are a rate that other processes taking the
// cores of a shared machine change less than the wall time.
func processCPU() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// TestRaggedDotEmptyTransposed: an empty ragged_dot (no lhs rows) whose rhs
// is a transpose runs on the reference kernel, so the planner must
// materialise the transpose for it ("operand of ragged_dot was not
// planned" before raggedGenerated and the planner agreed).
func TestRaggedDotEmptyTransposed(t *testing.T) {
	src := "func @f(%l: f32[0,8], %r: f32[2,16,8], %s: i32[2]) -> f32[0,16] {\n  %t = transpose %r {perm=[0,2,1]} : f32[2,8,16]\n  %y = ragged_dot %l, %t, %s\n  return %y\n}\n"
	m, err := tir.Parse("empty.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	differential(t, testBackend(t), m, m.Entry(), 1)
}

// TestRaggedContract compiles ragged_contract (ragged_dot's weight
// gradient) for the shapes of raggedCases (lhs [m,k], rhs [m,n], the same
// group sizes) and one whose k is a whole number of the kernel's row
// blocks, into one function, and compares two runs of each (the second
// with other sizes: every group's result is written, empty ones as zeros)
// with the reference executor, with AVX-512's tiles and AVX2's.
func TestRaggedContract(t *testing.T) {
	cases := append(slices.Clone(raggedCases), raggedCase{12, 48, 3, 32, [2][]int64{{5, 0, 7}, {0, 12, 0}}})
	var params, body, rets, types []string
	for i, c := range cases {
		params = append(params, fmt.Sprintf("%%l%d: f32[%d,%d], %%r%d: f32[%d,%d], %%s%d: i32[%d]", i, c.m, c.k, i, c.m, c.n, i, c.g))
		body = append(body, fmt.Sprintf("  %%y%d = ragged_contract %%l%d, %%r%d, %%s%d\n  %%z%d = add %%y%d, %%y%d\n", i, i, i, i, i, i, i))
		rets = append(rets, fmt.Sprintf("%%z%d", i))
		types = append(types, fmt.Sprintf("f32[%d,%d,%d]", c.g, c.k, c.n))
	}
	src := fmt.Sprintf("func @f(%s) -> (%s) {\n%s  return %s\n}\n", strings.Join(params, ", "),
		strings.Join(types, ", "), strings.Join(body, ""), strings.Join(rets, ", "))
	for _, wide := range []bool{false, true} {
		t.Run(fmt.Sprintf("wide=%v", wide), func(t *testing.T) {
			b := testBackend(t)
			b.wide = wide
			m, f, x := compileSrc(t, b, src)
			if g, fb := x.Coverage(); !strings.Contains(g, "ragged_contract") || strings.Contains(fb, "ragged_contract") {
				t.Fatalf("ragged_contract not generated: generated %s; reference %s", g, fb)
			}
			in := cpu.RandomInputs(f, 7)
			for run := 0; run < 2; run++ {
				for i, c := range cases {
					in[3*i+2] = backend.FromInts(ir.Tensor(ir.I32, c.g), c.sizes[run]...)
				}
				want, err := cpu.Run(m, f, in)
				if err != nil {
					t.Fatal(err)
				}
				got, err := x.Run(in)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if msg := compare(want[i], got[i]); msg != "" {
						t.Errorf("run %d, case %d %+v: %s", run, i, cases[i], msg)
					}
				}
			}
		})
	}
}

// BenchmarkRaggedContract times ragged_dot's weight gradient at a prefill-
// like MoE shape (64 rows per expert), reported as GFLOP/s (wall clock, and
// per thread of CPU time as BenchmarkRaggedDot's cpu- rates):
// go test ./backend/llvm -run '^$' -bench RaggedContract
func BenchmarkRaggedContract(b *testing.B) {
	for _, c := range []struct {
		name          string
		rows, g, k, n int64
	}{
		{"qwen3-up", 64, 16, 2048, 768},   // d W_up: x [m,2048]ᵀ · dy [m,768] per expert
		{"qwen3-down", 64, 16, 768, 2048}, // d W_down: act [m,768]ᵀ · dy [m,2048]
	} {
		b.Run(c.name, func(b *testing.B) {
			m := c.rows * c.g
			src := fmt.Sprintf("func @f(%%l: f32[%d,%d], %%r: f32[%d,%d], %%s: i32[%d]) -> f32[%d,%d,%d] {\n"+
				"  %%y = ragged_contract %%l, %%r, %%s\n  return %%y\n}\n", m, c.k, m, c.n, c.g, c.g, c.k, c.n)
			_, f, x := compileSrc(b, testBackend(b), src)
			in := cpu.RandomInputs(f, 1)
			sizes := make([]int64, c.g)
			for i := range sizes {
				sizes[i] = c.rows
			}
			in[2] = backend.FromInts(ir.Tensor(ir.I32, c.g), sizes...)
			x.Run(in)
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				if _, err := x.Run(in); err != nil {
					b.Fatal(err)
				}
			}
			cpuSec := (processCPU() - cpu0).Seconds() / float64(b.N) / float64(x.threads)
			b.ReportMetric(float64(2*m*c.k*c.n)/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GFLOP/s")
			// per thread of CPU time, which other processes on the host move less (BenchmarkRaggedDot)
			b.ReportMetric(float64(2*m*c.k*c.n)/cpuSec/1e9, "cpu-GFLOP/s")
		})
	}
}

// raggedByExpertCases are decode-shaped (fewer rows than groups x
// raggedGemmRows, matrices [g,k,n]): split by expert. Each is large enough
// to be split across threads (work >= splitWork).
var raggedByExpertCases = []raggedCase{
	// uneven groups, empty ones, a group of 13 rows (a blocked product's
	// size, swept all the same), rows past the groups; k = 1 band + 3
	// rows, n = 15 tiles + 5 columns
	{40, 7, 16, 245, [2][]int64{{3, 0, 13, 1, 0, 0, 2, 5, 0, 0, 0, 1, 1, 0, 4, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}},
	// k narrower than a band; sizes summing past m, a negative size
	{24, 3, 8, 1000, [2][]int64{{1, -2, 8, 0, 0, 9, 20, 1}, {24, 0, 0, 0, 0, 0, 0, 0}}},
	// batch 1's shape: one row in each of 8 groups of 64, the rest empty
	{8, 96, 64, 96, [2][]int64{
		{0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1},
		{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}},
}

// TestRaggedDotByExpert runs the split by expert on 1, 2 and 3 threads
// (more parts than the pool has threads on a 2-core machine) against the
// reference executor, twice per executable with different group sizes.
func TestRaggedDotByExpert(t *testing.T) {
	var params, body, rets, types []string
	for i, c := range raggedByExpertCases {
		if c.m*c.k*c.n < splitWork || c.m >= raggedGemmRows*c.g {
			t.Fatalf("case %d %+v: not a split decode shape", i, c)
		}
		params = append(params, fmt.Sprintf("%%l%d: f32[%d,%d], %%r%d: f32[%d,%d,%d], %%s%d: i32[%d]", i, c.m, c.k, i, c.g, c.k, c.n, i, c.g))
		body = append(body, fmt.Sprintf("  %%y%d = ragged_dot %%l%d, %%r%d, %%s%d\n  %%z%d = add %%y%d, %%y%d\n", i, i, i, i, i, i, i))
		rets = append(rets, fmt.Sprintf("%%z%d", i))
		types = append(types, fmt.Sprintf("f32[%d,%d]", c.m, c.n))
	}
	src := fmt.Sprintf("func @f(%s) -> (%s) {\n%s  return %s\n}\n", strings.Join(params, ", "),
		strings.Join(types, ", "), strings.Join(body, ""), strings.Join(rets, ", "))
	for _, threads := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			b := testBackend(t)
			b.threads = threads
			m, f, x := compileSrc(t, b, src)
			if plan := x.plan.String(); strings.Count(plan, "ragged_dot (by expert)") != len(raggedByExpertCases) {
				t.Fatalf("not split by expert:\n%s", plan)
			}
			in := cpu.RandomInputs(f, 7)
			for run := 0; run < 2; run++ {
				for i, c := range raggedByExpertCases {
					in[3*i+2] = backend.FromInts(ir.Tensor(ir.I32, c.g), c.sizes[run]...)
				}
				want, err := cpu.Run(m, f, in)
				if err != nil {
					t.Fatal(err)
				}
				got, err := x.Run(in)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if msg := compare(want[i], got[i]); msg != "" {
						t.Errorf("run %d, case %d: %s", run, i, msg)
					}
				}
			}
		})
	}
}
