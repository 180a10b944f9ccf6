// Package steps prints where the llvm backend's programs spent their time:
// each program's longest plan steps, for the benchmarks' -steps flag.
package steps

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tpucc/tpucc/backend/llvm"
	"github.com/tpucc/tpucc/engine"
)

// Print writes, for each program c holds that ran on the llvm backend, its n
// longest steps over the runs so far (warm-up included): time per call and
// share of the program's step time. prefix starts each program's line.
func Print(w io.Writer, prefix string, c *engine.Cache, n int) {
	if n <= 0 {
		return
	}
	for _, exe := range c.Executables() {
		x, ok := exe.Exec.(*llvm.Executable)
		if !ok {
			continue
		}
		st := x.StepTimes()
		var all time.Duration
		for _, s := range st {
			all += s.Total
		}
		if all == 0 {
			continue
		}
		slices.SortStableFunc(st, func(a, b llvm.StepTime) int { return cmp.Compare(b.Total, a.Total) })
		fmt.Fprintf(w, "%s%s: %.3f s in %d steps; the longest:\n", prefix, exe.Entry.Name, all.Seconds(), len(st))
		for _, s := range st[:min(n, len(st))] {
			per := time.Duration(0)
			if s.Calls > 0 {
				per = s.Total / time.Duration(s.Calls)
			}
			fmt.Fprintf(w, "  %5d %-6s %-44s %7d calls %9.3f ms/call %5.1f%%\n", s.Step, s.Kernel, s.What, s.Calls, per.Seconds()*1e3, 100*s.Total.Seconds()/all.Seconds())
		}
	}
}
