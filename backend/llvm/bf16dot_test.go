package llvm

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// bf16DotSrc is a product of x [M,K] (batched [B,M,K] when b > 0) and w
// [N,K], both bf16 (or converted from bf16 when conv), with a result of
// dtype out.
func bf16DotSrc(b, m, k, n int64, out string, conv bool) string {
	xs, ws, rs := fmt.Sprintf("%d,%d", m, k), fmt.Sprintf("%d,%d", n, k), fmt.Sprintf("%d,%d", m, n)
	attr := "lhs_contract=[1], rhs_contract=[1]"
	if b > 0 {
		xs, ws, rs = fmt.Sprintf("%d,%s", b, xs), fmt.Sprintf("%d,%s", b, ws), fmt.Sprintf("%d,%s", b, rs)
		attr = "lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[2]"
	}
	body, x, w := "", "%x", "%w"
	if conv {
		body = fmt.Sprintf("  %%x32 = convert %%x : f32[%s]\n  %%w32 = convert %%w : f32[%s]\n", xs, ws)
		x, w = "%x32", "%w32"
	}
	return fmt.Sprintf("func @f(%%x: bf16[%s], %%w: bf16[%s]) -> %s[%s] {\n%s  %%d = dot_general %s, %s {%s} : %s[%s]\n  return %%d\n}\n",
		xs, ws, out, rs, body, x, w, attr, out, rs)
}

// TestBF16Dot: the vdpbf16ps kernel (from gemvRows+1 rows; the gemv
// below, which these cases check too) against the reference executor on
// shapes off its tiles (M and N not multiples of 4 or of the 64-row
// block, K odd and not a multiple of 32), batched, with converted
// operands, and with a bf16 result. The f32 results must be within the
// bound of f32 summation the kernel's order allows: each of at most
// K/16 + 24 roundings (two per vdpbf16ps step of a lane, the 16 lanes'
// sum, the tail) costs at most 2^-24 of the sum of |x·w|, so
// |got - want| <= (K/16 + 24) · 2^-24 · Σ|x·w|. The bf16 result is that,
// rounded once more to bf16.
func TestBF16Dot(t *testing.T) {
	if hostBF16(cpuFeatures()) != bf16AVX512 {
		t.Skip("this CPU has no avx512_bf16")
	}
	b := testBackend(t)
	for _, c := range []struct {
		name       string
		b, m, k, n int64
		out        string
		conv       bool
	}{
		{"gemv", 0, 1, 1024, 67, "f32", false},
		{"rows3-Kodd", 0, 3, 45, 5, "f32", false},
		{"rows11-Kodd", 0, 11, 45, 5, "f32", false},
		{"rows13-K77", 0, 13, 77, 130, "f32", false},
		{"rows6-K1023", 0, 6, 1023, 9, "f32", false},
		{"rows14-K1023", 0, 14, 1023, 9, "f32", false},
		{"K32", 0, 5, 32, 4, "f32", false},
		{"rows9-K32", 0, 9, 32, 4, "f32", false},
		{"batched", 3, 7, 96, 19, "f32", false},
		{"batched-rows10", 3, 10, 96, 19, "f32", false},
		{"converted", 0, 9, 100, 70, "f32", true},
		{"bf16-result", 0, 5, 64, 33, "bf16", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := tir.Parse("bf16dot.tir", []byte(bf16DotSrc(c.b, c.m, c.k, c.n, c.out, c.conv)))
			if err != nil {
				t.Fatal(err)
			}
			f := m.Entry()
			x, err := b.compile(m, f, nil)
			if err != nil {
				t.Fatal(err)
			}
			kernel := "dot_general (avx512bf16)"
			if c.m <= gemvRows && c.out == "f32" {
				kernel = "gemv" // the streaming kernel, both operands widened (dot.go)
			}
			if len(x.plan.steps) != 1 || x.plan.steps[0].what != kernel {
				t.Fatalf("plan:\n%s\nwant one step: %s", x.plan, kernel)
			}
			in := cpu.RandomInputs(f, 4)
			want, err := cpu.Run(m, f, in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := x.Run(in)
			if err != nil {
				t.Fatal(err)
			}
			bf16DotWithin(t, c.b, c.m, c.k, c.n, in, want[0], got[0])
		})
	}
}

