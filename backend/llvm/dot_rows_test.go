package llvm

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// dotRowsCases are products that stream the rhs by rows (dot_rows.go): a
// decode step's attention weights times the cached values, and the edges
// of the kernel: N not a multiple of the vectors (a last block of whole
// vectors and single columns, or of single columns only), blocks of
// columns past the first, one and eight lhs rows, a contraction of one,
// a transposed lhs, strided and split groups, f16/bf16 operands.
var dotRowsCases = []dotCase{
	{"attnValues", "f32[8,2,512]", "f32[8,512,128]", "lhs_batch=[0], lhs_contract=[2], rhs_batch=[0], rhs_contract=[1]", "f32[8,2,128]"},
	{"ragged", "f32[3,40]", "f32[40,37]", "lhs_contract=[1], rhs_contract=[0]", "f32[3,37]"},
	{"columnsOnly", "f32[2,9]", "f32[9,8]", "lhs_contract=[1], rhs_contract=[0]", "f32[2,8]"},
	{"manyBlocks", "f32[1,30]", "f32[30,300]", "lhs_contract=[1], rhs_contract=[0]", "f32[1,300]"},
	{"eightRows", "f32[8,33]", "f32[33,70]", "lhs_contract=[1], rhs_contract=[0]", "f32[8,70]"},
	{"k1", "f32[4,1]", "f32[1,20]", "lhs_contract=[1], rhs_contract=[0]", "f32[4,20]"},
	{"lhsT", "f32[50,3]", "f32[50,24]", "lhs_contract=[0], rhs_contract=[0]", "f32[3,24]"},
	{"batchInner", "f32[5,3,20]", "f32[20,3,18]", "lhs_batch=[1], lhs_contract=[2], rhs_batch=[1], rhs_contract=[0]", "f32[3,5,18]"},
	{"contractSplit", "f32[4,2,3]", "f32[3,4,16]", "lhs_contract=[0,2], rhs_contract=[1,0]", "f32[2,16]"},
	{"bf16", "bf16[2,64]", "bf16[64,40]", "lhs_contract=[1], rhs_contract=[0]", "f32[2,40]"},
	{"f16", "f16[2,64]", "f16[64,24]", "lhs_contract=[1], rhs_contract=[0]", "f32[2,24]"},
}

// TestDotRows runs dotRowsCases in one program against the reference
// executor, with AVX-512's vectors and with AVX2's, and checks that each
// took the streamed-rows kernel.
func TestDotRows(t *testing.T) {
	forTiles(t, func(t *testing.T, b *Backend) {
		m := dotsModule(t, dotRowsCases)
		x := differential(t, b, m, m.Funcs[0], 5)
		var whats []string
		for _, st := range x.plan.steps {
			whats = append(whats, st.what)
		}
		if n := strings.Count(strings.Join(whats, ";"), "dot_general (rows)"); n != len(dotRowsCases) {
			t.Errorf("%d of %d products streamed by rows; steps: %q", n, len(dotRowsCases), whats)
		}
	})
}

// TestDotRowsEpilogue: an add after the product is fused into the kernel
// and agrees with the reference, on a ragged N.
func TestDotRowsEpilogue(t *testing.T) {
	b := testBackend(t)
	src := "func @f(%x: f32[3,40], %w: f32[40,37], %r: f32[3,37]) -> f32[3,37] {\n" +
		"  %d = dot_general %x, %w {lhs_contract=[1], rhs_contract=[0]} : f32[3,37]\n  %a = add %d, %r\n  return %a\n}\n"
	exe := compileText(t, "rows_epi", []byte(src))
	x := differential(t, b, exe.Module, exe.Entry, 9)
	if got := x.plan.String(); !strings.Contains(got, "dot_general (rows)+add") || len(x.plan.steps) != 1 {
		t.Errorf("plan:\n%s\nwant one step: dot_general (rows)+add", got)
	}
}

// TestDotRowsShape: the registers bound the vectors per block.
func TestDotRowsShape(t *testing.T) {
	for _, c := range []struct {
		m, n        int64
		wide, bf16  bool
		lanes, vecs int64
	}{
		{2, 128, true, false, 16, 8}, // the decode step's attention values: one block
		{8, 128, true, false, 16, 3},
		{2, 128, false, false, 8, 4},
		{8, 128, false, false, 8, 1},
		{2, 128, true, true, 16, 8}, // a narrow rhs (a bf16 cache's values): 16 lanes widened
		{2, 128, false, true, 8, 4},
		{1, 20, true, false, 16, 2},
	} {
		d := dotShape{M: c.m, N: c.n, rhs: dotOperand{dt: ir.F32}}
		if c.bf16 {
			d.rhs.dt = ir.BF16
		}
		lanes, vecs := dotRowsShape(d, c.wide)
		if lanes != c.lanes || vecs != c.vecs {
			t.Errorf("M=%d N=%d wide=%v bf16=%v: %d lanes x %d, want %d x %d", c.m, c.n, c.wide, c.bf16, lanes, vecs, c.lanes, c.vecs)
		}
	}
}

