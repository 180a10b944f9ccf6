package engine

import "fmt"

// maxExplain bounds the explain log; older lines are dropped first.
const maxExplain = 1000

// note appends a line to the explain log (and prints it with TPUCC_LOGS=cache).
// f.mu is held.
func (f *Function) note(line string) {
	if len(f.explain) == maxExplain {
		f.explain = append(f.explain[:0], f.explain[1:]...)
	}
	f.explain = append(f.explain, line)
	if logTopic("cache") {
		fmt.Fprintln(f.opts.Warn, line)
	}
}

// Explain returns the cache's decisions in order: each compile with its
// reason (the lines TPUCC_LOGS=recompiles prints), persistent loads and
// dropped entries, calls placed in a bucket, padding refused and why, and
// calls refused at the limit.
func (f *Function) Explain() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.explain...)
}

// Stats counts a Function's calls and compiles.
//
// Every call is exactly one of: a hit (it ran a program that existed, was
// found in the cache's memory or was loaded from disk), a miss (it compiled
// one), eager (LimitEager), or rejected (LimitError, LimitPanic), or it
// failed before running (a trace error). A compile is trace + passes +
// lowering of one program; Lower's compiles count in Compiles but are not
// calls. Traces counts every run of the Go function under the tracer:
// compiles trace twice (one trace stays unoptimised for padding checks),
// and each new size of a padded dimension traces once more to prove the
// bucket program fits it; a program loaded from the persistent cache is
// traced once (the key holds the trace's hash) and not compiled.
type Stats struct {
	Calls, Hits, Misses, Eager, Rejected int64
	Compiles                             int64
	MemoryHits                           int64 // programs found in the Cache's memory
	DiskHits                             int64 // programs loaded from the persistent cache
	Corrupt                              int64 // persistent entries dropped as corrupt
	Evictions                            int64 // persistent entries evicted by this function's writes
	Traces                               int64
	Programs                             int   // programs held
	Routes                               int   // exact call shapes remembered (Options.MaxRoutes)
	RouteEvictions                       int64 // call shapes forgotten to respect MaxRoutes
	Specialisations                      int   // programs that count against the recompile limit
	PaddedCalls                          int64
	// PaddedElements and RealElements count the input elements of padded
	// calls: added by padding, and real. Their ratio is the padding waste.
	PaddedElements, RealElements int64
	Time                         StageTimes
}

// Waste is the fraction of padded calls' input elements that were padding.
func (s Stats) Waste() float64 {
	if s.PaddedElements+s.RealElements == 0 {
		return 0
	}
	return float64(s.PaddedElements) / float64(s.PaddedElements+s.RealElements)
}

func (s Stats) String() string {
	return fmt.Sprintf("calls=%d hits=%d misses=%d eager=%d rejected=%d compiles=%d memory-hits=%d disk-hits=%d corrupt=%d evictions=%d traces=%d programs=%d routes=%d route-evictions=%d specialisations=%d padded-calls=%d padding-waste=%.1f%% time: trace=%v passes=%v lower=%v load=%v check=%v",
		s.Calls, s.Hits, s.Misses, s.Eager, s.Rejected, s.Compiles, s.MemoryHits, s.DiskHits, s.Corrupt, s.Evictions,
		s.Traces, s.Programs, s.Routes, s.RouteEvictions, s.Specialisations, s.PaddedCalls, 100*s.Waste(), s.Time.Trace, s.Time.Passes, s.Time.Lower, s.Time.Load, s.Time.Check)
}

// Stats returns the function's counters.
func (f *Function) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	spec, _ := f.specialisations()
	return Stats{
		Calls: f.calls.Load(), Hits: f.hits.Load(), Misses: f.misses.Load(), Eager: f.eager.Load(), Rejected: f.rejected.Load(),
		Compiles: f.compiles.Load(), MemoryHits: f.memHits.Load(), DiskHits: f.diskHits.Load(), Corrupt: f.corrupt.Load(),
		Evictions: f.evictions.Load(), Traces: f.traces.Load(), Programs: len(f.programs), Specialisations: spec,
		Routes: f.routes.len(), RouteEvictions: f.routes.evictions.Load(),
		PaddedCalls: f.padded.Load(), PaddedElements: f.paddedElems.Load(), RealElements: f.realElems.Load(), Time: f.times,
	}
}
