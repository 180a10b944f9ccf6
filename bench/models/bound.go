package main

import (
	"fmt"
	"math"
	"os"

	"github.com/tpucc/tpucc/bench/limits"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models"
)

// The dense decode step against the machine's bound, bench/moe's
// decode_of_bound for a dense model: the least time a step can take is its
// weights and its KV cache read once at the measured memory bandwidth, or
// its products at the FMA peak, whichever is longer. The limits are
// measured again beside each workload (bench/limits), as this machine's
// bandwidth moves from minute to minute.

// ofBound holds each dense decode workload's bound over its time.
var ofBound = map[string]float64{}

// recordBound measures the limits now and records w's fraction of the
// bound, printing how the bound is made up. Only the dense model's decode:
// a MoE step reads only its routed experts (bench/moe measures that).
func recordBound(name string, m *models.Model, w workload, req models.Request, step float64) {
	if name != "dense" || w.kind != "decode" {
		return
	}
	_, capacity, err := req.Shape()
	check(err)
	lim, err := limits.Again()
	check(err)
	weights, cache := 0.0, 0.0
	for _, p := range m.Params {
		weights += bytesOf(p.Type)
	}
	for _, t := range m.CacheTypes(int64(w.batch), int64(capacity)) {
		cache += bytesOf(t)
	}
	flops := decodeFLOPs(m, w.batch, capacity)
	bound := math.Max((weights+cache)/lim.Bandwidth, flops/lim.FMAPeak)
	ofBound[w.name] = bound / step
	fmt.Fprintf(os.Stderr, "bench/models: %s: %.2f ms a step; bound %.2f ms (%.1f MB of weights and %.1f MB of cache at %.1f GB/s: %.2f ms; %.2f GFLOP at %.0f GFLOP/s: %.2f ms): %.3f of it\n",
		w.name, step*1e3, bound*1e3, weights/1e6, cache/1e6, lim.Bandwidth/1e9, (weights+cache)/lim.Bandwidth*1e3,
		flops/1e9, lim.FMAPeak/1e9, flops/lim.FMAPeak*1e3, ofBound[w.name])
}

func bytesOf(t ir.Type) float64 {
	n, _ := t.NumElements()
	return float64(n) * float64(t.DType.Size())
}

// decodeFLOPs are a dense decode step's multiply-adds times two: every
// matrix (rank 2 or more, the tied embedding once, as the LM head) times
// batch rows, and attention's scores and weighted sum over the capacity.
func decodeFLOPs(m *models.Model, batch, capacity int) float64 {
	params := 0.0
	for _, p := range m.Params {
		if len(p.Type.Shape) >= 2 {
			n, _ := p.Type.NumElements()
			params += float64(n)
		}
	}
	attn := 0.0
	for _, l := range m.Config.Layers {
		attn += 2 * float64(m.Config.Heads*l.HeadDim*capacity)
	}
	return 2 * float64(batch) * (params + attn)
}

// boundLine is the line of the dense decode's fractions of the bound.
func boundLine() string {
	f := func(k string) string {
		if v, ok := ofBound[k]; ok {
			return fmt.Sprintf("%.3f", v)
		}
		return "n/a"
	}
	return fmt.Sprintf("bench-models-bound: dense_decode_b1_of_bound=%s dense_decode_b64_of_bound=%s", f("dense_decode_b1"), f("dense_decode_b64"))
}
