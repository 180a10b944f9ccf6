package llvm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// dotCases cover the shapes the blocked kernel must handle: edges that are
// not multiples of the 6 x 16 tile (6 x 32 with AVX-512), K = 1, blocks larger than MC, KC and
// NC, transposed operands, batch dimensions anywhere, groups that do not
// collapse into one strided dimension, and f16/bf16.
// dotCase is one dot_general of a test program: its operand types,
// attributes and result type; name says what it covers.
type dotCase struct{ name, lhs, rhs, attr, out string }

var dotCases = []dotCase{
	{"odd", "f32[7,5]", "f32[5,19]", "lhs_contract=[1], rhs_contract=[0]", "f32[7,19]"},
	{"k1", "f32[13,1]", "f32[1,17]", "lhs_contract=[1], rhs_contract=[0]", "f32[13,17]"},
	{"tiny", "f32[1,1]", "f32[1,1]", "lhs_contract=[1], rhs_contract=[0]", "f32[1,1]"},
	{"vector", "f32[37]", "f32[37]", "lhs_contract=[0], rhs_contract=[0]", "f32[]"},
	{"big", "f32[130,300]", "f32[300,530]", "lhs_contract=[1], rhs_contract=[0]", "f32[130,530]"},
	// whole tiles: two column panels at a time (AVX-512), then a last one alone
	{"panelPairs", "f32[12,70]", "f32[70,64]", "lhs_contract=[1], rhs_contract=[0]", "f32[12,64]"},
	{"oddPanel", "f32[18,33]", "f32[33,48]", "lhs_contract=[1], rhs_contract=[0]", "f32[18,48]"},
	// one block of rows, the rhs packed as the first row panel reads it
	// (gemmFuse): column blocks of 208, 208 and 184 (full pairs, an odd
	// last panel, a partial one) over KC slices of 256, 256 and 88
	{"fewRows", "f32[20,600]", "f32[600,600]", "lhs_contract=[1], rhs_contract=[0]", "f32[20,600]"},
	{"lhsT", "f32[300,9]", "f32[300,33]", "lhs_contract=[0], rhs_contract=[0]", "f32[9,33]"},
	// a weight's gradient xᵀ·dy (the lhs packed a contracting index at a
	// time across its panels, gemmPackRows): two row blocks (120 + 10 rows,
	// the last panel partial), KC slices of 256, 256 and 91, and batched
	{"lhsTbig", "f32[603,130]", "f32[603,70]", "lhs_contract=[0], rhs_contract=[0]", "f32[130,70]"},
	{"lhsTbatched", "f32[3,40,14]", "f32[3,40,18]", "lhs_batch=[0], lhs_contract=[1], rhs_batch=[0], rhs_contract=[1]", "f32[3,14,18]"},
	{"rhsT", "f32[9,20]", "f32[35,20]", "lhs_contract=[1], rhs_contract=[1]", "f32[9,35]"},
	// a weight stored [N, K] (packed by 8 x 8 transposes): several KC
	// slices, the last with a tail of 3, and columns past one NC block
	{"rhsTbig", "f32[13,603]", "f32[530,603]", "lhs_contract=[1], rhs_contract=[1]", "f32[13,530]"},
	{"batched", "f32[3,7,20]", "f32[3,20,18]", "lhs_batch=[0], lhs_contract=[2], rhs_batch=[0], rhs_contract=[1]", "f32[3,7,18]"},
	{"batchInner", "f32[7,3,20]", "f32[20,3,18]", "lhs_batch=[1], lhs_contract=[2], rhs_batch=[1], rhs_contract=[0]", "f32[3,7,18]"},
	{"contractSplit", "f32[4,5,3]", "f32[3,4,8]", "lhs_contract=[0,2], rhs_contract=[1,0]", "f32[5,8]"},
	{"freeSplit", "f32[5,16]", "f32[3,16,20]", "lhs_contract=[1], rhs_contract=[1]", "f32[5,3,20]"},
	{"f16", "f16[7,40]", "f16[40,21]", "lhs_contract=[1], rhs_contract=[0]", "f16[7,21]"},
	{"bf16", "bf16[9,300]", "bf16[300,20]", "lhs_contract=[1], rhs_contract=[0]", "bf16[9,20]"},
	{"bf16to32", "bf16[9,300]", "bf16[300,20]", "lhs_contract=[1], rhs_contract=[0]", "f32[9,20]"},
}

