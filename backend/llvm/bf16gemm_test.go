package llvm

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// bf16GemmCase is one product of TestBF16Gemm: x [B,]M,K times w, stored
// [N,K] (a Hugging Face weight) or, with kn, [K,N]; out is the result's
// dtype, epi adds a bias [N] and scales by 0.5 (a fused epilogue).
type bf16GemmCase struct {
	name       string
	b, m, k, n int64
	kn         bool
	out        string
	epi        bool
}

func (c bf16GemmCase) src() string {
	lead := func(s string) string {
		if c.b > 0 {
			return fmt.Sprintf("%d,%s", c.b, s)
		}
		return s
	}
	xs, rs := lead(fmt.Sprintf("%d,%d", c.m, c.k)), lead(fmt.Sprintf("%d,%d", c.m, c.n))
	ws, wc := lead(fmt.Sprintf("%d,%d", c.n, c.k)), 1
	if c.kn {
		ws, wc = lead(fmt.Sprintf("%d,%d", c.k, c.n)), 0
	}
	attr := fmt.Sprintf("lhs_contract=[1], rhs_contract=[%d]", wc)
	if c.b > 0 {
		attr = fmt.Sprintf("lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[%d]", wc+1)
	}
	params := fmt.Sprintf("%%x: bf16[%s], %%w: bf16[%s]", xs, ws)
	body := fmt.Sprintf("  %%d = dot_general %%x, %%w {%s} : %s[%s]\n", attr, c.out, rs)
	ret := "%d"
	if c.epi {
		params += fmt.Sprintf(", %%bias: f32[%d]", c.n)
		rank := 2 + min(c.b, 1)
		body += fmt.Sprintf("  %%bb = broadcast %%bias {dims=[%d]} : f32[%s]\n  %%s = add %%d, %%bb : f32[%s]\n", rank-1, rs, rs) +
			fmt.Sprintf("  %%h = constant 0.5 : f32[]\n  %%hb = broadcast %%h {dims=[]} : f32[%s]\n  %%e = mul %%s, %%hb : f32[%s]\n", rs, rs)
		ret = "%e"
	}
	return fmt.Sprintf("func @f(%s) -> %s[%s] {\n%s  return %s\n}\n", params, c.out, rs, body, ret)
}

// TestBF16Gemm: the packed vdpbf16ps product against the reference
// executor on every edge: M, N and K off the tile (12 x 32, stored in two
// halves of 6 rows: tile-halves ends on a first half alone, tile-one-row
// on a second half of one row) and the
// blocks (mc rows, kc = 2·KC contracting indices, nc columns), K odd
// (the last pair padded with zero), K over several slices with an odd
// last one (packed-slices: whole panels transposed in registers, with
// pairs past a multiple of 8 and the odd index one by one; slice-of-one:
// a last slice of one index), batched, both rhs layouts, a fused epilogue, a bf16 result
// (one slice). The bound is TestBF16Dot's argument for this order of
// summation: every vdpbf16ps step rounds twice (each of the pair's
// products added in turn), K/2 steps a lane, and each slice after the
// first is added into the result once more, so
// |got - want| <= (K + slices + 2) · 2^-24 · Σ|x·w| (scaled by the
// epilogue's 0.5, plus the f32 rounding of the bias add and the scale,
// 2^-23 of the result); a bf16 result rounds once more (2^-8 of it).
func TestBF16Gemm(t *testing.T) {
	if hostBF16(cpuFeatures()) != bf16AVX512 {
		t.Skip("this CPU has no avx512_bf16")
	}
	be := testBackend(t)
	be.gemm = fixedGemm(staticGemm(true)) // slices of kc = 512
	for _, c := range []bf16GemmCase{
		{name: "tile", m: 66, k: 64, n: 64, out: "f32"},
		{name: "edges", m: 17, k: 45, n: 33, out: "f32"},
		{name: "K3", m: 16, k: 3, n: 7, out: "f32"},
		{name: "blocks", m: 131, k: 1033, n: 530, out: "f32"},
		{name: "kn", m: 23, k: 77, n: 70, kn: true, out: "f32"},
		{name: "kn-slices", m: 20, k: 601, n: 40, kn: true, out: "f32"},
		{name: "kn-panels", m: 29, k: 65, n: 96, kn: true, out: "f32", epi: true},
		{name: "kn-panels-even", b: 2, m: 18, k: 1030, n: 64, kn: true, out: "f32"},
		{name: "batched", b: 3, m: 19, k: 96, n: 35, out: "f32"},
		{name: "batched-kn", b: 2, m: 16, k: 31, n: 9, kn: true, out: "f32"},
		{name: "epilogue", m: 25, k: 530, n: 67, out: "f32", epi: true},
		{name: "epilogue-batched", b: 2, m: 17, k: 40, n: 33, out: "f32", epi: true},
		{name: "bf16-result", m: 21, k: 1025, n: 37, out: "bf16"},
		{name: "tile-halves", m: 30, k: 47, n: 40, out: "f32"},
		{name: "tile-one-row", m: 19, k: 18, n: 65, out: "f32", epi: true},
		{name: "packed-slices", m: 40, k: 1041, n: 64, out: "f32"},
		{name: "slice-of-one", m: 17, k: 1025, n: 33, out: "f32"},
		{name: "bf16-halves", m: 25, k: 35, n: 96, out: "bf16"},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, be, "dot_general (avx512bf16 packed)", staticGemm(true).bf16KC(), 5) })
	}
}

