package llvm

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
)

// gemvCases are products with at most gemvRows lhs rows (1 to 8) and both operands
// contiguous along the contraction: decode's x · Wᵀ with the weight as
// Hugging Face stores it ([N, K]), attention's q · kᵀ with batch
// dimensions, K not a multiple of 8 (the scalar tail) or below it, and N
// not a multiple of the 4 (M <= 4) or 2 (M 5 to 8) rows in flight or of the 64-row block
// (or, at one lhs row, of the 256-row block read as 4 streams: N = 4100;
// N = 600 takes blocks of 64, whole ones as 4 streams of 16 rows).
var gemvCases = []dotCase{
	{"decode", "f32[1,1024]", "f32[67,1024]", "lhs_contract=[1], rhs_contract=[1]", "f32[1,67]"},
	{"decodeBlocks", "f32[1,44]", "f32[600,44]", "lhs_contract=[1], rhs_contract=[1]", "f32[1,600]"},
	{"decodeMany", "f32[1,20]", "f32[4100,20]", "lhs_contract=[1], rhs_contract=[1]", "f32[1,4100]"},
	{"m4kTail", "f32[4,37]", "f32[130,37]", "lhs_contract=[1], rhs_contract=[1]", "f32[4,130]"},
	{"k8", "f32[3,8]", "f32[5,8]", "lhs_contract=[1], rhs_contract=[1]", "f32[3,5]"},
	{"lhs3d", "f32[2,1,19]", "f32[3,19]", "lhs_contract=[2], rhs_contract=[1]", "f32[2,1,3]"},
	{"attention", "f32[2,3,2,16]", "f32[2,3,9,16]", "lhs_batch=[0,1], lhs_contract=[3], rhs_batch=[0,1], rhs_contract=[3]", "f32[2,3,2,9]"},
	{"m5", "f32[5,33]", "f32[67,33]", "lhs_contract=[1], rhs_contract=[1]", "f32[5,67]"},
	{"m8", "f32[8,1024]", "f32[131,1024]", "lhs_contract=[1], rhs_contract=[1]", "f32[8,131]"},
	{"m7batch", "f32[2,7,21]", "f32[2,5,21]", "lhs_batch=[0], lhs_contract=[2], rhs_batch=[0], rhs_contract=[2]", "f32[2,7,5]"},
	{"m6", "f32[6,16]", "f32[3,16]", "lhs_contract=[1], rhs_contract=[1]", "f32[6,3]"},
	{"vectors", "f32[64]", "f32[64]", "lhs_contract=[0], rhs_contract=[0]", "f32[]"},
}

// TestGemv runs the cases in one program against the reference executor
// and checks that each ran as a streamed product.
func TestGemv(t *testing.T) {
	b := testBackend(t)
	m := dotsModule(t, gemvCases)
	x := differential(t, b, m, m.Funcs[0], 4)
	if n := strings.Count(x.plan.String(), ": gemv "); n != len(gemvCases) {
		t.Errorf("%d of %d products streamed; plan:\n%s", n, len(gemvCases), x.plan)
	}
	// The ranges: blocks of 256 rows where they pair up between two
	// threads or are many, else of 64.
	for i, want := range map[int]int64{1: 10, 2: 17} {
		if got := x.plan.steps[i].rows; got != want {
			t.Errorf("%s: %d ranges, want %d", gemvCases[i].name, got, want)
		}
	}
}

// TestGemvEpilogue: a decode layer's x · Wᵀ + bias, then silu, is one
// streamed kernel with its epilogue.
func TestGemvEpilogue(t *testing.T) {
	b := testBackend(t)
	src := `func @f(%x: f32[1,300], %w: f32[70,300], %c: f32[1,70]) -> f32[1,70] {
  %h = dot_general %x, %w {lhs_contract=[1], rhs_contract=[1]} : f32[1,70]
  %hb = add %h, %c
  %a = silu %hb
  return %a
}
`
	exe := compileText(t, "gemv-epilogue", []byte(src))
	x := differential(t, b, exe.Module, exe.Entry, 6)
	if got, want := x.plan.String(), "0: gemv+add+silu [3 0 1 2]\n"; got != want {
		t.Errorf("plan:\n%s\nwant:\n%s", got, want)
	}
}