// TestDotShapes runs every case of dotCases in one program (one clang
// run) against the reference executor, within the oracle's tolerance,
// with AVX-512's tiles and with AVX2's whatever the host (without
// AVX-512 clang splits the wide code into AVX2 halves: slower, same sums).
func TestDotShapes(t *testing.T) {
	forTiles(t, func(t *testing.T, b *Backend) {
		m := dotsModule(t, dotCases)
		x := differential(t, b, m, m.Funcs[0], 3)
		if gen, fb := x.Coverage(); fb != "" || gen != fmt.Sprintf("dot_general=%d", len(dotCases)) {
			t.Errorf("coverage: generated %q, fallback %q", gen, fb)
		}
		if wide := strings.Contains(x.plan.gen.text(), "fmuladd.v16f32"); wide != b.wide {
			t.Errorf("16-float tiles generated: %v, with gen.wide %v", wide, b.wide)
		}
	})
}

// forTiles runs test with a backend generating AVX-512's tiles (gen.wide)
// and with one generating AVX2's.
func forTiles(t *testing.T, test func(t *testing.T, b *Backend)) {
	for _, wide := range []bool{true, false} {
		b := testBackend(t)
		b.wide = wide
		t.Run(fmt.Sprintf("wide=%v", wide), func(t *testing.T) { test(t, b) })
	}
}

