package models

import (
	"math"
	"slices"
)

// Sampler chooses each next token from the logits. The zero Sampler is
// greedy: the largest logit, the lowest id among equal ones (as argmax in
// transformers). With a Temperature > 0 it samples, after keeping the TopK
// most likely tokens (0: all) and then the smallest set whose probability
// reaches TopP (0 or 1: all), as transformers' warpers do in that order. A
// Seed makes sampling reproducible in tpucc; the draws are not torch's. The
// number that chooses a row's token at a step depends only on the seed, the
// row and the step (draw), so that the host and the compiled decode loop
// (decodeloop.go) choose alike.
type Sampler struct {
	Temperature float64
	TopK        int
	TopP        float64
	Seed        uint64
}

// sampling reports whether s samples rather than choosing greedily.
func (s Sampler) sampling() bool { return s.Temperature > 0 }

// pick returns the token chosen from one row's logits at a step (0: the
// token chosen from prefill's logits).
func (s Sampler) pick(logits []float32, row, step int) int {
	if s.Temperature <= 0 {
		return argmax(logits)
	}
	type cand struct {
		id int
		p  float64
	}
	c := make([]cand, len(logits))
	for i, l := range logits {
		c[i] = cand{i, float64(l) / s.Temperature}
	}
	// Most likely first; equal logits keep id order.
	slices.SortStableFunc(c, func(a, b cand) int {
		switch {
		case a.p > b.p:
			return -1
		case a.p < b.p:
			return 1
		}
		return 0
	})
	if s.TopK > 0 && s.TopK < len(c) {
		c = c[:s.TopK]
	}
	top, sum := c[0].p, 0.0
	for i := range c {
		c[i].p = math.Exp(c[i].p - top)
		sum += c[i].p
	}
	for i := range c {
		c[i].p /= sum
	}
	if s.TopP > 0 && s.TopP < 1 {
		acc := 0.0
		for i := range c {
			acc += c[i].p
			if acc >= s.TopP {
				c = c[:i+1]
				break
			}
		}
	}
	sum = 0
	for _, x := range c {
		sum += x.p
	}
	u := draw(s.Seed, row, step) * sum
	for _, x := range c {
		if u < x.p {
			return x.id
		}
		u -= x.p
	}
	return c[len(c)-1].id
}

func argmax(xs []float32) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

// draw is the uniform number in [0, 1) that chooses row's token at step for
// seed: a counter-based hash (murmur3's 32-bit finaliser, chained over the
// seed's halves, the step and the row) rather than a generator's state, so
// that a compiled loop computes the same number from the same counters with
// 32-bit integer operations (drawTraced). It has 24 bits, exact in f32.
func draw(seed uint64, row, step int) float64 {
	h := fmix32(uint32(seed>>32) ^ fmix32(uint32(seed)+uint32(step)*drawStep))
	h = fmix32(h + uint32(row)*drawRow)
	return float64(h>>8) / (1 << 24)
}

// The odd multipliers that spread the step and the row over 32 bits (the
// golden ratio's and murmur3's).
const (
	drawStep = 0x9e3779b9
	drawRow  = 0x85ebca77
)

// fmix32 is murmur3's finaliser: every input bit changes about half of the
// output bits, and it is a bijection.
func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
