package llvm

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
)

// BenchmarkGemv times a batch-1 decode step's products, x [1, K] times a
// weight stored [N, K] as Hugging Face stores it, with the weights from
// memory (each call takes the next of enough copies to fill 192 MB; the lm
// head alone is larger than the L3), on all cores, in f32 and with bf16
// weights read at their width. The kernel's own parameters (gemvFor) and
// each of gemvVariants are compiled side by side and called in turn, one
// call each per round, so that a neighbour's load on a shared host falls
// on all of them alike; each reports the median call's rate, counting the
// weight's bytes (the bound is what the host streams: go run ./bench/limits).
//
//	go test ./backend/llvm -run '^$' -bench Gemv -benchtime 200x
func BenchmarkGemv(b *testing.B) {
	for _, s := range [][2]int64{{1024, 3072}, {3072, 1024}, {2048, 1024}, {1024, 151936}} {
		for _, dt := range []string{"f32", "bf16"} {
			b.Run(fmt.Sprintf("%s/%dx%d", dt, s[0], s[1]), func(b *testing.B) {
				gemvBench(b, s[0], s[1], dt)
			})
		}
	}
}

// gemvBench is one shape of BenchmarkGemv.
func gemvBench(b *testing.B, k, n int64, dt string) {
	src := gemvF32Src(k, n)
	size := int64(4)
	if dt != "f32" {
		size = 2
		src = gemvNarrowSrc(k, n, "f32", dt)
	}
	var runs []gemvRun
	for _, v := range gemvVariants {
		runs = append(runs, gemvRun{name: v.name, src: src, p: v.p})
	}
	gemvTime(b, k, n, size, runs)
}

// BenchmarkGemvBF16 times a decode step's product of bf16 weights with
// f32 activations (f32 products of a bf16 checkpoint, Model.F32Products)
// and with bf16 activations (its bf16 products, as models' linear writes
// them), alternated call by call as BenchmarkGemv alternates its variants:
// a bf16 product must stream the weights at least as fast.
//
//	go test ./backend/llvm -run '^$' -bench GemvBF16 -benchtime 300x
func BenchmarkGemvBF16(b *testing.B) {
	for _, s := range [][2]int64{{1024, 3072}, {3072, 1024}, {1024, 2048}, {1024, 151936}} {
		b.Run(fmt.Sprintf("%dx%d", s[0], s[1]), func(b *testing.B) {
			gemvTime(b, s[0], s[1], 2, []gemvRun{
				{name: "f32xbf16", src: gemvNarrowSrc(s[0], s[1], "f32", "bf16")},
				{name: "bf16xbf16", src: gemvNarrowSrc(s[0], s[1], "bf16", "bf16")},
			})
		})
	}
}

// gemvF32Src is x [1, k] times w [n, k], both f32.
func gemvF32Src(k, n int64) string {
	return fmt.Sprintf("func @mv(%%x: f32[1,%d], %%w: f32[%d,%d]) -> f32[1,%d] {\n  %%y = dot_general %%x, %%w {lhs_contract=[1], rhs_contract=[1]} : f32[1,%d]\n  return %%y\n}\n", k, n, k, n, n)
}

// gemvNarrowSrc is x [1, k] of xdt times w [n, k] of wdt (f16/bf16), both
// converted to f32 for the product as a program writes a narrow product.
func gemvNarrowSrc(k, n int64, xdt, wdt string) string {
	x := "%x"
	conv := ""
	if xdt != "f32" {
		x = "%x32"
		conv = fmt.Sprintf("  %%x32 = convert %%x : f32[1,%d]\n", k)
	}
	return fmt.Sprintf("func @mv(%%x: %s[1,%d], %%w: %s[%d,%d]) -> f32[1,%d] {\n%s  %%w32 = convert %%w : f32[%d,%d]\n  %%y = dot_general %s, %%w32 {lhs_contract=[1], rhs_contract=[1]} : f32[1,%d]\n  return %%y\n}\n",
		xdt, k, wdt, n, k, n, conv, n, k, x, n)
}

// gemvRun is one program a gemv benchmark times: its source, compiled
// with gemvFor replaced by p when p is not nil.
type gemvRun struct {
	name, src string
	p         func(m, k int64, narrow bool) gemvParams
	k, n      int64 // the product's shape where it is not gemvTime's
}

