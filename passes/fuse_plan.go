package passes

import (
	"sort"

	"github.com/tpucc/tpucc/ir"
)

// fusePlan is the grouping being decided. Groups are named by labels: the
// index in the body of the instruction a group started as. Merging group a
// into group b keeps the label b; a union-find over labels (parent) takes
// every member of a to b in near-constant time. Everything a merge decision
// needs is kept per group and combined on a merge, smaller into larger: the
// counts of members by kind, the traffic (fuse_traffic.go), the group
// graph's edges and a topological order of it (fuse_order.go). A merge so
// costs what the smaller group holds, and a body of n instructions is
// planned in about O(n log n).
type fusePlan struct {
	f      *ir.Func
	c      *Context
	instrs []*ir.Instr
	pos    []int // by instruction ID: index in instrs, -1 for instructions not in the body
	kind   []fuseKind
	users  [][]int  // by index: indices of the top-level users (the return included)
	uses   *ir.Uses // the body's use-list, kept right by build for the operands it renames
	kept   []bool   // expensive producers counted as kept apart

	parent []int        // by label: the label it was merged into, itself for a group
	groups []*fuseGroup // by label; nil once merged into another
	// outside counts, by value ID, the operands reading the value from
	// outside the group that defines it; a result with any is written.
	outside []int

	delta mergeDelta // the merge being considered
	slots []int      // scratch for preview, by value ID; zero between uses
	order fuseOrder
	// steps counts the members and groups that merge decisions visit, so a
	// test can hold the planning near-linear without timing it.
	steps int
}

// fuseGroup is one group of the plan.
type fuseGroup struct {
	members []int // instruction indices; sorted only when build needs them
	none    int   // members that never fuse (fkNone)
	heavy   int   // dot_general, reduction and normalising members
	rep     int   // a heavy member, when there is one: all of them are alike
	traffic traffic
	succ    []int // labels of the groups reading a result of this one (stale or repeated until compacted)
	pred    []int // labels of the groups this one reads from, likewise
}

func newFusePlan(f *ir.Func, c *Context) *fusePlan {
	p := &fusePlan{f: f, c: c, instrs: f.Body.Instrs, uses: f.Uses()}
	n := len(p.instrs)
	p.pos = make([]int, f.NumInstrs())
	for i := range p.pos {
		p.pos[i] = -1
	}
	for i, in := range p.instrs {
		p.pos[in.ID] = i
		for _, r := range in.Results {
			if !r.Type.IsStatic() {
				return nil // bytes unknown: leave the program as it is
			}
		}
	}
	p.kind = make([]fuseKind, n)
	p.users = make([][]int, n)
	p.kept = make([]bool, n)
	for i, in := range p.instrs {
		p.kind[i] = classify(in, p.uses)
		for _, a := range in.Args {
			if j, ok := p.at(a.Def); ok && (len(p.users[j]) == 0 || p.users[j][len(p.users[j])-1] != i) {
				p.users[j] = append(p.users[j], i)
			}
		}
	}
	p.initGroups()
	return p
}

// initGroups makes every instruction a group of its own.
func (p *fusePlan) initGroups() {
	n := len(p.instrs)
	p.outside = make([]int, p.f.NumValues())
	p.slots = make([]int, p.f.NumValues())
	for _, in := range p.instrs {
		for _, v := range in.Results {
			p.outside[v.ID] = p.uses.Count(v)
		}
	}
	p.parent = make([]int, n)
	p.groups = make([]*fuseGroup, n)
	p.order = newFuseOrder(n)
	for i := range p.instrs {
		p.parent[i] = i
		g := &fuseGroup{members: []int{i}, rep: i, succ: append([]int(nil), p.users[i]...)}
		switch p.kind[i] {
		case fkNone:
			g.none = 1
		case fkDot, fkReduce, fkNorm:
			g.heavy = 1
		}
		if g.none == 0 {
			p.initTraffic(i, &g.traffic)
		}
		p.groups[i] = g
	}
	for i, us := range p.users {
		for _, u := range us {
			p.groups[u].pred = append(p.groups[u].pred, i)
		}
	}
}

// at returns the body index of in, if in is an instruction of the body.
func (p *fusePlan) at(in *ir.Instr) (int, bool) {
	if in == nil || in.ID >= len(p.pos) || p.pos[in.ID] < 0 || p.instrs[p.pos[in.ID]] != in {
		return 0, false
	}
	return p.pos[in.ID], true
}

// find returns the label of the group holding instruction (or label) i.
func (p *fusePlan) find(i int) int {
	r := i
	for p.parent[r] != r {
		r = p.parent[r]
	}
	for p.parent[i] != r {
		p.parent[i], i = r, p.parent[i]
	}
	return r
}

// defGroup is the label of the group defining v, or -1 for a parameter.
func (p *fusePlan) defGroup(v *ir.Value) int {
	if i, ok := p.at(v.Def); ok {
		return p.find(i)
	}
	return -1
}

// size is the number of members of group g.
func (p *fusePlan) size(g int) int { return len(p.groups[g].members) }

// fusible reports whether group g may take part in a fusion at all.
func (p *fusePlan) fusible(g int) bool { return p.groups[g].none == 0 }

// commit merges group a into group b, as p.delta (previewed for the two)
// and p.order (checked for them) describe.
func (p *fusePlan) commit(a, b int) {
	p.order.reorder(p, a, b)
	p.commitTraffic()
	ga, gb := p.groups[a], p.groups[b]
	if p.delta.l == a {
		// a holds the larger structures: they go on under b's label.
		ga.traffic, gb.traffic = gb.traffic, ga.traffic
	}
	gb.members = appendSmaller(ga.members, gb.members)
	gb.succ = appendSmaller(ga.succ, gb.succ)
	gb.pred = appendSmaller(ga.pred, gb.pred)
	if gb.heavy == 0 {
		gb.rep = ga.rep
	}
	gb.none += ga.none
	gb.heavy += ga.heavy
	p.groups[a] = nil
	p.parent[a] = b
}

// appendSmaller is the concatenation of x and y, made by copying the
// shorter onto the longer.
func appendSmaller(x, y []int) []int {
	if len(x) > len(y) {
		x, y = y, x
	}
	return append(y, x...)
}

// sortedMembers returns group g's members in body order.
func (p *fusePlan) sortedMembers(g int) []int {
	ms := p.groups[g].members
	sort.Ints(ms)
	return ms
}
