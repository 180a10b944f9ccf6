package passes

import "sort"

// fuseOrder keeps a topological order of the group graph, as Pearce and
// Kelly's dynamic topological sort does: ord[g] < ord[h] for every edge
// g -> h (h reads a result of g). A path from g to h passes only through
// groups ordered between them, so the searches that keep merges acyclic
// stay inside that window instead of walking everything g reaches, and a
// merge renumbers only the groups of the window that it forces to move.
type fuseOrder struct {
	ord   []int // by label
	mark  []int // by label: the search that last visited it (stamp)
	seen  []int // by label: the compaction that last kept it (kept)
	stamp int
	kept  int
	fwd   []int // the groups of the window the earlier group reaches (set by acyclic)
	bwd   []int // the groups of the window that reach the later one (set by reorder)
	stack []int
	slots []int
}

func newFuseOrder(n int) fuseOrder {
	o := fuseOrder{ord: make([]int, n), mark: make([]int, n), seen: make([]int, n)}
	for i := range o.ord {
		o.ord[i] = i // the body is in topological order
	}
	return o
}

// acyclic reports whether merging groups a and b keeps the group graph
// acyclic. Siblings must not reach each other at all; a producer a may feed
// its consumer b directly, but no path may lead from a to b through a third
// group (that group would have to run both before and after the merged one).
// Since the graph is acyclic, only the group earlier in the order can reach
// the later one. It leaves in o.fwd the groups of the window that the
// earlier group reaches, for reorder.
func (o *fuseOrder) acyclic(p *fusePlan, a, b int, sibling bool) bool {
	x, y := a, b
	if o.ord[x] > o.ord[y] {
		x, y = y, x
	}
	o.stamp++
	o.fwd = o.fwd[:0]
	o.stack = append(o.stack[:0], x)
	o.mark[x] = o.stamp
	for len(o.stack) > 0 {
		n := o.stack[len(o.stack)-1]
		o.stack = o.stack[:len(o.stack)-1]
		p.steps++
		for _, s := range o.compact(p, n, &p.groups[n].succ) {
			if s == y {
				if sibling || n != x {
					return false
				}
				continue
			}
			if o.ord[s] < o.ord[y] && o.mark[s] != o.stamp {
				o.mark[s] = o.stamp
				o.stack = append(o.stack, s)
				o.fwd = append(o.fwd, s)
			}
		}
	}
	return true
}

// reorder renumbers the window between a and b, which are about to merge
// under b's label (acyclic has just said yes, filling o.fwd). The groups of
// the window that reach the later of the two move before the merged group,
// those the earlier reaches move after it, each set in its old relative
// order, into the positions these groups and a and b held; the rest keep
// theirs.
func (o *fuseOrder) reorder(p *fusePlan, a, b int) {
	x, y := a, b
	if o.ord[x] > o.ord[y] {
		x, y = y, x
	}
	o.stamp++
	o.bwd = o.bwd[:0]
	o.stack = append(o.stack[:0], y)
	o.mark[y] = o.stamp
	for len(o.stack) > 0 {
		n := o.stack[len(o.stack)-1]
		o.stack = o.stack[:len(o.stack)-1]
		p.steps++
		for _, s := range o.compact(p, n, &p.groups[n].pred) {
			if s != x && o.ord[s] > o.ord[x] && o.mark[s] != o.stamp {
				o.mark[s] = o.stamp
				o.stack = append(o.stack, s)
				o.bwd = append(o.bwd, s)
			}
		}
	}
	if len(o.fwd) == 0 && len(o.bwd) == 0 {
		o.ord[b] = o.ord[x] // nothing between needs to move
		return
	}
	byOrd := func(gs []int) { sort.Slice(gs, func(i, j int) bool { return o.ord[gs[i]] < o.ord[gs[j]] }) }
	byOrd(o.fwd)
	byOrd(o.bwd)
	o.slots = append(o.slots[:0], o.ord[x], o.ord[y])
	for _, g := range o.bwd {
		o.slots = append(o.slots, o.ord[g])
	}
	for _, g := range o.fwd {
		o.slots = append(o.slots, o.ord[g])
	}
	sort.Ints(o.slots)
	// bwd, the merged group, one spare position, then fwd.
	for k, g := range o.bwd {
		o.ord[g] = o.slots[k]
	}
	o.ord[b] = o.slots[len(o.bwd)]
	for k, g := range o.fwd {
		o.ord[g] = o.slots[len(o.bwd)+2+k]
	}
}

// compact resolves the labels of one of group n's edge lists to the groups
// that hold them now, dropping n itself and repeats, and returns the list.
func (o *fuseOrder) compact(p *fusePlan, n int, list *[]int) []int {
	o.kept++
	out := (*list)[:0]
	for _, e := range *list {
		g := p.find(e)
		if g == n || o.seen[g] == o.kept {
			continue
		}
		o.seen[g] = o.kept
		out = append(out, g)
	}
	*list = out
	return out
}