// gemvTime compiles runs (products of x [1, k] and a weight [n, k] of
// size bytes an element) and calls them in turn, one call each per round,
// each with the next of enough weight copies to fill 192 MB, so that a
// neighbour's load on a shared host falls on all of them alike; each
// reports the median call's rate, counting the weight's bytes.
func gemvTime(b *testing.B, k, n, size int64, runs []gemvRun) {
	be := testBackend(b)
	be.threads = runtime.NumCPU()
	var xs []*Executable
	var ws [][]*backend.Buffer // per run: its copies of the weight
	var args [][]*backend.Buffer
	for _, r := range runs {
		restore := gemvFor
		if r.p != nil {
			gemvFor = r.p
		}
		_, fn, x := compileSrc(b, be, r.src)
		gemvFor = restore
		xs = append(xs, x)
		// At least two copies, so that no call finds its weights where
		// the last call left them. Runs of one source share them.
		if len(ws) > 0 && runs[len(ws)-1].src == r.src {
			ws, args = append(ws, ws[len(ws)-1]), append(args, args[len(args)-1])
			continue
		}
		var copies []*backend.Buffer
		var in []*backend.Buffer
		rk, rn := cmp.Or(r.k, k), cmp.Or(r.n, n)
		for i := range max(2, int((192<<20)/(rk*rn*size))) {
			in = cpu.RandomInputs(fn, int64(i+1))
			copies = append(copies, in[1])
		}
		ws, args = append(ws, copies), append(args, in)
	}
	times := make([][]time.Duration, len(xs))
	next := 0
	b.ResetTimer()
	for range b.N {
		for v, x := range xs {
			a := args[v]
			a[1] = ws[v][next%len(ws[v])]
			next++
			t0 := time.Now()
			if _, err := x.Run(a); err != nil {
				b.Fatal(err)
			}
			times[v] = append(times[v], time.Since(t0))
		}
	}
	b.StopTimer()
	for v, t := range times {
		slices.Sort(t)
		bytes := cmp.Or(runs[v].k, k) * cmp.Or(runs[v].n, n) * size
		b.ReportMetric(float64(bytes)/float64(t[len(t)/2].Nanoseconds()), runs[v].name+"-GB/s")
	}
}

// gemvVariants are the ways of reading the rhs BenchmarkGemv times beside
// the kernel's own (nil): the one it replaced for one lhs row (neighbouring
// rows in flight, 4 of f32 or 8 of bf16 prefetched two groups ahead), one
// row at a time with 8 accumulators (llama.cpp's way), the kernel's streams
// with a prefetch 1 KB ahead, and 8 streams of 32 rows.
var gemvVariants = []struct {
	name string
	p    func(m, k int64, narrow bool) gemvParams
}{
	{"default", nil},
	{"neighbours", func(m, k int64, narrow bool) gemvParams {
		if narrow {
			return gemvParams{cols: 8, accs: 1, ahead: gemvPrefetchGroups * 8 * k}
		}
		return gemvParams{cols: 4, accs: 1}
	}},
	{"rows", gemvTry(1, 8, 0)},
	{"streams-pf1k", gemvSpread(4, 2, 256, 1024)},
	{"streams8", gemvSpread(8, 1, 256, 0)},
}

// gemvTry is a variant for BenchmarkGemv: cols rows in flight, accs
// accumulators, the prefetch ahead bytes ahead (negative: -ahead groups of
// rows).
func gemvTry(cols, accs, ahead int64) func(m, k int64, narrow bool) gemvParams {
	return func(m, k int64, narrow bool) gemvParams {
		size := int64(4)
		if narrow {
			size = 2
		}
		if ahead < 0 {
			return gemvParams{cols: cols, accs: accs, ahead: -ahead * cols * k}
		}
		return gemvParams{cols: cols, accs: accs, ahead: ahead / size}
	}
}

// gemvSpread is a variant for BenchmarkGemv: cols streams spread over
// blocks of block rows, accs accumulators each, prefetching ahead bytes
// ahead.
func gemvSpread(cols, accs, block, ahead int64) func(m, k int64, narrow bool) gemvParams {
	return func(m, k int64, narrow bool) gemvParams {
		p := gemvTry(cols, accs, ahead)(m, k, narrow)
		p.block, p.spread = block, true
		return p
	}
}

