package main

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/tpucc/tpucc/bench/limits"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models"
)

// The decode steps against the machine's bound, bench/moe's
// decode_of_bound for whole models: the least time a step can take is the
// weights it needs and its KV cache read once at the measured memory
// bandwidth, or its products at the peak of their dtype, whichever is
// longer. The limits are measured again beside each workload
// (bench/limits), as this machine's bandwidth moves from minute to minute.
//
// A dense step reads every weight. A MoE step reads every weight but the
// experts, and of each MoE layer's experts those its tokens are routed to:
// top-k at batch 1, and at batch B the expected number of distinct experts
// when each token picks k of E uniformly, E·(1−(1−k/E)^B) (expected, not
// the step's own routing, which the generator does not report). Its
// products are those of the routed experts only (B·k rows a layer). An
// embedding table that is only gathered (untied input embeddings, Gemma
// 4's per-layer embeddings) is read a row a token; a tied one is the LM
// head and read whole.

// ofBound holds each decode workload's bound over its time; boundTime its
// bound in seconds and its weights' bounds one after another
// (serialSeconds).
var (
	ofBound   = map[string]float64{}
	boundTime = map[string][2]float64{}
)

// stepCost is what one decode step must at least read and compute.
type stepCost struct {
	weights, cache float64 // bytes read
	bf16, f32      float64 // FLOPs of bf16 products (vdpbf16ps) and of f32 ones
	experts        float64 // distinct experts a MoE layer reads; 0 for a dense model
}

// recordBound measures the limits now and records decode workload w's
// fraction of the bound, printing how the bound is made up.
func recordBound(m *models.Model, w workload, req models.Request, step float64) {
	if w.kind != "decode" {
		return
	}
	_, capacity, err := req.Shape()
	check(err)
	lim, err := limits.Again()
	check(err)
	c := decodeCost(m, w.batch, capacity)
	bound, mem, compute := c.seconds(lim)
	serial := serialSeconds(decodeParts(m, w.batch, capacity), lim)
	ofBound[w.name], boundTime[w.name] = bound/step, [2]float64{bound, serial}
	experts := ""
	if moe := m.Config.MoE; moe != nil {
		experts = fmt.Sprintf(" (%.1f of %d experts a layer, expected under uniform routing)", c.experts, moe.Experts)
	}
	fmt.Fprintf(os.Stderr, "bench/models: %s: %.2f ms a step; bound %.2f ms (%.1f MB of weights%s and %.1f MB of cache at %.1f GB/s: %.2f ms; "+
		"%.2f GFLOP of bf16 products at %.0f GFLOP/s and %.2f GFLOP of f32 at %.0f GFLOP/s: %.2f ms): %.3f of it; "+
		"each weight in turn at its own bound: %.2f ms, %.3f of it\n",
		w.name, step*1e3, bound*1e3, c.weights/1e6, experts, c.cache/1e6, lim.Bandwidth/1e9, mem*1e3,
		c.bf16/1e9, bf16Rate(lim)/1e9, c.f32/1e9, lim.FMAPeak/1e9, compute*1e3, ofBound[w.name], serial*1e3, serial/step)
}

// seconds is the bound under lim: the longer of the bytes at the bandwidth
// (mem) and the products at their peaks (compute), bf16 products at the
// bf16 dot peak where the host has one.
func (c stepCost) seconds(lim limits.Limits) (bound, mem, compute float64) {
	mem = (c.weights + c.cache) / lim.Bandwidth
	compute = c.bf16/bf16Rate(lim) + c.f32/lim.FMAPeak
	return math.Max(mem, compute), mem, compute
}

// bf16Rate is the rate of bf16 products: the bf16 dot peak, or without
// AVX512-BF16 the FMA peak (tpucc then widens bf16 to f32 and uses FMAs).
func bf16Rate(lim limits.Limits) float64 {
	if lim.BF16Peak > 0 {
		return lim.BF16Peak
	}
	return lim.FMAPeak
}