// bf16DotWithin checks got against want element by element within
// TestBF16Dot's bound, computed from the inputs.
func bf16DotWithin(t *testing.T, bs, m, k, n int64, in []*backend.Buffer, want, got *backend.Buffer) {
	t.Helper()
	bs = max(bs, 1)
	for bi := range bs {
		for i := range m {
			for j := range n {
				var abs float64
				for kk := range k {
					abs += math.Abs(in[0].Float64At(int((bi*m+i)*k+kk)) * in[1].Float64At(int((bi*n+j)*k+kk)))
				}
				at := int((bi*m+i)*n + j)
				tol := float64(k/16+24) * math.Ldexp(abs, -24)
				if want.Type().DType == ir.BF16 {
					tol += math.Ldexp(math.Abs(want.Float64At(at)), -7) // one bf16 rounding more
				}
				if d := math.Abs(got.Float64At(at) - want.Float64At(at)); d > tol || math.IsNaN(d) {
					t.Fatalf("[%d,%d,%d]: got %v, want %v (difference %.3g, tolerance %.3g)", bi, i, j, got.Float64At(at), want.Float64At(at), d, tol)
				}
			}
		}
	}
}

// TestBF16DotDispatch: which kernel a product takes, by the operands'
// dtypes and layout and the target's bf16 unit (no CPU needed: the plan
// only).
func TestBF16DotDispatch(t *testing.T) {
	for _, c := range []struct {
		name string
		src  string
		unit bf16Unit
		want string
	}{
		{"avx512-gemv", bf16DotSrc(0, 1, 64, 40, "f32", false), bf16AVX512, "gemv"},
		{"avx512-gemv-rows", bf16DotSrc(0, 8, 64, 40, "f32", false), bf16AVX512, "gemv"},
		{"avx512-tiles", bf16DotSrc(0, 9, 64, 40, "f32", false), bf16AVX512, "dot_general (avx512bf16)"},
		{"avx512-gemm", bf16DotSrc(0, 100, 64, 40, "f32", false), bf16AVX512, "dot_general (avx512bf16 packed)"},
		{"avx512-few-rows", bf16DotSrc(0, 15, 64, 40, "f32", false), bf16AVX512, "dot_general (avx512bf16)"},
		{"avx512-swapped", bf16DotSrc(0, 16, 64, 48, "f32", false), bf16AVX512, "dot_general (swapped, vdpbf16ps)"},
		{"avx512-swapped-64", bf16DotSrc(0, 64, 64, 48, "f32", true), bf16AVX512, "dot_general (swapped, vdpbf16ps)"},
		{"avx512-65-rows", bf16DotSrc(0, 65, 64, 48, "f32", false), bf16AVX512, "dot_general (avx512bf16 packed)"},
		{"avx512-odd-K", bf16DotSrc(0, 16, 63, 48, "f32", false), bf16AVX512, "dot_general (avx512bf16 packed)"},
		{"widen-16-rows", bf16DotSrc(0, 16, 64, 48, "f32", false), bf16Widen, "dot_general"},
		{"avx512-gemm-KN", "func @f(%x: bf16[16,64], %w: bf16[64,40]) -> f32[16,40] {\n  %d = dot_general %x, %w {lhs_contract=[1], rhs_contract=[0]} : f32[16,40]\n  return %d\n}\n", bf16AVX512, "dot_general (avx512bf16 packed)"},
		{"avx512-converted", bf16DotSrc(0, 10, 64, 40, "f32", true), bf16AVX512, "dot_general (avx512bf16)"},
		{"widen-gemv", bf16DotSrc(0, 1, 64, 40, "f32", false), bf16Widen, "gemv"},
		{"widen-gemm", bf16DotSrc(0, 100, 64, 40, "f32", false), bf16Widen, "dot_general"},
		{"avx512-short-K", bf16DotSrc(0, 1, 31, 40, "f32", false), bf16AVX512, "gemv"},
		{"avx512-f32-lhs", "func @f(%x: f32[2,64], %w: bf16[40,64]) -> f32[2,40] {\n  %c = convert %w : f32[40,64]\n  %d = dot_general %x, %c {lhs_contract=[1], rhs_contract=[1]} : f32[2,40]\n  return %d\n}\n", bf16AVX512, "gemv"},
		{"avx512-rhs-KN", "func @f(%x: bf16[2,64], %w: bf16[64,40]) -> f32[2,40] {\n  %d = dot_general %x, %w {lhs_contract=[1], rhs_contract=[0]} : f32[2,40]\n  return %d\n}\n", bf16AVX512, "dot_general (rows)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := tir.Parse("dispatch.tir", []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			p, err := newPlan(m, m.Entry(), target{wide: true, threads: 2, bf16: c.unit})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, st := range p.steps {
				got = append(got, st.what)
			}
			if strings.Join(got, "; ") != c.want {
				t.Errorf("steps %q, want %q", strings.Join(got, "; "), c.want)
			}
		})
	}
}