// dotsModule is one function computing a dot_general per case from its
// own two parameters.
func dotsModule(t *testing.T, cases []dotCase) *ir.Module {
	t.Helper()
	var params, body, rets, types []string
	for i, c := range cases {
		params = append(params, fmt.Sprintf("%%l%d: %s, %%r%d: %s", i, c.lhs, i, c.rhs))
		body = append(body, fmt.Sprintf("  %%d%d = dot_general %%l%d, %%r%d {%s} : %s", i, i, i, c.attr, c.out))
		rets = append(rets, fmt.Sprintf("%%d%d", i))
		types = append(types, c.out)
	}
	src := fmt.Sprintf("func @dots(%s) -> (%s) {\n%s\n  return %s\n}\n",
		strings.Join(params, ", "), strings.Join(types, ", "), strings.Join(body, "\n"), strings.Join(rets, ", "))
	m, err := tir.Parse("dots.tir", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return m
}

// TestDotEpilogue: the elementwise expression after a matmul is computed
// in the kernel's output tile (one step, named by the fused ops), through
// the cpu pipeline's fusion regions, and agrees with the reference.
func TestDotEpilogue(t *testing.T) {
	forTiles(t, testDotEpilogue)
}

func testDotEpilogue(t *testing.T, b *Backend) {
	cases := []struct{ name, body, plan string }{
		{"bias+relu", "  %h = matmul %x, %w : f32[70,40]\n  %hb = add %h, %c\n  %a = relu %hb\n  return %a",
			"0: dot_general+add+relu [4 0 1 2]\n"},
		{"gelu", "  %h = matmul %x, %w : f32[70,40]\n  %a = gelu %h\n  return %a",
			"0: dot_general+gelu [4 0 1]\n"},
		{"residual", "  %h = matmul %x, %w : f32[70,40]\n  %s = silu %h\n  %a = add %s, %r\n  return %a",
			"0: dot_general+silu+add [4 0 1 3]\n"},
		// An attention mask: a tensor constant defined after the dot is
		// in memory before the dot runs, so the scale and the select are
		// the dot's epilogue.
		{"mask", "  %h = matmul %x, %w : f32[70,40]\n  %k = constant 0.125 : f32[]\n  %kb = broadcast %k {dims=[]} : f32[70,40]\n" +
			"  %s = mul %h, %kb\n  %m = constant [false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false] : i1[40]\n  %mb = broadcast %m {dims=[1]} : i1[70,40]\n" +
			"  %n = constant -inf : f32[]\n  %nb = broadcast %n {dims=[]} : f32[70,40]\n  %a = select %mb, %s, %nb : f32[70,40]\n  return %a",
			"0: dot_general+mul+select [5 0 1 4]\n"},
		// The dot's result is read twice: it is materialised, the
		// expression runs as its own loop.
		{"reused", "  %h = matmul %x, %w : f32[70,40]\n  %s = sigmoid %h\n  %a = mul %s, %h\n  return %a",
			"0: dot_general [4 0 1]\n1: loop mul [5 4]\n"},
	}
	check := func(name, src, plan string) {
		t.Run(name, func(t *testing.T) {
			exe := compileText(t, name, []byte(src))
			x := differential(t, b, exe.Module, exe.Entry, 5)
			if got := x.plan.String(); got != plan {
				t.Errorf("plan:\n%s\nwant:\n%s", got, plan)
			}
		})
	}
	for _, c := range cases {
		check(c.name, "func @f(%x: f32[70,300], %w: f32[300,40], %c: f32[40], %r: f32[70,40]) -> f32[70,40] {\n"+c.body+"\n}\n", c.plan)
	}
	// Operands read at the result's index, which the blocked product
	// prefetches for a tile (epilogueInputs): one read twice (one buffer
	// of the step), one f16 widened by a convert, beside a broadcast one
	// (not prefetched); edges of the 6 x 32 tile in both directions.
	check("inputs", "func @f(%x: f32[70,300], %w: f32[300,40], %c: f32[40], %r: f32[70,40], %h: f16[70,40]) -> f32[70,40] {\n"+
		"  %d = matmul %x, %w : f32[70,40]\n  %cb = broadcast %c {dims=[1]} : f32[70,40]\n  %s = add %d, %cb\n"+
		"  %a = add %s, %r\n  %m = mul %a, %r\n  %hw = convert %h : f32[70,40]\n  %e = mul %m, %hw\n  return %e\n}\n",
		"0: dot_general+add+add+mul+mul [5 0 1 3 4 2]\n")
	// A result of batch dimensions only: the epilogue's index is the
	// batch alone, the same value at each site of the kernel that stores
	// a tile, where the values of one site were reused at the next
	// (FuzzDifferential, 2026-12-05: 5 of 6 elements wrong).
	check("batchOnly", "func @f(%p: f32[6,2], %q: f32[6,2]) -> f32[6] {\n"+
		"  %d = dot_general %p, %q {lhs_batch=[0], lhs_contract=[1], rhs_batch=[0], rhs_contract=[1]} : f32[6]\n"+
		"  %a = tanh %d : f32[6]\n  return %a\n}\n",
		"0: dot_general+tanh [2 0 1]\n")
}

// TestGemmBlocks: the columns are cut into blocks of equal width, a
// multiple of the tile's 16 (the cores share a product by column blocks).
func TestGemmBlocks(t *testing.T) {
	for _, c := range []struct{ m, k, n, mc, kc, nc int64 }{
		{1024, 256, 768, 120, 256, 384}, // not 512 + 256
		{1024, 1024, 1024, 120, 256, 512},
		{64, 1024, 3072, 66, 256, 512},
		{130, 300, 530, 120, 256, 272}, // 265 rounded up to the tile
		{7, 5, 19, 12, 5, 32},
		{1, 0, 1, 6, 1, 16},
	} {
		mc, kc, nc := gemmBlocks(c.m, c.k, c.n)
		if mc != c.mc || kc != c.kc || nc != c.nc {
			t.Errorf("gemmBlocks(%d, %d, %d) = %d, %d, %d; want %d, %d, %d", c.m, c.k, c.n, mc, kc, nc, c.mc, c.kc, c.nc)
		}
	}
}

// TestDotReadsReshape: a dot_general operand that is a reshape of a value
// in memory (a softmax's result, an expression materialised for another
// user) is read in place, with no copy step; a reshape of a parameter
// (which an in-place update could write first) or of an expression
// nothing else materialises is copied. All agree with the reference.
func TestDotReadsReshape(t *testing.T) {
	b := testBackend(t)
	for _, c := range []struct{ name, src, plan string }{
		{"softmax", "func @f(%s: f32[1,4,8,8], %v: f32[4,8,5]) -> f32[4,8,5] {\n" +
			"  %p = softmax %s {axis=3} : f32[1,4,8,8]\n  %q = reshape %p : f32[4,8,8]\n" +
			"  %c = dot_general %q, %v {lhs_batch=[0], lhs_contract=[2], rhs_batch=[0], rhs_contract=[1]} : f32[4,8,5]\n  return %c\n}\n",
			"0: softmax [2 0]\n1: dot_general [3 2 1]\n"},
		{"rhs", "func @f(%s: f32[4,8,5,2], %v: f32[4,8,3]) -> f32[4,3,10] {\n" +
			"  %p = exp %s : f32[4,8,5,2]\n  %m = reduce_sum %p {axes=[3]} : f32[4,8,5]\n  %q = reshape %m : f32[4,8,5]\n" +
			"  %c = dot_general %v, %q {lhs_batch=[0], lhs_contract=[1], rhs_batch=[0], rhs_contract=[1]} : f32[4,3,5]\n" +
			"  %r = reshape %p : f32[4,8,10]\n  %d = dot_general %v, %r {lhs_batch=[0], lhs_contract=[1], rhs_batch=[0], rhs_contract=[1]} : f32[4,3,10]\n" +
			"  %e = reduce_sum %c {axes=[2]} : f32[4,3]\n  %g = broadcast %e {dims=[0,1]} : f32[4,3,10]\n  %o = add %d, %g : f32[4,3,10]\n  return %o\n}\n",
			""},
		{"expr", "func @f(%s: f32[1,4,8,8], %v: f32[4,8,5]) -> f32[4,8,5] {\n" +
			"  %p = exp %s : f32[1,4,8,8]\n  %q = reshape %p : f32[4,8,8]\n" +
			"  %c = dot_general %q, %v {lhs_batch=[0], lhs_contract=[2], rhs_batch=[0], rhs_contract=[1]} : f32[4,8,5]\n  return %c\n}\n",
			"0: loop reshape [2 0]\n1: dot_general [3 2 1]\n"},
		{"param", "func @f(%s: f32[1,4,8,8], %v: f32[4,8,5]) -> f32[4,8,5] {\n" +
			"  %q = reshape %s : f32[4,8,8]\n" +
			"  %c = dot_general %q, %v {lhs_batch=[0], lhs_contract=[2], rhs_batch=[0], rhs_contract=[1]} : f32[4,8,5]\n  return %c\n}\n",
			"0: loop reshape [2 0]\n1: dot_general [3 2 1]\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := tir.Parse(c.name+".tir", []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			x := differential(t, b, m, m.Entry(), 7)
			got := x.plan.String()
			if c.plan != "" && got != c.plan {
				t.Errorf("plan:\n%s\nwant:\n%s", got, c.plan)
			}
			if c.name == "rhs" && strings.Count(got, "reshape") != 0 {
				t.Errorf("plan (want no copy: both reshapes are of values in memory):\n%s", got)
			}
		})
	}
}

