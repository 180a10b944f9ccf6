package passes

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// fuse groups instructions of a function body into fusion instructions, the
// kernels of the cost model and of the CPU backend. It decides groups first
// (plan, below) and then builds one fusion per group of two or more
// kernels' worth of work (build, fuse_build.go).
//
// The rules, as XLA's instruction fusion has them:
//
//	Pattern: elementwise(elementwise(x)) -> loop fusion (broadcast, reshape, slice, concat, pad, iota, convert, relu/gelu/silu count as elementwise; transposes next to a dot_general are left to assign-layout)
//	Pattern: reduce(elementwise(x))      -> input fusion rooted at the reduction (a reduction never feeds a consumer inside its fusion)
//	Pattern: elementwise(softmax|layer_norm|rms_norm(elementwise(x))) -> input fusion around the composite
//	Pattern: elementwise(dot_general(a, b)) -> output fusion (bias, activation, residual epilogue); dot operands are never fused
//	Pattern: f(x), g(x) independent      -> one multi-output fusion reading x once (sibling)
//
// A producer joins its consumer's group only when every user of the producer
// is in that group, so nothing is computed twice: an expensive producer
// (dot_general, a reduction, a transcendental) with consumers in two groups
// stays apart. Only broadcasts, iotas and constants are duplicated, into
// every fusion that reads them, since recomputing them costs nothing and
// reading their small operand instead saves their whole size. A group holds at
// most one dot_general, reduction or normalising composite (two sibling
// reductions of the same operand over the same axes excepted), and merges
// only when the bytes saved, GroupBytes(a)+GroupBytes(b)-GroupBytes(a∪b), are
// positive. A group's size is not bounded: a fusion streams its tiles through
// local memory (a TPU core's VMEM, the CPU's caches) and holds none of its
// tensors there whole, as XLA's fusions do; the CPU backend computes an
// elementwise value where it is used whatever the grouping. Without a target
// the bytes are logical (dtype size times elements, no tiling). Programs with
// symbolic shapes are left as they are (their bytes are unknown).
func fuse(f *ir.Func, c *Context) (bool, error) {
	p := newFusePlan(f, c)
	if p == nil {
		return false, nil
	}
	for round := 0; ; round++ {
		if round == maxFuseRounds {
			return false, fmt.Errorf("fuse did not reach a fixed point in %d rounds", maxFuseRounds)
		}
		changed := p.producerConsumer()
		if p.siblings() {
			changed = true
		}
		if !changed {
			break
		}
	}
	return p.build(), nil
}

// maxFuseRounds caps the rounds of merging. A round merges every chain it
// meets from the root down and every sibling pair it can; a round changes
// something only when the one before made new merges possible (a producer
// whose users a sibling merge joined), so programs settle in two or three.
// Each round merges at least two groups, so the loop ends anyway; the cap
// turns a bug that keeps it going into an error, as canonicalize's does.
const maxFuseRounds = 16

// fuseKind classifies an instruction for fusion.
type fuseKind uint8

const (
	fkNone   fuseKind = iota // never fused (calls, regions, gathers and scatters, sorts, ...; transposes of a dot's layout)
	fkLoop                   // elementwise-like: fuses freely
	fkReduce                 // a reduction: roots an input fusion, feeds nothing inside it
	fkNorm                   // softmax, log_softmax, layer_norm, rms_norm: one heavy op with elementwise output
	fkDot                    // dot_general: roots an output fusion
	fkConst                  // constants: cloned into the fusions that read them
)

// classify reads the op's fusion class from ir's table. An op without one
// is a broken table, which TestEveryOpHasFusionClass catches; it is kept
// alone rather than guessed at.
func classify(in *ir.Instr, uses *ir.Uses) fuseKind {
	switch in.Op.Info().Fuse {
	case ir.FuseConst:
		return fkConst
	case ir.FuseLoop:
		// Movement ops index their operand per output element: a loop
		// fusion computes them in place, as XLA's loop fusions do.
		if len(in.Regions) > 0 || narrowOperand(in, uses) {
			return fkNone
		}
		return fkLoop
	case ir.FuseLayout:
		if layoutChange(in, uses) {
			return fkNone
		}
		return fkLoop
	case ir.FuseReduce:
		return fkReduce
	case ir.FuseNorm:
		return fkNorm
	case ir.FuseDot:
		return fkDot
	}
	return fkNone
}