// BenchmarkGemvPages times the lm head's product (1024 x 65536 here) with
// its weights in three kinds of memory, called in turn (each of two copies
// of each): advised into transparent huge pages (backend.AdviseHugePages),
// a plain Go slice's (4 KiB pages where the host's transparent_hugepage is
// "madvise", as every buffer's), and a file mapped from the page cache
// (backend.MapFile, as checkpoints are read). Each reports the
// median and the fastest call's rate.
//
//	go test ./backend/llvm -run '^$' -bench GemvPages -benchtime 100x
func BenchmarkGemvPages(b *testing.B) {
	k, n := int64(1024), int64(65536)
	src := gemvF32Src(k, n)
	be := testBackend(b)
	be.threads = runtime.NumCPU()
	_, fn, x := compileSrc(b, be, src)
	in := cpu.RandomInputs(fn, 1)
	w := in[1]
	names := []string{"huge", "4k", "file"}
	sets := make([][]*backend.Buffer, len(names))
	for c := range 2 {
		huge := backend.New(w.Type()) // fresh from the system: not yet faulted in
		if _, err := backend.AdviseHugePages(huge.Bytes()); err != nil {
			b.Fatal(err)
		}
		copy(huge.Bytes(), w.Bytes())
		small, err := backend.View(w.Type(), slices.Clone(w.Bytes()))
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(b.TempDir(), fmt.Sprint(c))
		if err := os.WriteFile(path, w.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		file, unmap, err := backend.MapFile(path, 0, w.Type())
		if err != nil {
			b.Fatal(err)
		}
		defer unmap()
		for i, buf := range []*backend.Buffer{huge, small, file} {
			sets[i] = append(sets[i], buf)
		}
	}
	times := make([][]time.Duration, len(names))
	b.ResetTimer()
	for i := range b.N {
		for v := range sets {
			t0 := time.Now()
			if _, err := x.Run([]*backend.Buffer{in[0], sets[v][i%2]}); err != nil {
				b.Fatal(err)
			}
			times[v] = append(times[v], time.Since(t0))
		}
	}
	b.StopTimer()
	for v, t := range times {
		slices.Sort(t)
		b.ReportMetric(float64(k*n*4)/float64(t[len(t)/2].Nanoseconds()), names[v]+"-GB/s")
		b.ReportMetric(float64(k*n*4)/float64(t[0].Nanoseconds()), names[v]+"-best-GB/s")
	}
}

// BenchmarkGemvDecode times the products of a Qwen3-0.6B decode step at
// batch 1 (weights stored [N, K]: q 1024->2048, k and v 1024->1024, o
// 2048->1024, gate and up 1024->3072, down 3072->1024) with bf16
// activations and weights (a bf16 model's decode), f32 activations and
// bf16 weights, and f32, the weights from memory (gemvTime cycles copies
// through 192 MB, six times the L3), the kernel's own way (default) and
// each of gemvDecodeVariants called in turn.
//
//	go test ./backend/llvm -run '^$' -bench GemvDecode -benchtime 300x
func BenchmarkGemvDecode(b *testing.B) {
	for _, dt := range []string{"bf16", "f32xbf16", "f32"} {
		for _, s := range [][3]any{{"q", 1024, 2048}, {"kv", 1024, 1024}, {"o", 2048, 1024}, {"up", 1024, 3072}, {"down", 3072, 1024}} {
			k, n := int64(s[1].(int)), int64(s[2].(int))
			b.Run(fmt.Sprintf("%s/%s/%dx%d", dt, s[0], k, n), func(b *testing.B) {
				gemvDecodeBench(b, dt, k, n)
			})
		}
	}
}

// gemvDecodeBench is one product of BenchmarkGemvDecode: dt "bf16" (bf16
// activations and weights), "f32xbf16" (f32 activations, bf16 weights) or
// "f32".
func gemvDecodeBench(b *testing.B, dt string, k, n int64) {
	src, size := gemvNarrowSrc(k, n, "bf16", "bf16"), int64(2)
	switch dt {
	case "f32xbf16":
		src = gemvNarrowSrc(k, n, "f32", "bf16")
	case "f32":
		src, size = gemvF32Src(k, n), 4
	}
	var runs []gemvRun
	for _, v := range gemvDecodeVariants {
		runs = append(runs, gemvRun{name: v.name, src: src, p: v.p})
	}
	gemvTime(b, k, n, size, runs)
}

// gemvDecodeVariants are BenchmarkGemvDecode's ways of reading the rhs
// beside the kernel's own: the 4 streams in 8-lane vectors with 2
// accumulators (f32's way), 8 neighbouring rows prefetched two groups
// ahead (the down projection's way until this sitting), and one row at a
// time in memory order, 16-lane vectors with 4 and 2 sums apart.
var gemvDecodeVariants = []struct {
	name string
	p    func(m, k int64, narrow bool) gemvParams
}{
	{"default", nil},
	{"streams8", gemvLanes(gemvParams{cols: 4, accs: 2, block: 256, spread: true})},
	{"neighbours", func(m, k int64, narrow bool) gemvParams {
		return gemvParams{cols: 8, accs: 1, ahead: gemvPrefetchGroups * 8 * k}
	}},
	{"row16x4", gemvLanes(gemvParams{cols: 1, accs: 4, lanes: 16})},
	{"row16x2", gemvLanes(gemvParams{cols: 1, accs: 2, lanes: 16})},
}

// gemvLanes is a variant for the benchmarks: p for every product (p.ahead
// counted in bytes here).
func gemvLanes(p gemvParams) func(m, k int64, narrow bool) gemvParams {
	return func(m, k int64, narrow bool) gemvParams {
		q := p
		if narrow {
			q.ahead /= 2
		} else {
			q.ahead /= 4
		}
		return q
	}
}

// BenchmarkGemvRowLength times bf16 products of the same 6 MB of weights
// with rows of 1024 to 4096 elements, the kernel's own way and the first
// three of gemvDecodeVariants (4 streams in 8 lanes, 8 neighbours, one row
// at a time), all called in turn: whether the row's length alone sets the
// rate.
//
//	go test ./backend/llvm -run '^$' -bench GemvRowLength -benchtime 300x
func BenchmarkGemvRowLength(b *testing.B) {
	var runs []gemvRun
	for _, s := range [][2]int64{{1024, 3072}, {1536, 2048}, {2048, 1536}, {3072, 1024}, {4096, 768}} {
		src := gemvNarrowSrc(s[0], s[1], "bf16", "bf16")
		for _, v := range gemvDecodeVariants[:4] {
			runs = append(runs, gemvRun{fmt.Sprintf("%s-%d", v.name, s[0]), src, v.p, s[0], s[1]})
		}
	}
	gemvTime(b, 1024, 3072, 2, runs)
}