// TestDotSwap: a product of 9-64 rows (or more, with AVX-512) by a rhs
// stored [N, K] (N a multiple of 16) runs as ragged_dot's swapped
// product, with its epilogue; edges of the bounds take the other kernels.
// All agree with the reference, with AVX-512's tiles (swapKinds) and
// with AVX2's, whatever the host (TestRaggedDot).
func TestDotSwap(t *testing.T) {
	forTiles(t, func(t *testing.T, b *Backend) {
		b.threads = 2
		testDotSwap(t, b)
	})
}

func testDotSwap(t *testing.T, b *Backend) {
	for _, c := range []struct {
		m, k, n  int64
		epi      bool
		what     string // the step, with AVX2's tiles
		wideWhat string // with AVX-512's, when other
	}{
		{9, 40, 16, false, "dot_general (swapped)", ""},    // the fewest rows: gemv takes 8
		{64, 1000, 48, false, "dot_general (swapped)", ""}, // the most rows (AVX2); three tiles for two cores
		{33, 77, 32, false, "dot_general (swapped)", ""},   // K odd; a last panel of one row
		{40, 64, 32, true, "dot_general (swapped)+add", ""},
		// past 64 rows, AVX-512 only and with 4 tiles a thread (two threads)
		{300, 70, 128, true, "dot_general+add", "dot_general (swapped)+add"}, // five chunks of rows, the last partial
		{65, 40, 112, false, "dot_general", ""},                              // seven tiles: the blocked product shares rows too
		{20, 40, 24, false, "dot_general", ""},                               // N not a multiple of 16
		{8, 40, 16, false, "gemv", ""},
	} {
		if b.wide && c.wideWhat != "" {
			c.what = c.wideWhat
		}
		t.Run(fmt.Sprintf("%dx%dx%d", c.m, c.k, c.n), func(t *testing.T) {
			body := fmt.Sprintf("  %%d = dot_general %%x, %%w {lhs_contract=[1], rhs_contract=[1]} : f32[%d,%d]\n  return %%d", c.m, c.n)
			if c.epi {
				body = fmt.Sprintf("  %%d = dot_general %%x, %%w {lhs_contract=[1], rhs_contract=[1]} : f32[%d,%d]\n  %%a = add %%d, %%r\n  return %%a", c.m, c.n)
			}
			src := fmt.Sprintf("func @f(%%x: f32[%d,%d], %%w: f32[%d,%d], %%r: f32[%d,%d]) -> f32[%d,%d] {\n%s\n}\n",
				c.m, c.k, c.n, c.k, c.m, c.n, c.m, c.n, body)
			exe := compileText(t, "swap", []byte(src))
			x := differential(t, b, exe.Module, exe.Entry, 7)
			if got := x.plan.steps[0].what; len(x.plan.steps) != 1 || got != c.what {
				t.Errorf("plan:\n%s\nwant one step: %s", x.plan, c.what)
			}
			// Both the swapped and the blocked product have 16-float tiles; gemv has none.
			if wide := strings.Contains(x.plan.gen.text(), "fmuladd.v16f32"); wide != (b.wide && c.what != "gemv") {
				t.Errorf("16-float tiles generated: %v, with gen.wide %v", wide, b.wide)
			}
		})
	}
}

