// Command routes measures how a compiled function's route table (the map
// from a call's exact shapes to the program that runs it) scales with the
// number of distinct call shapes: calls of x+x on f32 tensors of rank 8
// whose dimensions run through 1..4, padded to buckets of 2 and 4, so that
// 256 programs serve up to 65,536 shapes.
//
//	go run ./bench/routes [-shapes 8000,16000,32000,40000]
//
// For each count it makes a new function, calls it once per shape, and
// prints the time and the cache's statistics; the last line is, exactly,
//
//	bench-routes: shapes=N seconds=S routes=R route-evictions=E
//
// for the largest count.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

func double(x *tensor.Tensor) *tensor.Tensor { return x.Add(x) }

const rank = 8

func main() {
	list := flag.String("shapes", "8000,16000,32000,40000", "numbers of distinct shapes, comma-separated")
	flag.Parse()
	var last string
	for _, s := range strings.Split(*list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 1<<(2*rank) {
			fail(fmt.Errorf("bad shape count %q (want 1..%d)", s, 1<<(2*rank)))
		}
		last = run(n)
	}
	fmt.Println(last)
}

// run calls a new function once on each of n shapes and reports.
func run(n int) string {
	c, err := compile.New(double, compile.Cache(engine.NewCache("", engine.CacheOptions{})),
		compile.Buckets(2, 4), compile.MaxPrograms(-1), compile.RecompileLimit(-1))
	if err != nil {
		fail(err)
	}
	t0 := time.Now()
	for i := range n {
		if _, err := c.Call(tensor.Zeros(ir.F32, shape(i)...)); err != nil {
			fail(err)
		}
	}
	d := time.Since(t0)
	s := c.Stats()
	fmt.Printf("%6d shapes: %7.2f s (%5.1f us/shape)  %s\n", n, d.Seconds(), float64(d.Microseconds())/float64(n), s)
	return fmt.Sprintf("bench-routes: shapes=%d seconds=%.2f routes=%d route-evictions=%d", n, d.Seconds(), s.Routes, s.RouteEvictions)
}

// shape is the i-th shape: i's base-4 digits, plus one, are the dimensions.
func shape(i int) []int64 {
	dims := make([]int64, rank)
	for d := range dims {
		dims[d] = int64(i%4) + 1
		i /= 4
	}
	return dims
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
