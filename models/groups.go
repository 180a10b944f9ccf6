package models

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/tpucc/tpucc/models/hf"
)

// A step runs its decoder layers as loops: consecutive layers of the same
// kind form a group whose weights are stacked per field ([count, …]) and
// which one while op computes, so a program's size and its compile time do
// not grow with the model's depth. Families that alternate kinds of layers
// (Gemma's five sliding layers then a full one) loop over the repeating
// pattern: the loop's body is period layers, each with its own stacks.

// unrollEnv, set to 1, makes every layer its own group: the steps are
// unrolled as before layers were loops (to measure the difference).
const unrollEnv = "TPUCC_UNROLL_LAYERS"

// maxPeriod is the longest repeating pattern of layers a loop's body holds.
const maxPeriod = 8

// group is layers start … start+period·count−1 computed as count trips of a
// body of period layers (its slots); layer start+it·period+s is slot s of
// trip it. A group of count 1 is one layer computed unrolled.
type group struct{ start, period, count int }

func (g group) looped() bool        { return g.count > 1 }
func (g group) layer(s, it int) int { return g.start + it*g.period + s }

// spec names slot s's stacked weights as a Python slice of the layers:
// "layers.0:28" (layers 0 to 27), "layers.0:24:6" (0, 6, 12, 18).
func (g group) spec(s int) string {
	from, to := g.start+s, g.start+g.period*g.count
	if g.period == 1 {
		return fmt.Sprintf("layers.%d:%d", from, to)
	}
	return fmt.Sprintf("layers.%d:%d:%d", from, to, g.period)
}

// unrolled reports whether the environment asks for unrolled layers.
func unrolled() bool { return os.Getenv(unrollEnv) == "1" }

// layerGroups splits c's layers into groups, greedily from the first: at
// each layer the period whose repetitions cover the most layers (the
// shortest on a tie), when it repeats at least twice; else the layer alone.
func layerGroups(c *hf.Config, unroll bool) []group {
	kinds := layerKinds(c)
	var out []group
	for i := 0; i < len(kinds); {
		best := group{start: i, period: 1, count: 1}
		for p := 1; !unroll && p <= maxPeriod && i+2*p <= len(kinds); p++ {
			if r := repeats(kinds, i, p); r >= 2 && p*r > best.period*best.count {
				best = group{start: i, period: p, count: r}
			}
		}
		out = append(out, best)
		i += best.period * best.count
	}
	return out
}

// repeats counts how many times kinds[i:i+p] repeats from i; 0 when one of
// its layers cannot loop.
func repeats(kinds []string, i, p int) int {
	if slices.Contains(kinds[i:i+p], "") {
		return 0
	}
	r := 1
	for i+(r+1)*p <= len(kinds) && slices.Equal(kinds[i+r*p:i+(r+1)*p], kinds[i:i+p]) {
		r++
	}
	return r
}

// layerKinds describes each layer by everything a loop's body fixes: its
// hf.Layer facts and its weights' shapes. Two layers of one kind compute the
// same function of their weights. A layer that cannot be in a loop has "":
// one that reads another layer's keys and values (Gemma 4's KV sharing: it
// runs after the loop, on the loop's stacked cache). MoE layers loop like
// the others: moe-route rewrites their dense block inside the loop's body.
func layerKinds(c *hf.Config) []string {
	layout := c.Layout()
	out := make([]string, len(c.Layers))
	for i, l := range c.Layers {
		if l.KVFrom >= 0 {
			continue
		}
		shapes := layout.Layers[i]
		fields := make([]string, 0, len(shapes))
		for f, s := range shapes {
			fields = append(fields, fmt.Sprint(f, s))
		}
		slices.Sort(fields)
		out[i] = fmt.Sprintf("%+v %s", l, strings.Join(fields, " "))
	}
	return out
}

// cacheRef is where a layer's keys and values are among a step's cache
// tensors: entry (keys at 2·entry, values at 2·entry+1), and row in that
// entry's stack, or −1 when the entry is one layer's [B, KVH, Cap, D].
type cacheRef struct{ entry, row int }

// cacheRefs places every layer's keys and values: a looped slot's layers
// share one stacked entry [count, B, KVH, Cap, D]; an unrolled layer has its
// own; a layer that shares keys and values (KVFrom) reads its source's.
func cacheRefs(c *hf.Config, groups []group) []cacheRef {
	out := make([]cacheRef, len(c.Layers))
	n := 0
	for _, g := range groups {
		for s := range g.period {
			for it := range g.count {
				i := g.layer(s, it)
				row := -1
				if g.looped() {
					row = it
				}
				if l := c.Layers[i]; l.KVFrom >= 0 {
					out[i] = out[l.KVFrom]
					continue
				}
				out[i] = cacheRef{entry: n, row: row}
				if !g.looped() || it == g.count-1 {
					n++
				}
			}
		}
	}
	return out
}