// narrowOperand: a convert that widens to f32 a value just rounded to
// bf16 or f16 (convert(convert(x, bf16), f32): a bf16 product's
// activations, as models' linear writes it) or sliced from a narrow one
// (convert(slice(cache), f32): a fresh prefill's causal blocks of a bf16
// KV cache, models' attention), read by dot_generals only. Fused, its
// group would write the widened f32 value; apart, the group ends at the
// narrow one, which the products read at its width (the CPU backend's
// bf16 × bf16 kernels: half the bytes, vdpbf16ps).
func narrowOperand(in *ir.Instr, uses *ir.Uses) bool {
	if in.Op != ir.OpConvert || in.Results[0].Type.DType != ir.F32 {
		return false
	}
	src := in.Args[0]
	if dt := src.Type.DType; dt != ir.BF16 && dt != ir.F16 || src.Def == nil || src.Def.Op != ir.OpConvert && src.Def.Op != ir.OpSlice {
		return false
	}
	users := uses.Users(in.Results[0])
	for _, u := range users {
		if u.Op != ir.OpDotGeneral {
			return false
		}
	}
	return len(users) > 0
}

// layoutChange: a transpose next to a dot_general is a layout change that
// assign-layout, after fuse, folds into dot_general's dimension numbers,
// which it cannot do inside a fusion body; a reshape beside such a
// transpose is part of the change. Other transposes and reshapes fuse.
func layoutChange(in *ir.Instr, uses *ir.Uses) bool {
	if in.Op == ir.OpTranspose {
		return layoutBound(in, uses)
	}
	if d := in.Args[0].Def; d != nil && d.Op == ir.OpTranspose && layoutBound(d, uses) {
		return true
	}
	for _, u := range usersOf(in, uses) {
		if u.Op == ir.OpTranspose && layoutBound(u, uses) {
			return true
		}
	}
	return false
}

// layoutBound: a transpose that reads a dot_general's result or feeds a
// dot_general.
func layoutBound(t *ir.Instr, uses *ir.Uses) bool {
	if d := t.Args[0].Def; d != nil && d.Op == ir.OpDotGeneral {
		return true
	}
	for _, u := range usersOf(t, uses) {
		if u.Op == ir.OpDotGeneral {
			return true
		}
	}
	return false
}

// usersOf lists the instructions that read in's results (more than once
// when they read several).
func usersOf(in *ir.Instr, uses *ir.Uses) []*ir.Instr {
	if len(in.Results) == 1 {
		return uses.Users(in.Results[0])
	}
	var out []*ir.Instr
	for _, r := range in.Results {
		out = append(out, uses.Users(r)...)
	}
	return out
}

// duplicable ops are cloned into every fusion that reads them.
func duplicable(in *ir.Instr) bool {
	return in.Op == ir.OpConstant || in.Op == ir.OpBroadcast || in.Op == ir.OpIota
}

// producerConsumer merges producers into their consumers' groups, visiting
// consumers from the end of the body so a chain grows from its root.
func (p *fusePlan) producerConsumer() bool {
	changed := false
	for ci := len(p.instrs) - 1; ci >= 0; ci-- {
		k := p.kind[ci]
		if k == fkNone || k == fkConst || k == fkDot {
			continue // nothing fuses into a dot's operands
		}
		if p.willClone(ci) {
			continue // its readers each get a copy; its producer stays shared
		}
		for _, a := range p.instrs[ci].Args {
			pi, ok := p.at(a.Def)
			if !ok {
				continue
			}
			gp, gc := p.find(pi), p.find(ci)
			if gp == gc {
				continue
			}
			pk := p.kind[pi]
			if pk == fkNone || pk == fkConst || pk == fkReduce {
				continue
			}
			if !p.allUsersIn(pi, gc) {
				if (pk == fkDot || p.hasTranscendental(pi)) && !p.kept[pi] {
					p.kept[pi] = true
					p.c.Count("expensive-shared-kept")
				}
				continue
			}
			if p.tryMerge(gp, gc, false) {
				changed = true
			}
		}
	}
	return changed
}

// siblings merges independent groups that read a common value (a parameter
// or an instruction result), so the value is read once. Every pair of a
// value's readers is a candidate, in reader order; two shortcuts give the
// same merges faster: a reader whose group holds every later reader has
// nothing to try, and a pair of groups that failed to merge fails again
// until one of the two changes.
func (p *fusePlan) siblings() bool {
	readers := make([][]int, p.f.NumValues())
	var order []*ir.Value
	for i, in := range p.instrs {
		if k := p.kind[i]; k == fkNone || k == fkConst || duplicable(in) {
			continue // broadcasts and iotas are cloned into their readers instead
		}
		for _, a := range in.Args {
			if a.Def != nil && a.Def.Op == ir.OpConstant {
				continue
			}
			if len(readers[a.ID]) == 0 {
				order = append(order, a)
			}
			readers[a.ID] = append(readers[a.ID], i)
		}
	}
	s := siblingScan{p: p, ahead: make([]int, len(p.instrs)), failed: make([]int, len(p.instrs))}
	changed := false
	for _, v := range order {
		if rs := readers[v.ID]; len(rs) > 1 && s.value(rs) {
			changed = true
		}
	}
	return changed
}

