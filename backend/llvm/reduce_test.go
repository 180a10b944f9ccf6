package llvm

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// TestSoftmaxLineMax: softmax and log_softmax over lines of 5, 16, 37 and
// 128 elements, whose max is taken sixteen lanes at a time (lineMax), agree
// with the reference executor on rows built to catch a wrong max: NaN in
// the vector part and in the tail, +inf (inf - inf is NaN) and all -inf
// (each makes the row NaN), and a large value in the last lane of a
// vector or in the tail, which makes exp overflow if the max missed it.
func TestSoftmaxLineMax(t *testing.T) {
	b := testBackend(t)
	for _, n := range []int64{5, 16, 37, 128} {
		for _, op := range []string{"softmax", "log_softmax"} {
			src := fmt.Sprintf("func @f(%%x: f32[7,%d]) -> f32[7,%d] {\n  %%y = %s %%x {axis=1} : f32[7,%d]\n  return %%y\n}\n", n, n, op, n)
			m, f, x := compileSrc(t, b, src)
			vals := make([]float64, 7*n)
			for i := range vals {
				vals[i] = math.Sin(float64(i)) * 3
			}
			row := func(r, i int64) *float64 { return &vals[r*n+min(i, n-1)] }
			*row(0, 3) = math.NaN()
			*row(1, n-2) = math.NaN()
			*row(2, 10) = math.Inf(1)
			for i := range n {
				*row(3, i) = math.Inf(-1)
			}
			*row(4, 15) = 100
			*row(5, n-1) = 100
			*row(6, 0) = -0.0
			t.Run(fmt.Sprintf("%s/%d", op, n), func(t *testing.T) {
				agree(t, x, m, f, []*backend.Buffer{backend.FromFloats(f.Params[0].Type, vals...)})
			})
		}
	}
}

// TestLongSumAccuracy: f32 sums of 10^7 elements agree with the exact sum
// (in float64 of the same f32 values) within 2e-6 relative, for reduce_sum
// over the whole tensor, over the contiguous last axis, over a strided
// axis and over two axes. A single f32 accumulator (even sixteen of them
// in vector lanes) is off by about 6e-5 at this length; blocks of at most
// sumBlock elements summed in f32 and combined in f64 are off by about 1e-7.
func TestLongSumAccuracy(t *testing.T) {
	b := testBackend(t)
	cases := []struct {
		shape, axes, out string
		at               func(i int) int // the result element input element i adds to
	}{
		{"10000000", "0", "", func(int) int { return 0 }},
		{"2,5000000", "1", "2", func(i int) int { return i / 5000000 }},
		{"5000000,2", "0", "2", func(i int) int { return i % 2 }},
		{"1000,5000,2", "0,1", "2", func(i int) int { return i % 2 }},
	}
	for _, c := range cases {
		t.Run(c.shape+"/"+c.axes, func(t *testing.T) {
			src := fmt.Sprintf("func @f(%%x: f32[%s]) -> f32[%s] {\n  %%s = mul %%x, %%x\n  %%y = reduce_sum %%s {axes=[%s]} : f32[%s]\n  return %%y\n}\n",
				c.shape, c.out, c.axes, c.out)
			m, f, x := compileSrc(t, b, src)
			in := backend.New(f.Params[0].Type)
			xs := in.Float32s()
			for i := range xs {
				xs[i] = float32(1 + math.Sin(float64(i))*0.5)
			}
			got, err := x.Run([]*backend.Buffer{in})
			if err != nil {
				t.Fatal(err)
			}
			outs := got[0].Float32s()
			want := make([]float64, len(outs))
			for i, v := range xs {
				want[c.at(i)] += float64(v * v)
			}
			for o := range outs {
				if rel := math.Abs(float64(outs[o])-want[o]) / want[o]; rel > 2e-6 {
					t.Errorf("%s: sum %d = %v, want %v (relative error %.2g)", ir.Print(m), o, outs[o], want[o], rel)
				}
			}
		})
	}
}