// run compiles c on be, requires one step, what (with the epilogue's ops
// when c has one), and checks it against the reference executor on
// inputs of seed within c's bound for slices of kc.
func (c bf16GemmCase) run(t *testing.T, be *Backend, what string, kc int64, seed int64) {
	m, f, x := c.compile(t, be, what)
	in := cpu.RandomInputs(f, seed)
	want, got := bothRuns(t, m, f, x, in)
	c.within(t, kc, in, want, got)
}

// compile compiles c on be and requires one step, what (with the
// epilogue's ops when c has one).
func (c bf16GemmCase) compile(t *testing.T, be *Backend, what string) (*ir.Module, *ir.Func, *Executable) {
	t.Helper()
	m, f, x := compileSrc(t, be, c.src())
	if c.epi {
		what += "+add+mul"
	}
	if len(x.plan.steps) != 1 || x.plan.steps[0].what != what {
		t.Fatalf("plan:\n%s\nwant one step: %s", x.plan, what)
	}
	return m, f, x
}

// bothRuns is f's first result on in from the reference executor and
// from x.
func bothRuns(t *testing.T, m *ir.Module, f *ir.Func, x *Executable, in []*backend.Buffer) (want, got *backend.Buffer) {
	t.Helper()
	ref, err := cpu.Run(m, f, in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	return ref[0], res[0]
}

// TestBF16GemmRowRange: a call of the packed product over part of its
// range (a core's share: panels of gemmMR = 6 rows) writes those rows
// alone, though its tiles have 12: a share that ends inside a tile left
// the tile's other rows, which the other core owns and this one never
// packed, written with stale lhs pairs, wrong in about one run of ten
// where the two cores raced. Run on the caller over the first 3 panels
// (rows 0-17 of 25), the rows past them keep the zeros of new storage.
func TestBF16GemmRowRange(t *testing.T) {
	if hostBF16(cpuFeatures()) != bf16AVX512 {
		t.Skip("this CPU has no avx512_bf16")
	}
	c := bf16GemmCase{m: 25, k: 530, n: 67, out: "f32", epi: true}
	m, f, x := c.compile(t, testBackend(t), "dot_general (avx512bf16 packed)")
	x.threads, x.plan.steps[0].rows = 1, 3
	ref, got := bothRuns(t, m, f, x, cpu.RandomInputs(f, 5))
	want, have := ref.Float32s(), got.Float32s()
	for i := range have {
		switch row := i / 67; {
		case row >= 18 && have[i] != 0:
			t.Fatalf("row %d, column %d: %g written past the call's rows", row, i%67, have[i])
		case row < 18 && math.Abs(float64(have[i]-want[i])) > 1e-3*(1+math.Abs(float64(want[i]))):
			t.Fatalf("row %d, column %d: %g, want %g", row, i%67, have[i], want[i])
		}
	}
}

// TestBF16DotSwap: a bf16 × bf16 product of 16 to 64 rows by weights
// stored [N, K] (a batched decode's projections) runs as the swapped
// product on vdpbf16ps (dotSwap's dp), against the reference executor
// within TestBF16Gemm's bound (one slice): one panel of 16 rows, a pair of
// panels and a last row as a dot product (33), four panels (64), chunks
// of one panel ending in the 8-row tile (40 rows at a contraction of
// 4098), a panel and 4 rows of dot products at a contraction of 2 (20),
// column tiles shared by the threads, and a fused epilogue on a pair of
// panels, a panel and 2 rows (50).
func TestBF16DotSwap(t *testing.T) {
	if hostBF16(cpuFeatures()) != bf16AVX512 {
		t.Skip("this CPU has no avx512_bf16")
	}
	be := testBackend(t)
	for _, c := range []bf16GemmCase{
		{name: "panel", m: 16, k: 64, n: 16, out: "f32"},
		{name: "panels", m: 33, k: 1030, n: 48, out: "f32"},
		{name: "chunk", m: 64, k: 256, n: 160, out: "f32"},
		{name: "long", m: 40, k: 4098, n: 32, out: "f32"},
		{name: "K2", m: 20, k: 2, n: 64, out: "f32"},
		{name: "epilogue", m: 50, k: 130, n: 96, out: "f32", epi: true},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, be, "dot_general (swapped, vdpbf16ps)", c.k, 6) })
	}
	// A chunk's last rows take the smallest tile that pads at most 2 of
	// them (swapKinds): "long"'s 40 rows in chunks of one panel are 16, 16
	// and 8, the last on half a panel in 8-lane vdpbf16ps.
	_, _, x := bf16GemmCase{m: 40, k: 4098, n: 32, out: "f32"}.compile(t, be, "dot_general (swapped, vdpbf16ps)")
	if !strings.Contains(x.plan.gen.text(), "dpbf16ps.256") {
		t.Errorf("no 8-row tile (dpbf16ps.256) generated:\n%s", x.plan)
	}
}