// siblingScan tries the pairs of one value's readers.
type siblingScan struct {
	p       *fusePlan
	ahead   []int // by label: readers after the current one that the group holds
	touched []int // labels with a nonzero ahead
	failed  []int // by label: the round in which merging with it failed
	round   int   // bumped whenever the current reader's group changes
}

func (s *siblingScan) value(rs []int) bool {
	p := s.p
	for _, i := range rs[1:] {
		s.count(p.find(i), 1)
	}
	changed := false
	for x := range rs {
		ga := p.find(rs[x])
		if x > 0 {
			s.count(ga, -1)
		}
		if !p.fusible(ga) || s.ahead[ga] == len(rs)-x-1 {
			continue // every pair with rs[x] is skipped below
		}
		if s.row(rs, x) {
			changed = true
		}
	}
	for _, g := range s.touched {
		s.ahead[g] = 0
	}
	s.touched = s.touched[:0]
	return changed
}

func (s *siblingScan) count(g, n int) {
	if s.ahead[g] == 0 {
		s.touched = append(s.touched, g)
	}
	s.ahead[g] += n
}

// row tries merging rs[x]'s group with each later reader's.
func (s *siblingScan) row(rs []int, x int) bool {
	p := s.p
	s.round++
	changed := false
	for y := x + 1; y < len(rs); y++ {
		p.steps++
		ga, gb := p.find(rs[x]), p.find(rs[y])
		if ga == gb || !p.fusible(ga) || !p.fusible(gb) {
			continue
		}
		if s.failed[gb] == s.round {
			continue
		}
		if !p.tryMerge(ga, gb, true) {
			s.failed[gb] = s.round
			continue
		}
		p.c.Count("sibling")
		changed = true
		s.count(gb, s.ahead[ga])
		s.ahead[ga] = 0
		s.round++
	}
	return changed
}

// willClone: instruction i is a broadcast or iota alone in its group whose
// readers are in several groups, so build clones it into each of them.
func (p *fusePlan) willClone(i int) bool {
	if !duplicable(p.instrs[i]) || p.size(p.find(i)) != 1 {
		return false
	}
	for _, u := range p.users[i] {
		if p.find(u) != p.find(p.users[i][0]) {
			return true
		}
	}
	return false
}

func (p *fusePlan) allUsersIn(i, g int) bool {
	for _, u := range p.users[i] {
		if p.find(u) != g {
			return false
		}
	}
	return len(p.users[i]) > 0
}

func (p *fusePlan) hasTranscendental(i int) bool {
	return p.instrs[i].Op.Info().Transcendental
}

// tryMerge merges group a into group b if the result is legal and saves
// bytes. sibling says a and b must be independent (neither reads the
// other); otherwise a produces for b.
func (p *fusePlan) tryMerge(a, b int, sibling bool) bool {
	ga, gb := p.groups[a], p.groups[b]
	if ga.heavy+gb.heavy > 1 && (!sibling || !p.alikeReductions(ga, gb)) {
		return false
	}
	if !p.order.acyclic(p, a, b, sibling) {
		return false
	}
	if p.size(a) <= p.size(b) {
		p.preview(a, b)
	} else {
		p.preview(b, a)
	}
	ba, bb, bu := ga.traffic.bytes(), gb.traffic.bytes(), p.unionBytes(&p.delta)
	if ba < 0 || bb < 0 || bu < 0 {
		return false
	}
	if ba+bb-bu <= 0 {
		return false
	}
	p.commit(a, b)
	return true
}

// alikeReductions: every heavy member of x and y is a reduction of one
// operand over the same axes, so they share one input fusion's loop. A group
// with several heavy members has only such reductions (merges keep it so),
// so comparing one of each group's decides for all.
func (p *fusePlan) alikeReductions(x, y *fuseGroup) bool {
	for _, g := range []*fuseGroup{x, y} {
		if g.heavy > 0 && p.kind[g.rep] != fkReduce {
			return false
		}
	}
	if x.heavy == 0 || y.heavy == 0 {
		return true
	}
	return sameReduction(p.instrs[x.rep], p.instrs[y.rep])
}

func sameReduction(in, other *ir.Instr) bool {
	x, y := in.Attr.(*ir.AxesAttr), other.Attr.(*ir.AxesAttr)
	if in.Args[0] != other.Args[0] || len(x.Axes) != len(y.Axes) || x.KeepDims != y.KeepDims {
		return false
	}
	for k := range x.Axes {
		if x.Axes[k] != y.Axes[k] {
			return false
		}
	}
	return true
}
