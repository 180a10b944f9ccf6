// Command compiletime measures how build time grows with program size: what
// tpucc build does (parse, the default pipeline for the target, the target's
// checks, lowering to StableHLO) on chains of adds, wide programs of
// independent lanes, and examples/transformer_block.tir stacked 1 to 32
// times, for tpu-v6e and cpu, with the time of each pass.
//
//	go run ./bench/compiletime                 # chains and wide programs of 1k to 32k instructions
//	go run ./bench/compiletime -max 8192 -reps 1
//
// Each figure is the least of -reps runs. Times are wall-clock per stage;
// "cpu" is the processor time the whole build took (the process's user and
// system time, the garbage collector's included), which other jobs on a
// shared machine disturb far less than the wall clock. The growth is the
// worst ratio of cpu times between a program and one of half its size, over
// the pairs whose smaller program has at least 1,000 instructions; the goal
// is at most 2.3 (linear is 2). The last line is
//
//	bench-compiletime: growth=R block28_s=S
//
// with S the wall-clock build time of the 28-layer stack for tpu-v6e, in
// seconds.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/passes"
)

// result is one build, the fastest of the runs.
type result struct {
	family, target string
	size           int // instructions asked for, or layers
	instrs         int // instructions of the parsed function
	parse, lower   time.Duration
	steps          []passes.PassTime
	check          time.Duration // the target's checks (engine.Compile times them with the passes)
	total          time.Duration
	cpu            time.Duration
}

func main() {
	maxSize := flag.Int("max", 32768, "largest chain and wide program, in instructions")
	reps := flag.Int("reps", 3, "runs of each build; the fastest counts")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	families := flag.String("families", "chain,wide,block", "the families to build")
	targets := flag.String("targets", "tpu-v6e,cpu", "the targets to build for")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	block, err := loadBlock("examples/transformer_block.tir")
	if err != nil {
		fail(fmt.Errorf("%v (run from the repository root)", err))
	}
	want := func(list *string, x string) bool { return slices.Contains(strings.Split(*list, ","), x) }
	var all []result
	for _, target := range strings.Split(*targets, ",") {
		for size := 1024; size <= *maxSize; size *= 2 {
			if want(families, "chain") {
				all = append(all, measure("chain", target, size, chain(size), *reps))
			}
			if want(families, "wide") {
				all = append(all, measure("wide", target, size, wide(size), *reps))
			}
		}
		for _, layers := range []int{1, 2, 4, 8, 16, 28, 32} {
			if want(families, "block") {
				all = append(all, measure("block", target, layers, block.stack(layers), *reps))
			}
		}
	}
	if len(all) == 0 {
		fail(fmt.Errorf("nothing to build: -families %s -targets %s", *families, *targets))
	}
	printTable(all)
	growth, worst := worstGrowth(all)
	fmt.Printf("\nworst doubling: %s\n", worst)
	block28 := 0.0
	for _, r := range all {
		if r.family == "block" && r.size == 28 && r.target == "tpu-v6e" {
			block28 = r.total.Seconds()
		}
	}
	fmt.Printf("bench-compiletime: growth=%.2f block28_s=%.3f\n", growth, block28)
}

// measure builds src for target reps times and keeps the fastest run.
func measure(family, target string, size int, src string, reps int) result {
	var best result
	for i := 0; i < reps; i++ {
		r := result{family: family, target: target, size: size}
		runtime.GC() // the garbage of the run before is not this one's
		c0 := cpuTime()
		t0 := time.Now()
		m, err := tir.Parse(family+".tir", []byte(src))
		if err != nil {
			fail(fmt.Errorf("%s %d: %v", family, size, err))
		}
		r.parse = time.Since(t0)
		r.instrs = len(m.Entry().Body.Instrs)
		cfg := engine.Config{Target: target, Passes: passes.Options{Times: &r.steps}}
		_, st, err := engine.Compile(m, cfg)
		if err != nil {
			fail(fmt.Errorf("%s %d for %s: %v", family, size, target, err))
		}
		r.total = time.Since(t0)
		r.cpu = cpuTime() - c0
		r.lower = st.Lower
		r.check = st.Passes
		for _, s := range r.steps {
			r.check -= s.Time
		}
		if i == 0 || r.cpu < best.cpu {
			best.cpu = r.cpu
		}
		if i == 0 || r.total < best.total {
			r.cpu = best.cpu
			best = r
		}
	}
	return best
}

// shortNames abbreviates pass names for the table's columns.
var shortNames = map[string]string{
	"canonicalize": "canon", "fold-constants": "fold", "moe-route": "moe", "assign-layout": "layout",
}

func printTable(all []result) {
	fmt.Printf("%-6s %-8s %6s %7s %7s", "family", "target", "size", "instrs", "parse")
	for _, s := range all[0].steps {
		name := s.Pass
		if short, ok := shortNames[name]; ok {
			name = short
		}
		fmt.Printf(" %7s", name)
	}
	fmt.Printf(" %7s %7s %8s %8s   (ms)\n", "check", "lower", "total", "cpu")
	for _, r := range all {
		fmt.Printf("%-6s %-8s %6d %7d %7.1f", r.family, r.target, r.size, r.instrs, ms(r.parse))
		for _, s := range r.steps {
			fmt.Printf(" %7.1f", ms(s.Time))
		}
		fmt.Printf(" %7.1f %7.1f %8.1f %8.1f\n", ms(r.check), ms(r.lower), ms(r.total), ms(r.cpu))
	}
}

// worstGrowth is the largest ratio of cpu times between a program and the
// one of the same family and target with half its size, among programs of
// at least 1,000 instructions, and a line saying which pair it is.
func worstGrowth(all []result) (float64, string) {
	worst, which := 0.0, "none (no program of 2,000 instructions or more)"
	for _, big := range all {
		for _, small := range all {
			if small.family != big.family || small.target != big.target || small.size*2 != big.size || small.instrs < 1000 {
				continue
			}
			ratio := big.cpu.Seconds() / small.cpu.Seconds()
			if ratio > worst {
				worst = ratio
				which = fmt.Sprintf("%s for %s, %d -> %d instructions: cpu %.1f -> %.1f ms, x%.2f",
					big.family, big.target, small.instrs, big.instrs, ms(small.cpu), ms(big.cpu), ratio)
			}
		}
	}
	return worst, which
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// cpuTime is the processor time the process has used so far.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		fail(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "compiletime:", strings.TrimSpace(err.Error()))
	os.Exit(1)
}
