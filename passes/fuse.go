package passes

import (
	"sort"

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
// reductions of the same operand over the same axes excepted), never grows
// past the size cap (Target.LocalMemory, or defaultFusionCap without a
// target), and merges only when the bytes saved,
// GroupBytes(a)+GroupBytes(b)-GroupBytes(a∪b), are positive. Without a target
// the bytes are logical (dtype size times elements, no tiling). Programs with
// symbolic shapes are left as they are (their bytes are unknown).
func fuse(f *ir.Func, c *Context) (bool, error) {
	p := newFusePlan(f, c)
	if p == nil {
		return false, nil
	}
	for iter := 0; iter < 4; iter++ {
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

// defaultFusionCap bounds a fusion's traffic without a target: about a TPU
// core's VMEM on v5e.
const defaultFusionCap = 16 << 20

// fuseKind classifies an instruction for fusion.
type fuseKind uint8

const (
	fkNone   fuseKind = iota // never fused (calls, indexing, slices, concat, transposes, ...)
	fkLoop                   // elementwise-like: fuses freely
	fkReduce                 // a reduction: roots an input fusion, feeds nothing inside it
	fkNorm                   // softmax, log_softmax, layer_norm, rms_norm: one heavy op with elementwise output
	fkDot                    // dot_general: roots an output fusion
	fkConst                  // constants: cloned into the fusions that read them
)

// classify reads the op's fusion class from ir's table. An op without one
// is a broken table, which TestEveryOpHasFusionClass catches; it is kept
// alone rather than guessed at.
func classify(in *ir.Instr) fuseKind {
	switch in.Op.Info().Fuse {
	case ir.FuseConst:
		return fkConst
	case ir.FuseLoop:
		// Movement ops index their operand per output element: a loop
		// fusion computes them in place, as XLA's loop fusions do.
		if len(in.Regions) > 0 {
			return fkNone
		}
		return fkLoop
	case ir.FuseLayout:
		if layoutChange(in) {
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

// layoutChange: a transpose next to a dot_general is a layout change that
// assign-layout, after fuse, folds into dot_general's dimension numbers,
// which it cannot do inside a fusion body; a reshape beside such a
// transpose is part of the change. Other transposes and reshapes fuse.
func layoutChange(in *ir.Instr) bool {
	if in.Op == ir.OpTranspose {
		return layoutBound(in)
	}
	if d := in.Args[0].Def; d != nil && d.Op == ir.OpTranspose && layoutBound(d) {
		return true
	}
	for _, u := range usersOf(in) {
		if u.Op == ir.OpTranspose && layoutBound(u) {
			return true
		}
	}
	return false
}

// layoutBound: a transpose that reads a dot_general's result or feeds a
// dot_general.
func layoutBound(t *ir.Instr) bool {
	if d := t.Args[0].Def; d != nil && d.Op == ir.OpDotGeneral {
		return true
	}
	for _, u := range usersOf(t) {
		if u.Op == ir.OpDotGeneral {
			return true
		}
	}
	return false
}

// usersOf lists the instructions of in's block that read its results.
func usersOf(in *ir.Instr) []*ir.Instr {
	var out []*ir.Instr
	for _, u := range in.Block.Instrs {
		for _, a := range u.Args {
			if a.Def == in {
				out = append(out, u)
				break
			}
		}
	}
	return out
}

// duplicable ops are cloned into every fusion that reads them.
func duplicable(in *ir.Instr) bool {
	return in.Op == ir.OpConstant || in.Op == ir.OpBroadcast || in.Op == ir.OpIota
}

// fusePlan is the grouping being decided: group[i] is the group of the body's
// instruction i (its own index until merged), members[g] the sorted indices.
type fusePlan struct {
	f       *ir.Func
	c       *Context
	instrs  []*ir.Instr
	index   map[*ir.Instr]int
	kind    []fuseKind
	group   []int
	members [][]int
	users   [][]int // by instruction index: indices of the top-level users (the return included)
	cap     int64
	built   []*ir.Instr  // fusions made so far, whose operands later groups may rename
	kept    map[int]bool // expensive producers counted as kept apart
}

func newFusePlan(f *ir.Func, c *Context) *fusePlan {
	p := &fusePlan{f: f, c: c, instrs: f.Body.Instrs, index: map[*ir.Instr]int{}, cap: defaultFusionCap, kept: map[int]bool{}}
	if c.Target != nil && c.Target.LocalMemory() > 0 {
		p.cap = c.Target.LocalMemory()
	}
	n := len(p.instrs)
	p.kind = make([]fuseKind, n)
	p.group = make([]int, n)
	p.members = make([][]int, n)
	p.users = make([][]int, n)
	for i, in := range p.instrs {
		p.index[in] = i
		p.kind[i] = classify(in)
		p.group[i] = i
		p.members[i] = []int{i}
		for _, r := range in.Results {
			for _, d := range r.Type.Shape {
				if d.Symbolic() {
					return nil
				}
			}
		}
	}
	for i, in := range p.instrs {
		for _, a := range in.Args {
			if a.Def != nil && a.Def.Block == f.Body {
				j := p.index[a.Def]
				if len(p.users[j]) == 0 || p.users[j][len(p.users[j])-1] != i {
					p.users[j] = append(p.users[j], i)
				}
			}
		}
	}
	return p
}

// fusible reports whether group g may take part in a fusion at all.
func (p *fusePlan) fusible(g int) bool {
	for _, i := range p.members[g] {
		if p.kind[i] == fkNone {
			return false
		}
	}
	return true
}

// heavy lists the heavy members (dot, reduction, norm) of group g.
func (p *fusePlan) heavy(g int) []int {
	var out []int
	for _, i := range p.members[g] {
		if k := p.kind[i]; k == fkDot || k == fkReduce || k == fkNorm {
			out = append(out, i)
		}
	}
	return out
}

// producerConsumer merges producers into their consumers' groups, visiting
// consumers from the end of the body so a chain grows from its root.
func (p *fusePlan) producerConsumer() bool {
	changed := false
	for ci := len(p.instrs) - 1; ci >= 0; ci-- {
		cin := p.instrs[ci]
		k := p.kind[ci]
		if k == fkNone || k == fkConst || k == fkDot {
			continue // nothing fuses into a dot's operands
		}
		if p.willClone(ci) {
			continue // its readers each get a copy; its producer stays shared
		}
		for _, a := range cin.Args {
			if a.Def == nil || a.Def.Block != p.f.Body {
				continue
			}
			pi := p.index[a.Def]
			gp, gc := p.group[pi], p.group[ci]
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
// or an instruction result), so the value is read once.
func (p *fusePlan) siblings() bool {
	changed := false
	readers := map[*ir.Value][]int{}
	var order []*ir.Value
	for i, in := range p.instrs {
		if k := p.kind[i]; k == fkNone || k == fkConst || duplicable(in) {
			continue // broadcasts and iotas are cloned into their readers instead
		}
		for _, a := range in.Args {
			if a.Def != nil && a.Def.Op == ir.OpConstant {
				continue
			}
			if _, seen := readers[a]; !seen {
				order = append(order, a)
			}
			readers[a] = append(readers[a], i)
		}
	}
	for _, v := range order {
		rs := readers[v]
		for x := 0; x < len(rs); x++ {
			for y := x + 1; y < len(rs); y++ {
				ga, gb := p.group[rs[x]], p.group[rs[y]]
				if ga == gb || !p.fusible(ga) || !p.fusible(gb) {
					continue
				}
				if p.tryMerge(ga, gb, true) {
					p.c.Count("sibling")
					changed = true
				}
			}
		}
	}
	return changed
}

// willClone: instruction i is a broadcast or iota alone in its group whose
// readers are in several groups, so build clones it into each of them.
func (p *fusePlan) willClone(i int) bool {
	if !duplicable(p.instrs[i]) || len(p.members[p.group[i]]) != 1 {
		return false
	}
	for _, u := range p.users[i] {
		if p.group[u] != p.group[p.users[i][0]] {
			return true
		}
	}
	return false
}

func (p *fusePlan) allUsersIn(i, g int) bool {
	for _, u := range p.users[i] {
		if p.group[u] != g {
			return false
		}
	}
	return len(p.users[i]) > 0
}

func (p *fusePlan) hasTranscendental(i int) bool {
	switch p.instrs[i].Op {
	case ir.OpExp, ir.OpLog, ir.OpLog1p, ir.OpExpm1, ir.OpTanh, ir.OpSigmoid, ir.OpSin, ir.OpCos,
		ir.OpErf, ir.OpPow, ir.OpGelu, ir.OpSilu, ir.OpAtan2, ir.OpSqrt, ir.OpRsqrt:
		return true
	}
	return false
}

// tryMerge merges groups a and b if the result is legal, fits the cap and
// saves bytes. sibling says a and b must be independent (neither reads the
// other); otherwise a produces for b.
func (p *fusePlan) tryMerge(a, b int, sibling bool) bool {
	union := append(append([]int(nil), p.members[a]...), p.members[b]...)
	sort.Ints(union)
	ha, hb := p.heavy(a), p.heavy(b)
	if len(ha)+len(hb) > 1 {
		if !sibling || !sameReductions(p, append(ha, hb...)) {
			return false
		}
	}
	if sibling && (p.reaches(a, b) || p.reaches(b, a)) {
		return false
	}
	if !sibling && p.cycleThroughOthers(a, b) {
		return false
	}
	ba, bb, bu := p.bytes(p.members[a]), p.bytes(p.members[b]), p.bytes(union)
	if ba < 0 || bb < 0 || bu < 0 {
		return false
	}
	if bu > p.cap {
		p.c.Count("capped")
		return false
	}
	if ba+bb-bu <= 0 {
		return false
	}
	for _, i := range p.members[a] {
		p.group[i] = b
	}
	p.members[b] = union
	p.members[a] = nil
	return true
}

// sameReductions: every heavy member is a reduction of one operand over the
// same axes, so they share one input fusion's loop.
func sameReductions(p *fusePlan, hs []int) bool {
	first := p.instrs[hs[0]]
	for _, i := range hs {
		in := p.instrs[i]
		if p.kind[i] != fkReduce || in.Args[0] != first.Args[0] {
			return false
		}
		x, y := in.Attr.(*ir.AxesAttr), first.Attr.(*ir.AxesAttr)
		if len(x.Axes) != len(y.Axes) || x.KeepDims != y.KeepDims {
			return false
		}
		for k := range x.Axes {
			if x.Axes[k] != y.Axes[k] {
				return false
			}
		}
	}
	return true
}

// succ lists the groups that read a result of group g.
func (p *fusePlan) succ(g int) []int {
	var out []int
	for _, i := range p.members[g] {
		for _, u := range p.users[i] {
			if h := p.group[u]; h != g {
				out = append(out, h)
			}
		}
	}
	return out
}

// reaches reports whether group b depends on group a (a path a -> ... -> b).
func (p *fusePlan) reaches(a, b int) bool {
	seen := map[int]bool{a: true}
	work := []int{a}
	for len(work) > 0 {
		g := work[len(work)-1]
		work = work[:len(work)-1]
		for _, h := range p.succ(g) {
			if h == b {
				return true
			}
			if !seen[h] {
				seen[h] = true
				work = append(work, h)
			}
		}
	}
	return false
}

// cycleThroughOthers reports whether merging a and b would make a cycle: a
// path from one to the other through a third group.
func (p *fusePlan) cycleThroughOthers(a, b int) bool {
	for _, pair := range [][2]int{{a, b}, {b, a}} {
		for _, h := range p.succ(pair[0]) {
			if h != pair[1] && p.reaches(h, pair[1]) {
				return true
			}
		}
	}
	return false
}

// bytes is the memory traffic of running the instructions as one kernel.
func (p *fusePlan) bytes(idx []int) int64 {
	group := make([]*ir.Instr, len(idx))
	for k, i := range idx {
		group[k] = p.instrs[i]
	}
	if p.c.Target != nil {
		return p.c.Target.GroupBytes(p.f, group)
	}
	return logicalGroupBytes(p, idx)
}

// logicalGroupBytes is GroupBytes without a target: operands defined outside
// the group read once, results used outside written once, at dtype size times
// element count.
func logicalGroupBytes(p *fusePlan, idx []int) int64 {
	in := map[int]bool{}
	for _, i := range idx {
		in[i] = true
	}
	size := func(t ir.Type) int64 {
		n, ok := t.NumElements()
		if !ok {
			return -1
		}
		return n * int64(t.DType.Size())
	}
	total := int64(0)
	read := map[*ir.Value]bool{}
	for _, i := range idx {
		for _, a := range p.instrs[i].Args {
			if read[a] || (a.Def != nil && a.Def.Block == p.f.Body && in[p.index[a.Def]]) {
				continue
			}
			read[a] = true
			s := size(a.Type)
			if s < 0 {
				return -1
			}
			total += s
		}
		if p.kind[i] == fkConst {
			continue
		}
		for _, u := range p.users[i] {
			if !in[u] {
				for _, r := range p.instrs[i].Results {
					s := size(r.Type)
					if s < 0 {
						return -1
					}
					total += s
				}
				break
			}
		}
	}
	return total
}