// BenchmarkDotRows times a decode step's attention weights times values
// (Qwen3-0.6B: 8 groups of 2 query heads over 512 cache slots, head_dim
// 128, and neighbouring shapes), and a few rows times a weight stored [K,
// N], streamed by rows and by the blocked product it replaced, compiled
// side by side and called in turn, one call each per round, so that a
// neighbour's load falls on both alike; each reports its median call.
//
//	go test ./backend/llvm -run '^$' -bench DotRows -benchtime 2000x
func BenchmarkDotRows(b *testing.B) {
	for _, s := range [][4]int64{{8, 2, 512, 128}, {8, 1, 512, 128}, {8, 4, 2048, 64}, {1, 1, 1024, 4096}, {1, 8, 1024, 3072}} {
		b.Run(fmt.Sprintf("%dx%dx%dx%d", s[0], s[1], s[2], s[3]), func(b *testing.B) {
			dotRowsBench(b, s[0], s[1], s[2], s[3])
		})
	}
}

func dotRowsBench(b *testing.B, batch, m, k, n int64) {
	src := pvSource("f32", batch, m, k, n)
	restore := dotRowsFits
	dotRowsRace(b, src, []string{"rows", "blocked"}, func(name string) {
		dotRowsFits = restore
		if name == "blocked" {
			dotRowsFits = func(dotShape) bool { return false }
		}
	}, func(name, plan string) bool { return strings.Contains(plan, "(rows)") == (name == "rows") })
	dotRowsFits = restore
}

// BenchmarkDotRowsNarrow times a decode step's attention probabilities
// times the values of a bf16 KV cache (both operands converted from bf16:
// batch 64 over 128 slots, and batch 1 over 512), the narrow rhs loaded
// 16 lanes at a time and 8, compiled side by side and called in turn.
//
//	go test ./backend/llvm -run '^$' -bench DotRowsNarrow -benchtime 2000x
func BenchmarkDotRowsNarrow(b *testing.B) {
	for _, s := range [][4]int64{{512, 2, 128, 128}, {8, 2, 512, 128}} {
		b.Run(fmt.Sprintf("%dx%dx%dx%d", s[0], s[1], s[2], s[3]), func(b *testing.B) {
			src := pvSource("bf16", s[0], s[1], s[2], s[3])
			dotRowsRace(b, src, []string{"lanes16", "lanes8"}, func(name string) {
				dotRowsNarrow16 = name == "lanes16"
			}, func(_, plan string) bool { return strings.Contains(plan, "(rows)") })
			dotRowsNarrow16 = true
		})
	}
}

// pvSource is attention's probabilities [batch, m, k] times values
// [batch, k, n], both of dtype dt (converted to f32 when narrow).
func pvSource(dt string, batch, m, k, n int64) string {
	p, v, conv := "%p", "%v", ""
	if dt != "f32" {
		p, v = "%pf", "%vf"
		conv = fmt.Sprintf("  %%pf = convert %%p : f32[%[1]d,%[2]d,%[3]d]\n  %%vf = convert %%v : f32[%[1]d,%[3]d,%[4]d]\n", batch, m, k, n)
	}
	return fmt.Sprintf("func @pv(%%p: %[5]s[%[1]d,%[2]d,%[3]d], %%v: %[5]s[%[1]d,%[3]d,%[4]d]) -> f32[%[1]d,%[2]d,%[4]d] {\n%[6]s"+
		"  %%o = dot_general %[7]s, %[8]s {lhs_batch=[0], lhs_contract=[2], rhs_batch=[0], rhs_contract=[1]} : f32[%[1]d,%[2]d,%[4]d]\n  return %%o\n}\n",
		batch, m, k, n, dt, conv, p, v)
}

// dotRowsRace compiles src once per name, after set(name) sets the
// variant up, checks each plan with ok, and times the executables call by
// call in turn; each reports its median call.
func dotRowsRace(b *testing.B, src string, names []string, set func(string), ok func(name, plan string) bool) {
	be := testBackend(b)
	be.threads = runtime.NumCPU()
	var xs []*Executable
	var args []*backend.Buffer
	for _, name := range names {
		set(name)
		_, fn, x := compileSrc(b, be, src)
		if !ok(name, x.plan.String()) {
			b.Fatalf("%s: plan %s", name, x.plan)
		}
		xs = append(xs, x)
		args = cpu.RandomInputs(fn, 1)
	}
	times := make([][]time.Duration, len(xs))
	b.ResetTimer()
	for range b.N {
		for v, x := range xs {
			t0 := time.Now()
			if _, err := x.Run(args); err != nil {
				b.Fatal(err)
			}
			times[v] = append(times[v], time.Since(t0))
		}
	}
	b.StopTimer()
	for v, t := range times {
		slices.Sort(t)
		b.ReportMetric(float64(t[len(t)/2].Nanoseconds())/1e3, names[v]+"-us")
	}
}
