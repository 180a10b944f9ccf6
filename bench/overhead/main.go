// Command overhead measures what the compilation cache adds to a call that
// hits it: a compiled call on tiny inputs against the execution of the same
// optimised program alone (engine.Compile for the default backend, then
// its Executable's Run), with testing.Benchmark.
//
//	go run ./bench/overhead [-benchtime 2s]
//
// It prints ns per call of each form and the differences: Func (the
// function of f's own type that compile.Func returns), Call (the explicit
// form, []any in and out), and engine.Function.Call (the cache itself).
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// tiny is the benchmarked function: three elementwise ops on f32[4].
func tiny(x, y *tensor.Tensor) *tensor.Tensor { return x.Add(y).Mul(x).Relu() }

func main() {
	benchtime := flag.Duration("benchtime", time.Second, "time per measurement")
	rounds := flag.Int("rounds", 5, "measurements of each form, interleaved; the median is reported")
	flag.Parse()
	testing.Init()
	if err := flag.Set("test.benchtime", benchtime.String()); err != nil {
		fail(err)
	}
	x, y := tensor.Random(1, ir.F32, 4), tensor.Random(2, ir.F32, 4)
	mem := compile.Cache(engine.NewCache("", engine.CacheOptions{}))

	// The optimised program, as the cache runs it.
	tr := trace.New("tiny")
	px := tensor.Traced(tr.Param("arg0", x.Type()), tr)
	py := tensor.Traced(tr.Param("arg1", y.Type()), tr)
	m, err := tr.Finish(tiny(px, py).Value())
	if err != nil {
		fail(err)
	}
	// The same backend the cache compiles for (backend.CPUDefault).
	be, err := engine.OpenBackend(backend.CPUDefault)
	if err != nil {
		fail(err)
	}
	exe, _, err := engine.Compile(m, engine.Config{Backend: be})
	if err != nil {
		fail(err)
	}
	cargs := []*backend.Buffer{x.Buffer(), y.Buffer()}
	alone := func(b *testing.B) {
		for b.Loop() {
			if _, err := exe.Run(cargs); err != nil {
				b.Fatal(err)
			}
		}
	}

	fast := compile.Func(tiny, mem)
	fast(x, y)
	viaFunc := func(b *testing.B) {
		for b.Loop() {
			fast(x, y)
		}
	}

	c, err := compile.New(tiny, mem)
	if err != nil {
		fail(err)
	}
	if _, err := c.Call(x, y); err != nil {
		fail(err)
	}
	viaCall := func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Call(x, y); err != nil {
				b.Fatal(err)
			}
		}
	}

	// The runtime alone, on a program that is a plain module.
	f, err := engine.NewFunction(moduleProgram{}, engine.Options{Name: "tiny", Cache: engine.NewCache("", engine.CacheOptions{})})
	if err != nil {
		fail(err)
	}
	rargs := []engine.Arg{engine.TensorArg(x.Buffer()), engine.TensorArg(y.Buffer())}
	if _, err := f.Call(rargs); err != nil {
		fail(err)
	}
	viaRuntime := func(b *testing.B) {
		for b.Loop() {
			if _, err := f.Call(rargs); err != nil {
				b.Fatal(err)
			}
		}
	}

	report([]form{{"execution alone (Run)", alone}, {"engine.Function.Call", viaRuntime}, {"compile.Func", viaFunc}, {"Compiled.Call", viaCall}}, *rounds)
}

// form is one way of making the call, timed by fn.
type form struct {
	name string
	fn   func(*testing.B)
}

// report times the forms in rounds, interleaved, and prints each one's median
// time per call and its overhead over the first (the execution alone).
func report(forms []form, rounds int) {
	times := make([][]float64, len(forms))
	last := make([]testing.BenchmarkResult, len(forms))
	for range rounds {
		for i, f := range forms {
			last[i] = testing.Benchmark(f.fn)
			times[i] = append(times[i], float64(last[i].T.Nanoseconds())/float64(last[i].N))
		}
	}
	med := make([]float64, len(forms))
	for i, f := range forms {
		med[i] = median(times[i])
		fmt.Printf("%-27s %7.0f ns/call (median of %d)  %5d B/call  %3d allocs/call  overhead %5.0f ns\n",
			f.name+":", med[i], rounds, last[i].AllocedBytesPerOp(), last[i].AllocsPerOp(), med[i]-med[0])
	}
	fmt.Printf("cache-hit-overhead: func=%.0fns call=%.0fns runtime=%.0fns\n", med[2]-med[0], med[3]-med[0], med[1]-med[0])
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// moduleProgram is tiny as a engine.Program of its own, without package
// compile's reflection.
type moduleProgram struct{}

func (moduleProgram) Trace(args []engine.Arg) (*ir.Module, error) {
	tr := trace.New("tiny")
	px := tensor.Traced(tr.Param("arg0", args[0].Type), tr)
	py := tensor.Traced(tr.Param("arg1", args[1].Type), tr)
	return tr.Finish(tiny(px, py).Value())
}

func (moduleProgram) Eager(args []engine.Arg) ([]*backend.Buffer, error) {
	return nil, fmt.Errorf("not used")
}