// bf16KC is the packed product's slice depth (bf16GemmBlocks).
func (p gemmParams) bf16KC() int64 {
	_, kc, _ := p.bf16GemmBlocks(1, math.MaxInt32, 1)
	return kc
}

// within checks got against want element by element within
// TestBF16Gemm's bound, computed from the inputs; kc is the slice depth.
func (c bf16GemmCase) within(t *testing.T, kc int64, in []*backend.Buffer, want, got *backend.Buffer) {
	t.Helper()
	bs := max(c.b, 1)
	slices := (c.k + kc - 1) / kc
	if c.out != "f32" {
		slices = 1
	}
	w := func(bi, kk, j int64) float64 {
		if c.kn {
			return in[1].Float64At(int((bi*c.k+kk)*c.n + j))
		}
		return in[1].Float64At(int((bi*c.n+j)*c.k + kk))
	}
	for bi := range bs {
		for i := range c.m {
			for j := range c.n {
				var abs float64
				for kk := range c.k {
					abs += math.Abs(in[0].Float64At(int((bi*c.m+i)*c.k+kk)) * w(bi, kk, j))
				}
				at := int((bi*c.m+i)*c.n + j)
				ref := math.Abs(want.Float64At(at))
				tol := float64(c.k+slices+2) * math.Ldexp(abs, -24)
				if c.epi {
					tol = tol/2 + math.Ldexp(ref, -23)
				}
				if want.Type().DType == ir.BF16 {
					tol += math.Ldexp(ref, -8)
				}
				if d := math.Abs(got.Float64At(at) - want.Float64At(at)); d > tol || math.IsNaN(d) {
					t.Fatalf("[%d,%d,%d]: got %v, want %v (difference %.3g, tolerance %.3g)", bi, i, j, got.Float64At(at), want.Float64At(at), d, tol)
				}
			}
		}
	}
}

