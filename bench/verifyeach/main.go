// Command verifyeach measures what verification after every pass costs: each
// example is compiled through the one compile path (engine.Compile, target
// tpu-v6e) with and without Passes.VerifyEach, and the medians are compared.
//
//	go run ./bench/verifyeach
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/passes"
)

func main() {
	files, _ := filepath.Glob("examples/*.tir")
	if len(files) == 0 {
		fail(fmt.Errorf("no examples/*.tir: run from the repository root"))
	}
	worst := 0.0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			fail(err)
		}
		off, on := median(src, file, false), median(src, file, true)
		ratio := float64(on) / float64(off)
		worst = max(worst, ratio)
		fmt.Printf("%-32s without %8.3f ms  verify-each %8.3f ms  ratio %.2f\n", file,
			ms(off), ms(on), ratio)
	}
	fmt.Printf("bench-verifyeach: worst_ratio=%.2f\n", worst)
}

// median compiles src 25 times (after 3 warm-up runs) and returns the median
// time of engine.Compile alone (parsing excluded).
func median(src []byte, file string, verify bool) time.Duration {
	var ts []time.Duration
	for i := range 28 {
		m, err := tir.Parse(file, src)
		if err != nil {
			fail(err)
		}
		t0 := time.Now()
		if _, _, err := engine.Compile(m, engine.Config{Target: "tpu-v6e", Passes: passes.Options{VerifyEach: verify}}); err != nil {
			fail(err)
		}
		if i >= 3 {
			ts = append(ts, time.Since(t0))
		}
	}
	slices.Sort(ts)
	return ts[len(ts)/2]
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "verifyeach:", err)
	os.Exit(1)
}