// BenchmarkReduceSum times f32 sums on one thread over 16M elements: the
// whole tensor, rows (the contiguous last axis, 4096 long), columns (axis
// 0 of [4096,4096]) and long rows ([4, 4M]); GB/s counts the operand:
// go test ./backend/llvm -run '^$' -bench ReduceSum -benchtime 20x
func BenchmarkReduceSum(b *testing.B) {
	for _, c := range []struct{ name, shape, axes, out string }{
		{"all", "16777216", "0", ""},
		{"rows", "4096,4096", "1", "4096"},
		{"cols", "4096,4096", "0", "4096"},
		{"long-rows", "4,4194304", "1", "4"},
	} {
		b.Run(c.name, func(b *testing.B) {
			be := testBackend(b)
			be.threads = 1
			src := fmt.Sprintf("func @f(%%x: f32[%s]) -> f32[%s] {\n  %%y = reduce_sum %%x {axes=[%s]} : f32[%s]\n  return %%y\n}\n",
				c.shape, c.out, c.axes, c.out)
			_, f, x := compileSrc(b, be, src)
			in := []*backend.Buffer{backend.New(f.Params[0].Type)}
			xs := in[0].Float32s()
			for i := range xs {
				xs[i] = float32(i % 7)
			}
			if _, err := x.Run(in); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := x.Run(in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(in[0].Len()*4)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// TestLongSumEager: the eager library's row sum (eager_reduce_sum_rows) of
// 10^7 elements is blocked as the compiled one: within 2e-6 of the exact
// sum, where one f32 accumulator was off by about 1e-5.
func TestLongSumEager(t *testing.T) {
	b := testBackend(t)
	typ := ir.Tensor(ir.F32, 10_000_000)
	in := &ir.Instr{Op: ir.OpReduceSum, Attr: &ir.AxesAttr{Axes: []int64{0}}, Args: []*ir.Value{{Type: typ}}}
	in.Results = []*ir.Value{{Type: ir.Tensor(ir.F32), Def: in}}
	x := backend.New(typ)
	xs := x.Float32s()
	want := 0.0
	for i := range xs {
		v := float32(1 + math.Sin(float64(i))*0.5)
		xs[i] = v * v
		want += float64(xs[i])
	}
	before := eagerCalls.Load()
	got, err := b.Eval(in, []*backend.Buffer{x})
	if err != nil {
		t.Fatal(err)
	}
	if eagerCalls.Load() == before {
		t.Fatal("the sum did not run on the eager library")
	}
	if s := float64(got[0].Float32s()[0]); math.Abs(s-want)/want > 2e-6 {
		t.Errorf("sum = %v, want %v (relative error %.2g)", s, want, math.Abs(s-want)/want)
	}
}

// TestLongLineNorm: layer_norm over a line of 4·10^6 elements near 1001
// (its mean and variance are blocked sums, lineSum) agrees with the
// reference executor within the oracle's tolerance; one f32 accumulator
// put the mean so far off that every output was off by about 0.3.
func TestLongLineNorm(t *testing.T) {
	b := testBackend(t)
	const n = 4_000_000
	src := fmt.Sprintf("func @f(%%x: f32[1,%d], %%s: f32[%d], %%b: f32[%d]) -> f32[1,%d] {\n  %%y = layer_norm %%x, %%s, %%b {eps=1e-5} : f32[1,%d]\n  return %%y\n}\n", n, n, n, n, n)
	m, f, x := compileSrc(t, b, src)
	in := []*backend.Buffer{backend.New(f.Params[0].Type), backend.New(f.Params[1].Type), backend.New(f.Params[2].Type)}
	xs, ss := in[0].Float32s(), in[1].Float32s()
	for i := range xs {
		v := float32(1 + math.Sin(float64(i))*0.5)
		xs[i] = 1000 + v*v
		ss[i] = 1
	}
	agree(t, x, m, f, in)
}

// stepWhats are x's steps as its step report names them, in order.
func stepWhats(x *Executable) []string {
	var whats []string
	for _, s := range x.StepTimes() {
		whats = append(whats, s.What)
	}
	return whats
}

// TestReduceColumns: an f32 reduction over leading axes only (a norm's
// scale gradient summed over the tokens) reads its operand row by row, the
// results as accumulators (a step "… over rows"), for sums of at most
// sumBlock terms, max and min; a longer sum (blocked in f64), a reduction
// keeping a leading axis, one of every axis and an f16 one keep their
// loops. The numbers are the reference executor's.
func TestReduceColumns(t *testing.T) {
	src := `func @f(%x: f32[37,5,70], %y: f32[300,33], %z: f32[5000,3], %h: f16[40,9]) -> (f32[70], f32[5,70], f32[33], f32[33], f32[3], f32[37], f32[], f16[9]) {
  %a = reduce_sum %x {axes=[0,1]} : f32[70]
  %b = reduce_sum %x {axes=[0]} : f32[5,70]
  %c = reduce_max %y {axes=[0]} : f32[33]
  %d = reduce_min %y {axes=[0]} : f32[33]
  %e = reduce_sum %z {axes=[0]} : f32[3]
  %g = reduce_sum %x {axes=[1,2]} : f32[37]
  %s = reduce_sum %y {axes=[0,1]} : f32[]
  %k = reduce_sum %h {axes=[0]} : f16[9]
  return %a, %b, %c, %d, %e, %g, %s, %k
}
`
	m, f, x := compileSrc(t, testBackend(t), src)
	whats := stepWhats(x)
	want := []string{"reduce_sum over rows", "reduce_sum over rows", "reduce_max over rows", "reduce_min over rows",
		"reduce_sum", "reduce_sum", "reduce_sum", "reduce_sum"}
	if !slices.Equal(whats, want) {
		t.Errorf("steps %q, want %q", whats, want)
	}
	agree(t, x, m, f, cpu.RandomInputs(f, 9))
}

// TestReduceMiddle: an f32 reduction of one axis that is neither the
// first nor the last (an MoE's combine, [tokens, top-k, hidden] summed over
// top-k) takes the results' rows as accumulators and reads each term's row
// along the last axis (a step "… over middle axes"): from memory (the
// operand also returned), and as an expression nothing else keeps (the
// combine's weights times the experts' rows, computed as read: "reduce_sum
// of mul"); max; min and sum with two kept leading axes (rank 4). A middle
// axis longer than sumBlock (blocked in f64) and two middle axes keep their
// loops. The numbers are the reference executor's.
func TestReduceMiddle(t *testing.T) {
	src := `func @f(%y: f32[12,3,70], %w: f32[12,3], %x: f32[2,5,4,33], %z: f32[2,5000,3]) -> (f32[12,70], f32[12,70], f32[12,3,70], f32[12,70], f32[2,5,33], f32[2,33], f32[2,3], f32[2,4,33]) {
  %wb = broadcast %w {dims=[0,1]} : f32[12,3,70]
  %p = mul %y, %wb : f32[12,3,70]
  %a = reduce_sum %p {axes=[1]} : f32[12,70]
  %q = mul %y, %y : f32[12,3,70]
  %b = reduce_sum %q {axes=[1]} : f32[12,70]
  %c = reduce_max %y {axes=[1]} : f32[12,70]
  %d = reduce_min %x {axes=[2]} : f32[2,5,33]
  %e = reduce_sum %x {axes=[1,2]} : f32[2,33]
  %g = reduce_sum %z {axes=[1]} : f32[2,3]
  %h = reduce_sum %x {axes=[1]} : f32[2,4,33]
  return %a, %b, %q, %c, %d, %e, %g, %h
}
`
	m, f, x := compileSrc(t, testBackend(t), src)
	whats := stepWhats(x)
	want := []string{"reduce_sum of mul over middle axes", "loop mul", "reduce_sum over middle axes", "reduce_max over middle axes",
		"reduce_min over middle axes", "reduce_sum", "reduce_sum", "reduce_sum over middle axes"}
	if !slices.Equal(whats, want) {
		t.Errorf("steps %q, want %q", whats, want)
	}
	agree(t, x, m, f, cpu.RandomInputs(f, 4))
}

// TestReduceMaxLine: an f32 reduce_max or reduce_min over the last axis
// alone takes each line's max sixteen lanes at a time (maxOverLine; the
// step reads "over lines") and gives the reference executor's bits: NaN
// in the vector part and in the tail, ±inf, a line of -inf, the extreme in
// the last lane of a vector and in the tail, and +0 beside -0 (max +0,
// min -0, in either order); lines of 0, 5, 16, 37 and 128 elements, 2-D
// and 3-D. Other axes keep their loops.
func TestReduceMaxLine(t *testing.T) {
	b := testBackend(t)
	for _, n := range []int64{0, 5, 16, 37, 128} {
		src := fmt.Sprintf(`func @f(%%x: f32[9,%d], %%y: f32[3,3,%d]) -> (f32[9], f32[9], f32[3,3], f32[%d]) {
  %%a = reduce_max %%x {axes=[1]} : f32[9]
  %%b = reduce_min %%x {axes=[1]} : f32[9]
  %%c = reduce_max %%y {axes=[2]} : f32[3,3]
  %%d = reduce_max %%x {axes=[0]} : f32[%d]
  return %%a, %%b, %%c, %%d
}
`, n, n, n, n)
		m, f, x := compileSrc(t, b, src)
		whats := stepWhats(x)
		want := []string{"reduce_max over lines", "reduce_min over lines", "reduce_max over lines", "reduce_max over rows"}
		if !slices.Equal(whats, want) {
			t.Errorf("n=%d: steps %q, want %q", n, whats, want)
		}
		vals := make([]float64, 9*n)
		for i := range vals {
			vals[i] = math.Sin(float64(i)) * 3
		}
		set := func(r, i int64, v float64) {
			if n > 0 {
				vals[r*n+min(i, n-1)] = v
			}
		}
		set(0, 3, math.NaN())
		set(1, n-2, math.NaN())
		set(2, 10, math.Inf(1))
		set(2, 11, math.Inf(-1))
		for i := range n {
			vals[3*n+i] = math.Inf(-1)
			vals[6*n+i] = 0 // +0 then -0 at even indices
			vals[7*n+i] = math.Copysign(0, -1)
			if i%2 == 1 {
				vals[6*n+i], vals[7*n+i] = vals[7*n+i], vals[6*n+i]
			}
		}
		set(4, 15, 100)
		set(5, n-1, -100)
		set(8, n-1, 100)
		in := []*backend.Buffer{backend.FromFloats(f.Params[0].Type, vals...), cpu.RandomInputs(f, 4)[1]}
		want2, err := cpu.Run(m, f, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			g, w := got[i].Bytes(), want2[i].Bytes()
			for j := 0; j+4 <= len(w); j += 4 {
				gb, wb := binary.LittleEndian.Uint32(g[j:]), binary.LittleEndian.Uint32(w[j:])
				gf, wf := math.Float32frombits(gb), math.Float32frombits(wb)
				if gb != wb && !(gf != gf && wf != wf) { // NaN == NaN, any payload
					t.Errorf("n=%d: result %d[%d] = %v (%08x), want %v (%08x)", n, i, j/4, gf, gb, wf, wb)
				}
			}
		}
	}
}
