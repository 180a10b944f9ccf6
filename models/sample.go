package models

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Sampler chooses each next token from the logits. The zero Sampler is
// greedy: the largest logit, the lowest id among equal ones (as argmax in
// transformers). With a Temperature > 0 it samples, after keeping the TopK
// most likely tokens (0: all) and then the smallest set whose probability
// reaches TopP (0 or 1: all), as transformers' warpers do in that order. A
// Seed makes sampling reproducible in tpucc; the draws are not torch's.
type Sampler struct {
	Temperature float64
	TopK        int
	TopP        float64
	Seed        uint64
}

// sampling is a Sampler during one generation.
type sampling struct {
	Sampler
	rng *rand.Rand
}

func (s Sampler) start() *sampling {
	return &sampling{Sampler: s, rng: rand.New(rand.NewPCG(s.Seed, 0x9e3779b97f4a7c15))}
}

// pick returns the chosen token of one row of logits.
func (s *sampling) pick(logits []float32) int {
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
	u := s.rng.Float64() * sum
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