// TestGemvUnrollHint: the streamed product's contraction loop asks clang to
// unroll it (4 steps of 8 elements a row, here 2 steps of the 2
// accumulators of one lhs row's way, gemvFor) and every other loop to interleave 4 vectors (kernels
// build with clang's own unrolling off, clangFlags), through one loop
// identifier per hint that the loops share, so two layers of the same
// shape still generate one kernel. Only the paths some block takes are
// generated: with N = 64 (one whole block of 64 rows) and K = 64 (a
// multiple of the 16 elements a step reads), one.
func TestGemvUnrollHint(t *testing.T) {
	b := testBackend(t)
	for _, c := range []struct {
		n, k        int64
		unrolled    int // contraction loops
		interleaved int
	}{
		// Three contraction loops (a whole block's 4 streams, the groups
		// of 4 neighbouring rows of the last block of 2 rows, the rows
		// left), unrolled; the range's, the streams', the groups', the
		// rows left's, the three single-vector rests of the contraction
		// and its scalar tails (one per rhs row: 4 + 4 + 1), interleaved.
		{66, 60, 3, 16},
		// One (the streams), unrolled; the range's and the streams' loops
		// interleaved.
		{64, 64, 1, 2},
	} {
		t.Run(fmt.Sprintf("%dx%d", c.n, c.k), func(t *testing.T) {
			src := fmt.Sprintf(`func @f(%%x: f32[1,%[2]d], %%w1: f32[%[1]d,%[2]d], %%w2: f32[%[1]d,%[2]d]) -> (f32[1,%[1]d], f32[1,%[1]d]) {
  %%h = dot_general %%x, %%w1 {lhs_contract=[1], rhs_contract=[1]} : f32[1,%[1]d]
  %%y = dot_general %%x, %%w2 {lhs_contract=[1], rhs_contract=[1]} : f32[1,%[1]d]
  return %%h, %%y
}
`, c.n, c.k)
			exe := compileText(t, "gemv-unroll", []byte(src))
			x := differential(t, b, exe.Module, exe.Entry, 5)
			if got, want := x.plan.String(), "0: gemv [3 0 1]\n1: gemv [4 0 2]\n"; got != want {
				t.Errorf("plan:\n%s\nwant:\n%s", got, want)
			}
			text := x.plan.gen.text()
			if n := strings.Count(text, "\ndefine "); n != 1 {
				t.Errorf("%d functions defined, want the two steps' one", n)
			}
			for id, want := range map[string]int{"!0": c.unrolled, "!2": c.interleaved} {
				if n := strings.Count(text, ", !llvm.loop "+id+"\n"); n != want {
					t.Errorf("%d branches carry !llvm.loop %s, want %d:\n%s", n, id, want, text)
				}
			}
			want := "!0 = distinct !{!0, !1}\n!1 = !{!\"llvm.loop.unroll.count\", i32 2}\n" +
				"!2 = distinct !{!2, !3}\n!3 = !{!\"llvm.loop.interleave.count\", i32 4}\n" +
				"!4 = distinct !{!4, !\"tpucc kernel buffers\"}\n!5 = distinct !{!5, !4, !\"output 0\"}\n!6 = !{!5}\n"
			if !strings.HasSuffix(text, want) {
				t.Errorf("the module ends in\n%s\nwant\n%s", text[max(0, len(text)-200):], want)
			}
		})
	}
}