// TestDotSwapNarrowRows: f16/bf16 weights stored [N, K] take the swapped
// product up to dotSwapNarrowRows rows and the blocked one past them, with
// AVX-512's tiles too (f32 weights keep the swapped product there:
// TestDotSwap), where the blocked product's transposing packing widens
// them; the edges of its tiles (rows not a multiple of 6, columns not of
// 32, K odd) and a fused epilogue, against the reference. The swapped
// product's widened tiles (widenTile) with K short of a vector or not a
// multiple of 16.
func TestDotSwapNarrowRows(t *testing.T) {
	forTiles(t, func(t *testing.T, b *Backend) {
		b.threads = 2
		b.bf16 = bf16Widen // the widening kernels on every host
		for _, c := range []struct {
			m, k, n int64
			wdt     string
			epi     bool
			what    string // with AVX-512's tiles; AVX2's take the blocked product past 64 rows
		}{
			{256, 40, 128, "f16", false, "dot_general (swapped)"}, // the most rows the swapped product takes
			// a batched decode's rows: each tile's weights widened 16 at a time (widenTile), a tail of 13
			{64, 77, 144, "bf16", true, "dot_general (swapped)+add"},
			{40, 9, 128, "f16", false, "dot_general (swapped)"}, // K within the tail alone
			{257, 40, 128, "f16", false, "dot_general"},
			{262, 77, 144, "f16", true, "dot_general+add"}, // 43 panels and 4 rows; 4 pairs and a last panel; K odd
			{262, 77, 144, "bf16", false, "dot_general"},
			{517, 300, 128, "bf16", true, "dot_general+add"}, // row blocks of 120 and a partial one; KC slices 256 + 44
		} {
			t.Run(fmt.Sprintf("%s/%dx%dx%d", c.wdt, c.m, c.k, c.n), func(t *testing.T) {
				body := fmt.Sprintf("  %%w32 = convert %%w : f32[%d,%d]\n  %%d = dot_general %%x, %%w32 {lhs_contract=[1], rhs_contract=[1]} : f32[%d,%d]\n", c.n, c.k, c.m, c.n)
				ret := "%d"
				if c.epi {
					body += fmt.Sprintf("  %%a = add %%d, %%r : f32[%d,%d]\n", c.m, c.n)
					ret = "%a"
				}
				src := fmt.Sprintf("func @f(%%x: f32[%d,%d], %%w: %s[%d,%d], %%r: f32[%d,%d]) -> f32[%d,%d] {\n%s  return %s\n}\n",
					c.m, c.k, c.wdt, c.n, c.k, c.m, c.n, c.m, c.n, body, ret)
				exe := compileText(t, "swapnarrow", []byte(src))
				x := differential(t, b, exe.Module, exe.Entry, 5)
				if !b.wide && c.m > dotSwapMaxRows {
					c.what = strings.Replace(c.what, " (swapped)", "", 1)
				}
				if got := x.plan.steps[0].what; len(x.plan.steps) != 1 || got != c.what {
					t.Errorf("plan:\n%s\nwant one step: %s", x.plan, c.what)
				}
			})
		}
	})
}
