// Command warmstart measures a second process with a warm persistent cache:
// it runs itself twice as a child on one new cache directory, each child
// calling the compiled transformer block (bench/block) once per batch size,
// and reports each child's compiles, disk hits and time to first result.
//
//	go run ./bench/warmstart [-batches 8,64] [-width 32] [-tokens 4]
//
// The last line is
//
//	warm-start: cold compiles=C first-result=T; warm compiles=0 disk-hits=D first-result=T
//
// Time to first result is measured in the child, from the start of main to
// the first call's return (so it excludes the Go runtime's start-up and the
// exec), and the parent also reports each child's wall time.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/tpucc/tpucc/bench/block"
	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

func main() {
	start := time.Now()
	child := flag.String("child", "", "run as the child on this cache directory")
	batches := flag.String("batches", "8,64", "batch sizes each child calls, in order")
	width := flag.Int64("width", 32, "model width")
	tokens := flag.Int64("tokens", 4, "tokens per sequence")
	flag.Parse()
	if *child != "" {
		runChild(start, *child, *batches, *width, *tokens)
		return
	}
	dir, err := os.MkdirTemp("", "tpucc-warmstart-")
	check(err)
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	check(err)
	var lines []string
	for _, which := range []string{"cold", "warm"} {
		t0 := time.Now()
		out, err := exec.Command(self, "-child", dir, "-batches", *batches, "-width", fmt.Sprint(*width), "-tokens", fmt.Sprint(*tokens)).CombinedOutput()
		wall := time.Since(t0)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s child: %v\n%s", which, err, out)
			os.Exit(1)
		}
		line := strings.TrimSpace(string(out))
		fmt.Printf("%s process: %s wall=%v\n", which, line, wall.Round(time.Millisecond))
		lines = append(lines, line)
	}
	get := func(line, key string) string {
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, key+"="); ok {
				return v
			}
		}
		return "?"
	}
	fmt.Printf("warm-start: cold compiles=%s first-result=%s; warm compiles=%s disk-hits=%s first-result=%s\n",
		get(lines[0], "compiles"), get(lines[0], "first-result"), get(lines[1], "compiles"), get(lines[1], "disk-hits"), get(lines[1], "first-result"))
}

func runChild(start time.Time, dir, batches string, width, tokens int64) {
	w := block.NewWeights(1, width, 2*width)
	c, err := compile.New(block.Block, compile.Name("block"), compile.Cache(engine.NewCache(dir, engine.CacheOptions{})))
	check(err)
	var first time.Duration
	for i, s := range strings.Split(batches, ",") {
		b, err := strconv.ParseInt(s, 10, 64)
		check(err)
		x := tensor.Random(int64(i), ir.F32, b, tokens, width)
		_, err = c.Call(w.Args(x)...)
		check(err)
		if i == 0 {
			first = time.Since(start)
		}
	}
	st := c.Stats()
	fmt.Printf("compiles=%d disk-hits=%d traces=%d first-result=%v all-results=%v trace=%v passes=%v lower=%v load=%v\n",
		st.Compiles, st.DiskHits, st.Traces, first.Round(10*time.Microsecond), time.Since(start).Round(10*time.Microsecond),
		st.Time.Trace.Round(10*time.Microsecond), st.Time.Passes.Round(10*time.Microsecond), st.Time.Lower.Round(10*time.Microsecond), st.Time.Load.Round(10*time.Microsecond))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