// TestGemvParams runs the streamed cases, and products with bf16 weights
// read at their width (with f32 and with bf16 activations), with each way
// of reading the rhs the kernel has: 1, 2 and 8 rows in flight, 1, 2 and 4
// accumulators per result (K = 59 leaves one step of 32, then 3 single
// vectors, then 3 scalars; in 16-lane vectors no step of 64, 3 single
// vectors and 11 scalars), a prefetch distance, rows in flight spread over
// blocks of 16, 32 and 64 rows (N = 130: whole blocks, then a shorter
// one), and 8- and 16-lane vectors, against the reference executor.
func TestGemvParams(t *testing.T) {
	b := testBackend(t)
	b.bf16 = bf16Widen // the gemv kernel's widening loads, not vdpbf16ps
	cases := append([]dotCase{
		{"kRest", "f32[2,59]", "f32[13,59]", "lhs_contract=[1], rhs_contract=[1]", "f32[2,13]"},
		{"k24", "f32[1,24]", "f32[9,24]", "lhs_contract=[1], rhs_contract=[1]", "f32[1,9]"},
	}, gemvCases...)
	narrow := `func @f(%x: f32[1,59], %w: bf16[75,59], %y: f32[3,130], %v: bf16[20,130], %xb: bf16[1,83], %u: bf16[37,83]) -> (f32[1,75], f32[3,20], f32[1,37]) {
  %w32 = convert %w : f32[75,59]
  %d = dot_general %x, %w32 {lhs_contract=[1], rhs_contract=[1]} : f32[1,75]
  %v32 = convert %v : f32[20,130]
  %e = dot_general %y, %v32 {lhs_contract=[1], rhs_contract=[1]} : f32[3,20]
  %x32 = convert %xb : f32[1,83]
  %u32 = convert %u : f32[37,83]
  %g = dot_general %x32, %u32 {lhs_contract=[1], rhs_contract=[1]} : f32[1,37]
  return %d, %e, %g
}
`
	defer func(f func(m, k int64, narrow bool) gemvParams) { gemvFor = f }(gemvFor)
	for _, p := range []gemvParams{{cols: 1, accs: 1}, {cols: 1, accs: 4}, {cols: 1, accs: 4, ahead: 512}, {cols: 2, accs: 2, ahead: 64},
		{cols: 8, accs: 1}, {cols: 4, accs: 2, ahead: 4096}, {cols: 4, accs: 1, block: 16, spread: true},
		{cols: 2, accs: 4, block: 32, spread: true}, {cols: 8, accs: 1, ahead: 32, spread: true},
		{cols: 1, accs: 4, lanes: 16}, {cols: 2, accs: 2, lanes: 16, ahead: 64}, {cols: 8, accs: 1, lanes: 16},
		{cols: 4, accs: 1, lanes: 16, block: 16, spread: true}, {cols: 4, accs: 2, lanes: 16, block: 64, spread: true}} {
		t.Run(fmt.Sprintf("cols%d-accs%d-ahead%d-block%d-spread%v-lanes%d", p.cols, p.accs, p.ahead, p.block, p.spread, p.width()), func(t *testing.T) {
			gemvFor = func(m, k int64, narrow bool) gemvParams { return p }
			m := dotsModule(t, cases)
			x := differential(t, b, m, m.Funcs[0], 4)
			if n := strings.Count(x.plan.String(), ": gemv "); n != len(cases) {
				t.Errorf("%d of %d products streamed; plan:\n%s", n, len(cases), x.plan)
			}
			exe := compileText(t, "gemv-narrow", []byte(narrow))
			x = differential(t, b, exe.Module, exe.Entry, 5)
			if got, want := x.plan.String(), "0: gemv [6 0 1]\n1: gemv [7 2 3]\n2: gemv [8 4 5]\n"; got != want {
				t.Errorf("plan:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestGemvDecodeNarrow: bf16 products at one lhs row, as a bf16 model's
// decode step writes them (bf16 activations and weights, both converted
// to f32), run the kernel's own way (gemvFor: 4 streams a block, 16-lane
// vectors) at sizes that leave every tail: K = 3077 (a down projection's
// length plus 5: 192 vectors of 16, then 5 scalars) with N = 600 (blocks
// of 64, the last of 24 rows), K = 40 (2 vectors, 8 scalars) with N = 4102
// (blocks of 256 read as 4 streams, the last of 6 rows: a group of 4
// neighbours and 2 single rows), and K = 12 (scalars only) with N = 9;
// against the reference executor.
func TestGemvDecodeNarrow(t *testing.T) {
	b := testBackend(t)
	for _, s := range [][2]int{{3077, 600}, {40, 4102}, {12, 9}} {
		t.Run(fmt.Sprintf("%dx%d", s[0], s[1]), func(t *testing.T) {
			src := fmt.Sprintf(`func @f(%%x: bf16[1,%[1]d], %%w: bf16[%[2]d,%[1]d]) -> f32[1,%[2]d] {
  %%x32 = convert %%x : f32[1,%[1]d]
  %%w32 = convert %%w : f32[%[2]d,%[1]d]
  %%y = dot_general %%x32, %%w32 {lhs_contract=[1], rhs_contract=[1]} : f32[1,%[2]d]
  return %%y
}
`, s[0], s[1])
			exe := compileText(t, "gemv-decode-narrow", []byte(src))
			for seed := range int64(2) {
				x := differential(t, b, exe.Module, exe.Entry, seed+1)
				if got, want := x.plan.String(), "0: gemv [2 0 1]\n"; got != want {
					t.Fatalf("plan:\n%s\nwant:\n%s", got, want)
				}
			}
		})
	}
}

// TestGemvSharedAcrossN: products without a batch whose blocks are all
// whole run one kernel whatever their N (the range gives it), as a decode
// step's q, k, v and gate projections do; one with a shorter last block
// has its own. All agree with the reference.
func TestGemvSharedAcrossN(t *testing.T) {
	b := testBackend(t)
	src := `func @f(%x: f32[1,64], %w1: f32[128,64], %w2: f32[192,64], %w3: f32[100,64]) -> (f32[1,128], f32[1,192], f32[1,100]) {
  %a = dot_general %x, %w1 {lhs_contract=[1], rhs_contract=[1]} : f32[1,128]
  %c = dot_general %x, %w2 {lhs_contract=[1], rhs_contract=[1]} : f32[1,192]
  %d = dot_general %x, %w3 {lhs_contract=[1], rhs_contract=[1]} : f32[1,100]
  return %a, %c, %d
}
`
	exe := compileText(t, "gemv-shared", []byte(src))
	x := differential(t, b, exe.Module, exe.Entry, 8)
	var names []string
	for _, st := range x.plan.steps {
		names = append(names, st.what+" "+st.name)
	}
	if len(names) != 3 || names[0] != names[1] || names[0] == names[2] || !strings.HasPrefix(names[0], "gemv k") {
		t.Errorf("steps %q: want three gemvs, the first two one kernel, the third another", names)
	}
	if n := strings.Count(x.plan.gen.text(), "\ndefine "); n != 2 {
		t.Errorf("%d functions defined, want 2", n)
	}
}

// TestGemvNarrowEpilogue: a decode step's MLP with bf16 products (models'
// linear rounds each product's activations to bf16): silu(gate)·up and
// its rounding to bf16 are the up product's epilogue, which stores the
// bf16 activations the down product reads at their width, so the three
// products are the MLP's only steps but the input's rounding, as with f32
// products (gemv+mul); at one lhs row and at five (2 rhs rows in flight).
// The numbers, the rounded activations' too, are the reference executor's.
func TestGemvNarrowEpilogue(t *testing.T) {
	b := testBackend(t)
	for _, c := range []struct{ dt, rows string }{{"bf16", "1"}, {"f16", "1"}, {"bf16", "5"}} {
		t.Run(c.dt+"x"+c.rows, func(t *testing.T) {
			src := strings.NewReplacer("bf16", c.dt, "[1,", "["+c.rows+",").Replace(`func @f(%x: f32[1,64], %wg: bf16[96,64], %wu: bf16[96,64], %wd: bf16[64,96]) -> (f32[1,64], bf16[1,96]) {
  %xb = convert %x : bf16[1,64]
  %x32 = convert %xb : f32[1,64]
  %wg32 = convert %wg : f32[96,64]
  %g = dot_general %x32, %wg32 {lhs_contract=[1], rhs_contract=[1]} : f32[1,96]
  %wu32 = convert %wu : f32[96,64]
  %u = dot_general %x32, %wu32 {lhs_contract=[1], rhs_contract=[1]} : f32[1,96]
  %s = silu %g
  %h = mul %s, %u
  %hb = convert %h : bf16[1,96]
  %h32 = convert %hb : f32[1,96]
  %wd32 = convert %wd : f32[64,96]
  %y = dot_general %h32, %wd32 {lhs_contract=[1], rhs_contract=[1]} : f32[1,64]
  return %y, %hb
}
`)
			exe := compileText(t, "gemv-narrow-epilogue", []byte(src))
			for seed := range int64(3) {
				x := differential(t, b, exe.Module, exe.Entry, seed+1)
				var got []string
				for _, st := range x.plan.steps {
					got = append(got, st.what)
				}
				if want := "loop convert; gemv; gemv+mul+convert; gemv"; strings.Join(got, "; ") != want {
					t.Fatalf("plan:\n%s\nwant steps: %s", x.plan, want)
				}
			}
		})
	}
}

// TestGemvRanges: a streamed product is a fine step, so a long one (here
// 32 blocks of 256 rows, 2^20 multiply-adds) is cut into fineRanges ranges
// a thread, taken from the pool's counter; each result is still computed
// by one range alone, so the results are the same bits on one thread and
// on two, and agree with the reference executor.
func TestGemvRanges(t *testing.T) {
	src := `func @f(%x: f32[1,128], %w: f32[8192,128]) -> f32[1,8192] {
  %y = dot_general %x, %w {lhs_contract=[1], rhs_contract=[1]} : f32[1,8192]
  return %y
}
`
	var got [][]byte
	for _, threads := range []int{2, 1} { // 2 first: the pool starts with the first call's threads
		b := testBackend(t)
		b.threads = threads
		m, f, x := compileSrc(t, b, src)
		st := &x.plan.steps[0]
		if !st.fine || st.rows != 32 || x.ranges(st, 2) != 2*fineRanges {
			t.Errorf("%s: fine %v, %d rows, %d ranges on 2 threads; want fine, 32, %d", st.what, st.fine, st.rows, x.ranges(st, 2), 2*fineRanges)
		}
		in := cpu.RandomInputs(f, 3)
		agree(t, x, m, f, in)
		out, err := x.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, out[0].Bytes())
	}
	if !bytes.Equal(got[0], got[1]) {
		t.Errorf("the results on two threads and on one differ")
	}
}
