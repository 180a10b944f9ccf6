package main

import (
	"math"
	"slices"
	"testing"

	"github.com/tpucc/tpucc/bench/limits"
)

// TestTimePaired: each run is set against the limits measured right after
// it, not the others', and the result is the median of those fractions.
// The machine's bandwidth doubles for the second measurement only (a
// burst): that run's fraction is low, the median is not.
func TestTimePaired(t *testing.T) {
	defer func(r int) { *repeat = r }(*repeat)
	*repeat = 3
	times := []float64{0.10, 0.11, 0.12}
	bws := []float64{30e9, 60e9, 30e9}
	var calls []string
	i, j := 0, 0
	run := func() float64 { calls = append(calls, "run"); i++; return times[i-1] }
	lim := func() (limits.Limits, error) {
		calls = append(calls, "limits")
		j++
		return limits.Limits{Bandwidth: bws[j-1], FMAPeak: 200e9}, nil
	}
	// 2.7 GB of weights: 0.09 s at 30 GB/s, 0.045 at 60; the FLOPs 0.01 s.
	bound := func(l limits.Limits) float64 { return math.Max(2e9/l.FMAPeak, 2.7e9/l.Bandwidth) }
	p := timePaired(run, lim, bound)
	if want := []string{"run", "limits", "run", "limits", "run", "limits"}; !slices.Equal(calls, want) {
		t.Errorf("calls %v, want %v", calls, want)
	}
	want := []float64{0.09 / 0.10, 0.045 / 0.11, 0.09 / 0.12}
	for k := range want {
		if math.Abs(p.ratios[k]-want[k]) > 1e-12 {
			t.Errorf("run %d: fraction %v, want %v", k, p.ratios[k], want[k])
		}
	}
	if math.Abs(p.ofBound-0.75) > 1e-12 || p.seconds != 0.11 || math.Abs(p.bound-0.09) > 1e-12 || p.limits.Bandwidth != 30e9 {
		t.Errorf("got ofBound %v seconds %v bound %v bandwidth %v; want 0.75, 0.11, 0.09, 3e10", p.ofBound, p.seconds, p.bound, p.limits.Bandwidth)
	}
}
