package llvm

import (
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
	src := fmt.Sprintf("func @mv(%%x: f32[1,%d], %%w: f32[%d,%d]) -> f32[1,%d] {\n  %%y = dot_general %%x, %%w {lhs_contract=[1], rhs_contract=[1]} : f32[1,%d]\n  return %%y\n}\n",
		k, n, k, n, n)
	size := int64(4)
	if dt != "f32" {
		size = 2
		src = gemvNarrowSrc(k, n, "f32", dt)
	}
	var runs []gemvRun
	for _, v := range gemvVariants {
		runs = append(runs, gemvRun{v.name, src, v.p})
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
				{"f32xbf16", gemvNarrowSrc(s[0], s[1], "f32", "bf16"), nil},
				{"bf16xbf16", gemvNarrowSrc(s[0], s[1], "bf16", "bf16"), nil},
			})
		})
	}
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
		for i := range max(2, int((192<<20)/(k*n*size))) {
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
		b.ReportMetric(float64(k*n*size)/float64(t[len(t)/2].Nanoseconds()), runs[v].name+"-GB/s")
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
	src := fmt.Sprintf("func @mv(%%x: f32[1,%d], %%w: f32[%d,%d]) -> f32[1,%d] {\n  %%y = dot_general %%x, %%w {lhs_contract=[1], rhs_contract=[1]} : f32[1,%d]\n  return %%y\n}\n", k, n, k, n, n)
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