// decodeCost is a decode step of m at batch rows over a cache of capacity
// slots: its bytes and its FLOPs (two a multiply-add), each product in the
// dtype tpucc multiplies its weight in (models.Model.BF16Product);
// attention's scores and weighted sums are f32. It is the sum of
// decodeParts.
func decodeCost(m *models.Model, batch, capacity int) stepCost {
	var c stepCost
	for _, p := range decodeParts(m, batch, capacity) {
		c.weights, c.cache, c.bf16, c.f32 = c.weights+p.weights, c.cache+p.cache, c.bf16+p.bf16, c.f32+p.f32
	}
	if moe := m.Config.MoE; moe != nil {
		c.experts = distinctExperts(moe.Experts, moe.TopK, batch)
	}
	return c
}

// decodeParts is decodeCost weight by weight, in m.Params' order, and last
// the KV cache with attention's products.
func decodeParts(m *models.Model, batch, capacity int) []stepCost {
	var parts []stepCost
	moe := m.Config.MoE
	rows := float64(batch)
	for _, p := range m.Params {
		field := p.Name[strings.LastIndexByte(p.Name, '.')+1:]
		n, _ := p.Type.NumElements()
		elems, macs := float64(n), 0.0
		dims := p.Type.Dims()
		switch {
		case (field == "PerLayerEmbed" || field == "Embed" && !m.Config.TieEmbed) && len(dims) > 0 && dims[0] > 0:
			elems = min(rows, float64(dims[0])) * elems / float64(dims[0])
		case strings.HasSuffix(field, "Experts") && moe != nil:
			perExpert := elems / float64(moe.Experts)
			elems, macs = distinctExperts(moe.Experts, moe.TopK, batch)*perExpert, rows*float64(moe.TopK)*perExpert
		case layerRank(p) >= 2:
			macs = rows * elems
		}
		part := stepCost{weights: elems * float64(p.Type.DType.Size())}
		if m.BF16Product(p) {
			part.bf16 = 2 * macs
		} else {
			part.f32 = 2 * macs
		}
		parts = append(parts, part)
	}
	var attn stepCost
	for _, t := range m.CacheTypes(int64(batch), int64(capacity)) {
		attn.cache += bytesOf(t)
	}
	for _, l := range m.Config.Layers {
		attn.f32 += 2 * rows * 2 * float64(m.Config.Heads*l.HeadDim*capacity)
	}
	return append(parts, attn)
}

// serialSeconds is the step's parts one after another, each at its own
// bound: what a step takes whose kernels each reach their limit but do not
// overlap one weight's streaming with another's products (the LM head's
// products at batch 64 with the experts' reads, say).
func serialSeconds(parts []stepCost, lim limits.Limits) float64 {
	t := 0.0
	for _, p := range parts {
		b, _, _ := p.seconds(lim)
		t += b
	}
	return t
}

// layerRank is p's rank in one layer: a stack of layers ("layers.0:28.Q")
// has the layers' axis first.
func layerRank(p models.Param) int {
	if strings.Contains(p.Name, ":") {
		return len(p.Type.Shape) - 1
	}
	return len(p.Type.Shape)
}

// distinctExperts is the expected number of distinct experts of e that
// batch tokens pick, each k of them uniformly: an expert is missed by
// every token with probability (1−k/e)^batch.
func distinctExperts(e, k, batch int) float64 {
	if e <= 0 || batch <= 0 {
		return 0
	}
	return float64(e) * (1 - math.Pow(1-float64(k)/float64(e), float64(batch)))
}

func bytesOf(t ir.Type) float64 {
	n, _ := t.NumElements()
	return float64(n) * float64(t.DType.Size())
}

// boundKeys are the bound line's workloads, in its order.
var boundKeys = []string{"dense_decode_b1", "dense_decode_b64", "moe_decode_b1", "moe_decode_b64"}

// boundLine is the line of the decode steps' fractions of the bound, n/a
// where a workload was not run.
func boundLine(of map[string]float64) string {
	var b strings.Builder
	b.WriteString("bench-models-bound:")
	for _, k := range boundKeys {
		v := "n/a"
		if f, ok := of[k]; ok {
			v = fmt.Sprintf("%.3f", f)
		}
		fmt.Fprintf(&b, " %s_of_bound=%s", k, v)
	}
	return b.String()
}
