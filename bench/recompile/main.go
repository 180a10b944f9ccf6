// Command recompile is the recompilation-storm benchmark: calls of the
// compiled transformer block (bench/block) with batch sizes drawn uniformly
// from 1..256 (seeded), each result compared with the eager block.
//
//	go run ./bench/recompile [-calls 1000] [-seed 1] [-width 32] [-tokens 4] [-exact]
//
// It prints the cache's statistics and timings, and last, exactly,
//
//	recompile-storm: calls=N compiles=C mismatches=M exact-shape-compiles=E
//
// where C counts compiles (trace + passes + lowering), M the results that
// differ from eager by more than 1e-5 relative (the count of results that
// are not bit-identical is printed above it), and E the distinct batch sizes:
// what a cache keyed by exact shapes would have compiled.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strings"
	"time"

	"github.com/tpucc/tpucc/bench/block"
	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

func main() {
	calls := flag.Int("calls", 1000, "number of calls")
	seed := flag.Int64("seed", 1, "seed of the batch sizes and inputs")
	width := flag.Int64("width", 32, "model width")
	tokens := flag.Int64("tokens", 4, "tokens per sequence")
	maxBatch := flag.Int64("max-batch", 256, "batch sizes are drawn from 1..max-batch")
	exact := flag.Bool("exact", false, "for comparison: an exact-shape cache without limits (no dynamic dimensions)")
	flag.Parse()

	w := block.NewWeights(*seed, *width, 2**width)
	opts := []compile.Option{compile.Name("block"), compile.Cache(engine.NewCache("", engine.CacheOptions{}))}
	if *exact {
		opts = append(opts, compile.NoAutoDynamic(), compile.RecompileLimit(-1), compile.MaxPrograms(-1))
	}
	c, err := compile.New(block.Block, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rng := rand.New(rand.NewSource(*seed))
	sizes := map[int64]bool{}
	mismatches, inexact := 0, 0
	maxRel := 0.0
	var compiledTime, eagerTime time.Duration
	for i := 0; i < *calls; i++ {
		b := 1 + rng.Int63n(*maxBatch)
		sizes[b] = true
		x := tensor.Random(*seed*1_000_003+int64(i), ir.F32, b, *tokens, *width)
		args := w.Args(x)
		t0 := time.Now()
		out, err := c.Call(args...)
		t1 := time.Now()
		if err != nil {
			fmt.Fprintf(os.Stderr, "call %d (batch %d): %v\n", i, b, err)
			os.Exit(1)
		}
		want := block.Block(x, w.AttnNorm, w.Wq, w.Wk, w.Wv, w.Wo, w.QNorm, w.KNorm, w.MLPNorm, w.WGate, w.WUp, w.WDown)
		eagerTime += time.Since(t1)
		compiledTime += t1.Sub(t0)
		rel, exact := compare(out[0], want)
		maxRel = math.Max(maxRel, rel)
		if rel > 1e-5 {
			mismatches++
		}
		if !exact {
			inexact++
		}
	}
	s := c.Stats()
	fmt.Printf("block: width %d, %d tokens, batch 1..%d; %d calls, %d distinct batch sizes\n", *width, *tokens, *maxBatch, *calls, len(sizes))
	fmt.Printf("cache: %s\n", s)
	fmt.Printf("programs: %d (specialisations %d); padded calls %d, padding %.1f%% of their input elements\n",
		s.Programs, s.Specialisations, s.PaddedCalls, 100*s.Waste())
	fmt.Printf("time: compiled calls %v (%.2f ms/call), eager %v (%.2f ms/call)\n",
		compiledTime.Round(time.Millisecond), ms(compiledTime)/float64(*calls), eagerTime.Round(time.Millisecond), ms(eagerTime)/float64(*calls))
	fmt.Printf("results: %d not bit-identical to eager, largest relative difference %.3g\n", inexact, maxRel)
	for i, l := range c.Explain() {
		if i < 20 && (strings.HasPrefix(l, "recompiling ") || strings.HasPrefix(l, "compiling ")) {
			fmt.Println("  " + l)
		}
	}
	fmt.Printf("recompile-storm: calls=%d compiles=%d mismatches=%d exact-shape-compiles=%d\n", *calls, s.Compiles, mismatches, len(sizes))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// compare returns the largest relative difference |a-b|/(1+|b|) and whether
// a and b are bit-identical.
func compare(a, b *tensor.Tensor) (float64, bool) {
	if !a.Type().Equal(b.Type()) {
		return math.Inf(1), false
	}
	x, y := a.Float64s(), b.Float64s()
	worst, exact := 0.0, true
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			exact = false
			d := math.Abs(x[i]-y[i]) / (1 + math.Abs(y[i]))
			if math.IsNaN(d) {
				d = math.Inf(1)
			}
			worst = math.Max(worst, d)
		}
	}
	return worst, exact
}