// TestHostBF16: the unit from the CPU flags line.
func TestHostBF16(t *testing.T) {
	for flags, want := range map[string]bf16Unit{
		"fpu avx2 avx512f avx512bw avx512_bf16 fma": bf16AVX512,
		"fpu avx2 avx512f avx512bw fma":             bf16Widen,
		"fpu avx2 avx512_bf16":                      bf16Widen, // no 512-bit registers
		"unknown":                                   bf16Widen,
	} {
		if got := hostBF16(flags); got != want {
			t.Errorf("hostBF16(%q) = %d, want %d", flags, got, want)
		}
	}
}

// BenchmarkBF16Dot: x [M,K] times w [N,K] (a weight as Hugging Face
// stores it) with f32 operands, bf16 operands widened to f32 FMAs, and
// bf16 operands on vdpbf16ps (skipped without avx512_bf16), an f32 result
// each; best-GFLOP/s is the fastest run (the machine is shared).
//
//	go test ./backend/llvm -run '^$' -bench BF16Dot -benchtime 20x
func BenchmarkBF16Dot(b *testing.B) {
	for _, s := range [][3]int64{{1024, 1024, 1024}, {512, 1024, 3072}, {1, 1024, 3072}} {
		for _, v := range []struct {
			name string
			dt   string
			unit bf16Unit
		}{{"f32", "f32", bf16Widen}, {"bf16-widen", "bf16", bf16Widen}, {"bf16-avx512", "bf16", bf16AVX512}} {
			b.Run(fmt.Sprintf("%s/%dx%dx%d", v.name, s[0], s[1], s[2]), func(b *testing.B) {
				if v.unit == bf16AVX512 && hostBF16(cpuFeatures()) != bf16AVX512 {
					b.Skip("this CPU has no avx512_bf16")
				}
				be := testBackend(b)
				be.bf16 = v.unit
				src := strings.ReplaceAll(bf16DotSrc(0, s[0], s[1], s[2], "f32", false), "bf16", v.dt)
				_, f, x := compileSrc(b, be, src)
				args := cpu.RandomInputs(f, 1)
				x.Run(args)
				b.ResetTimer()
				best := time.Duration(math.MaxInt64)
				for range b.N {
					t0 := time.Now()
					if _, err := x.Run(args); err != nil {
						b.Fatal(err)
					}
					best = min(best, time.Since(t0))
				}
				flop := float64(2 * s[0] * s[1] * s[2])
				b.ReportMetric(flop*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
				b.ReportMetric(flop/float64(best.Nanoseconds()), "best-GFLOP/s")
			})
		}
	}
}