// TestBF16GemmBlocks: the packed product's blocks from the host's
// parameters: kc twice the f32 slice and even, nc equal column blocks of
// whole 32-column panels, mc whole 12-row panels (at most MC rounded
// down to them), each clamped to the problem.
func TestBF16GemmBlocks(t *testing.T) {
	for _, c := range []struct {
		mcMax, m, k, n, mc, kc, nc int64
	}{
		{120, 512, 1024, 3072, 120, 512, 512},
		{120, 512, 3072, 1024, 120, 512, 512},
		{120, 512, 1024, 151936, 120, 512, 512},
		{120, 17, 45, 33, 24, 46, 64},
		{120, 16, 3, 7, 24, 4, 32},
		{120, 100, 1033, 530, 108, 512, 288},
		{126, 512, 1024, 3072, 120, 512, 512},
		{6, 512, 1024, 3072, 12, 512, 512},
	} {
		p := gemmParams{Tile: 32, MC: c.mcMax, KC: 256, NC: 512}
		mc, kc, nc := p.bf16GemmBlocks(c.m, c.k, c.n)
		if mc != c.mc || kc != c.kc || nc != c.nc {
			t.Errorf("%dx%dx%d: blocks %d,%d,%d, want %d,%d,%d", c.m, c.k, c.n, mc, kc, nc, c.mc, c.kc, c.nc)
		}
	}
}

// BenchmarkBF16Gemm: the prefill's products (512 tokens of a Qwen3-0.6B:
// the attention and MLP projections and the lm head) with bf16 operands,
// x [M,K] times a weight stored [N,K], on both cores: the packed product,
// bf16Dot's unpacked tiles, and the f32 product of the same shape with
// the bf16 weight widened as it is packed (what a bf16 checkpoint ran
// before); best-GFLOP/s is the fastest run.
//
//	go test ./backend/llvm -run '^$' -bench BF16Gemm -benchtime 10x
func BenchmarkBF16Gemm(b *testing.B) {
	if hostBF16(cpuFeatures()) != bf16AVX512 {
		b.Skip("this CPU has no avx512_bf16")
	}
	for _, s := range [][3]int64{{512, 1024, 3072}, {512, 3072, 1024}, {512, 1024, 2048}, {512, 1024, 151936}} {
		for _, v := range []string{"packed", "packed-epilogue", "tiles", "f32-widen"} {
			if v == "tiles" && s[2] > 4096 || v == "packed-epilogue" && s[1] != 3072 {
				continue // minutes a run; one shape with an epilogue (a residual's add after the MLP)
			}
			b.Run(fmt.Sprintf("%s/%dx%dx%d", v, s[0], s[1], s[2]), func(b *testing.B) {
				if v == "tiles" {
					defer func(n int64) { bf16GemmMinRows = n }(bf16GemmMinRows)
					bf16GemmMinRows = math.MaxInt64
				}
				if v == "f32-widen" {
					gemmBench{m: s[0], k: s[1], n: s[2], rhsT: true, wdt: "bf16"}.run(b)
					return
				}
				be := testBackend(b)
				src := bf16GemmCase{m: s[0], k: s[1], n: s[2], out: "f32", epi: v == "packed-epilogue"}.src()
				_, f, x := compileSrc(b, be, src)
				want := map[string]string{"packed": "dot_general (avx512bf16 packed)", "packed-epilogue": "dot_general (avx512bf16 packed)+add+mul",
					"tiles": "dot_general (avx512bf16)"}[v]
				if x.plan.steps[0].what != want {
					b.Fatalf("plan %q, want %q", x.plan.steps[0].what, want)
				}
				bf16GemmRun(b, x, cpu.RandomInputs(f, 1), 2*s[0]*s[1]*s[2])
			})
		}
	}
}

// bf16GemmRun times x on args, reporting GFLOP/s of flop a call (mean
// and best run) and the process's CPU time a call (user + system, every
// thread's): on a host shared with other work the wall time of a call
// waits for whichever core is taken, its CPU time much less.
func bf16GemmRun(b *testing.B, x *Executable, args []*backend.Buffer, flop int64) {
	x.Run(args)
	b.ResetTimer()
	best := time.Duration(math.MaxInt64)
	cpu0 := cpuTime()
	for range b.N {
		t0 := time.Now()
		if _, err := x.Run(args); err != nil {
			b.Fatal(err)
		}
		best = min(best, time.Since(t0))
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(flop)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
	b.ReportMetric(float64(flop)/float64(best.Nanoseconds()), "best-GFLOP/s")
}
