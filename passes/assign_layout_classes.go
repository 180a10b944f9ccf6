package passes

import (
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// layoutClasses partitions a function's values (those of fusion bodies
// included) into classes that must share one minor-to-major order, with a
// union-find over value IDs. See assignLayout for which values are joined
// and why.
type layoutClasses struct {
	parent  []int
	vals    []*ir.Value // by ID; nil for IDs no value of f has
	order   []*ir.Value // every value, in definition order
	inner   []bool      // by ID: lives inside a fusion body (not materialised)
	pinned  []bool      // by ID: must be row-major (the ABI)
	prefs   [][][]int   // by ID: sets of dimensions an operand use wants minor
	members map[int][]*ir.Value
}

func newLayoutClasses(f *ir.Func) *layoutClasses {
	n := f.NumValues()
	la := &layoutClasses{parent: make([]int, n), vals: make([]*ir.Value, n), inner: make([]bool, n),
		pinned: make([]bool, n), prefs: make([][][]int, n)}
	for i := range la.parent {
		la.parent[i] = i
	}
	add := func(v *ir.Value, inner bool) {
		la.vals[v.ID] = v
		la.inner[v.ID] = inner
		la.order = append(la.order, v)
	}
	for _, p := range f.Params {
		add(p, false)
	}
	f.Body.Walk(func(in *ir.Instr) {
		for _, r := range in.Regions {
			for _, p := range r.Params {
				add(p, in.Op == ir.OpFusion)
			}
		}
		for _, r := range in.Results {
			add(r, inFusion(in.Block))
		}
	})
	f.Body.Walk(func(in *ir.Instr) {
		switch {
		case in.Op == ir.OpFusion && len(in.Regions) == 1:
			r := in.Regions[0]
			for i, p := range r.Params {
				if i < len(in.Args) {
					la.union(in.Args[i], p)
				}
			}
			if ret := r.Terminator(); ret != nil {
				for j, a := range ret.Args {
					if j < len(in.Results) {
						la.union(a, in.Results[j])
					}
				}
			}
		case ir.IsControl(in.Op):
			la.unionControl(in)
		case in.Op.Info().Elementwise && in.Op != ir.OpCopy && len(in.Results) == 1:
			// A copy is elementwise but exists to change the layout: its
			// operand and result are in classes of their own.
			res := in.Result()
			for _, a := range in.Args {
				if a.Type.SameShape(res.Type) {
					la.union(a, res)
				}
			}
		}
	})
	return la
}

// inFusion reports whether blk is a fusion's body, whose values live in
// VMEM; a while's or case's region values are materialised like any other.
func inFusion(blk *ir.Block) bool {
	return blk != nil && blk.Parent != nil && blk.Parent.Op == ir.OpFusion
}

// unionControl puts each carried value of a while (operand, the regions'
// parameters, what do returns, the result) in one class, and likewise a
// case's operands with its branches' parameters and its results with what
// the branches return: a region's types must equal the op's.
func (la *layoutClasses) unionControl(in *ir.Instr) {
	args := in.Args
	if in.Op == ir.OpCase {
		args = args[1:]
	}
	for _, r := range in.Regions {
		for i, p := range r.Params {
			if i < len(args) {
				la.union(args[i], p)
			}
		}
		ret := r.Terminator()
		if ret == nil || (in.Op == ir.OpWhile && r == in.Regions[ir.WhileCond]) {
			continue
		}
		for j, a := range ret.Args {
			if j < len(in.Results) {
				la.union(a, in.Results[j])
			}
		}
	}
	if in.Op == ir.OpWhile {
		for i, a := range args {
			if i < len(in.Results) {
				la.union(a, in.Results[i])
			}
		}
	}
}

func (la *layoutClasses) find(id int) int {
	for la.parent[id] != id {
		la.parent[id] = la.parent[la.parent[id]]
		id = la.parent[id]
	}
	return id
}

func (la *layoutClasses) union(a, b *ir.Value) {
	ra, rb := la.find(a.ID), la.find(b.ID)
	if ra != rb {
		la.parent[max(ra, rb)] = min(ra, rb)
	}
}

// pinABI marks the values that cross a function boundary: f's parameters,
// what f returns, and the arguments and results of calls.
func (la *layoutClasses) pinABI(f *ir.Func) {
	for _, p := range f.Params {
		la.pinned[p.ID] = true
	}
	if ret := f.Body.Terminator(); ret != nil {
		for _, a := range ret.Args {
			la.pinned[a.ID] = true
		}
	}
	// A while's carried values and a case's operands and results cross
	// into regions, which the lowering makes separate computations: they
	// are pinned like a call's.
	f.Body.Walk(func(in *ir.Instr) {
		if in.Op != ir.OpCall && !ir.IsControl(in.Op) {
			return
		}
		for _, a := range in.Args {
			la.pinned[a.ID] = true
		}
		for _, r := range in.Results {
			la.pinned[r.ID] = true
		}
	})
}

// collectPrefs records, for each operand, the dimensions its use wants
// minor: dot_general's contracting dimensions, the axes a reduction reduces.
func (la *layoutClasses) collectPrefs(f *ir.Func) {
	want := func(v *ir.Value, dims []int64) {
		if len(dims) == 0 || len(dims) > v.Type.Rank() {
			return
		}
		s := make([]int, len(dims))
		for i, d := range dims {
			if d < 0 || int(d) >= v.Type.Rank() {
				return
			}
			s[i] = int(d)
		}
		la.prefs[v.ID] = append(la.prefs[v.ID], s)
	}
	f.Body.Walk(func(in *ir.Instr) {
		if len(in.Args) == 0 {
			return
		}
		x := in.Args[0]
		switch a := in.Attr.(type) {
		case *ir.DotAttr:
			want(in.Args[0], a.LhsContract)
			want(in.Args[1], a.RhsContract)
		case *ir.AxesAttr: // reduce_sum, reduce_max, reduce_min, reduce_prod
			want(x, a.Axes)
		case *ir.AxisAttr:
			switch in.Op {
			case ir.OpArgmax, ir.OpArgmin, ir.OpCumsum, ir.OpSoftmax, ir.OpLogSoftmax:
				want(x, []int64{a.Axis})
			}
		case *ir.EpsAttr: // layer_norm, rms_norm: over the last axis
			want(x, []int64{int64(x.Type.Rank() - 1)})
		}
	})
}

// roots lists the classes by their first member in definition order, and
// fills members.
func (la *layoutClasses) roots() []int {
	la.members = map[int][]*ir.Value{}
	var out []int
	for _, v := range la.order {
		r := la.find(v.ID)
		if _, ok := la.members[r]; !ok {
			out = append(out, r)
		}
		la.members[r] = append(la.members[r], v)
	}
	return out
}

// choose picks the class's minor-to-major order: row-major when it is
// pinned or its bytes are unknown, else the candidate with the fewest
// materialised bytes, then the most preferences met, then the first listed.
func (la *layoutClasses) choose(t Target, root int) []int {
	ms := la.members[root]
	rank := ms[0].Type.Rank()
	for _, v := range ms {
		if la.pinned[v.ID] || v.Type.Rank() != rank || movedInPlace(t, v) {
			return rowMajor(rank)
		}
	}
	var best []int
	bestBytes, bestPrefs := int64(-1), -1
	for _, m2m := range candidateOrders(rank) {
		bytes, prefs := int64(0), 0
		for _, v := range ms {
			for _, p := range la.prefs[v.ID] {
				if minorAre(m2m, p) {
					prefs++
				}
			}
			if la.inner[v.ID] {
				continue
			}
			b := t.Bytes(ir.Type{DType: v.Type.DType, Shape: v.Type.Shape, Layout: layoutFor(t, v.Type, m2m)})
			if b < 0 {
				return rowMajor(rank)
			}
			bytes += b
		}
		if best == nil || bytes < bestBytes || (bytes == bestBytes && prefs > bestPrefs) {
			best, bestBytes, bestPrefs = m2m, bytes, prefs
		}
	}
	return best
}

// movedInPlace reports whether v, on an untiled target (the CPU), is the
// result of an op that the backend may carry out without writing anything
// when v is row-major, as its operand is: a reshape or dynamic_slice read
// where it lies (a view), a dynamic_update_slice made in its operand's
// storage, a bitcast. In any other order each becomes a transposing copy.
// (Ops that write a new value anyway, concat or pad, write any order.) A layer loop's
// cache row, reshape(dynamic_slice(cache)), read by attention's probs · v
// (contracting the slots), took the slots-minor order and was copied,
// transposed, every layer of every decode step: 16% of a batch-1 step at
// 4096 cache slots. Such a class keeps row-major on the CPU; on a tiled
// target every order is a copy anyway and bytes decide.
func movedInPlace(t Target, v *ir.Value) bool {
	if v.Def == nil || t.Tiles(v.Type) != nil {
		return false
	}
	switch v.Def.Op {
	case ir.OpReshape, ir.OpDynamicSlice, ir.OpDynamicUpdateSlice, ir.OpBitcastConvert:
		return true
	}
	return false
}

// minorAre reports whether dims are exactly the len(dims) minor-most
// dimensions of m2m, in any order.
func minorAre(m2m, dims []int) bool {
	if len(dims) > len(m2m) {
		return false
	}
	for _, d := range dims {
		if !slices.Contains(m2m[:len(dims)], d) {
			return false
		}
	}
	return true
}

// foldTransposesIntoDots rewrites dot_general(transpose(x), y) (either
// side) into a dot_general of x with its dimension numbers mapped through
// the permutation, when the free dimensions of x come in the same order as
// those of the transpose (the result's dimension order is batch, lhs free,
// rhs free, each free group in operand order, so otherwise the result
// would change). A transpose left without uses is removed.
//
// Pattern: dot_general(transpose(x, perm), y) -> dot_general(x, y) with dims perm[d].
func foldTransposesIntoDots(f *ir.Func, c *Context) bool {
	var touched []*ir.Instr
	f.Body.Walk(func(in *ir.Instr) {
		a, ok := in.Attr.(*ir.DotAttr)
		if in.Op != ir.OpDotGeneral || !ok || len(in.Args) != 2 {
			return
		}
		na := *a
		for side, x := range in.Args {
			tr := x.Def
			if tr == nil || tr.Op != ir.OpTranspose || tr.Block != in.Block {
				continue
			}
			pa, ok := tr.Attr.(*ir.PermAttr)
			if !ok {
				continue
			}
			perm := pa.Perm
			batch, contract := &na.LhsBatch, &na.LhsContract
			if side == 1 {
				batch, contract = &na.RhsBatch, &na.RhsContract
			}
			nb, nc, ok := permuteDotDims(perm, *batch, *contract)
			if !ok {
				continue
			}
			*batch, *contract = nb, nc
			in.Args[side] = tr.Args[0]
			touched = append(touched, tr)
			c.Count("fold-transpose-into-dot")
			in.Attr = &na
		}
	})
	if len(touched) == 0 {
		return false
	}
	uses := f.UseCounts()
	dead := map[*ir.Instr]bool{}
	seen := map[*ir.Block]bool{}
	var blocks []*ir.Block // each once, so each is swept once
	for _, tr := range touched {
		if uses[tr.Result().ID] == 0 && !dead[tr] {
			if !seen[tr.Block] {
				seen[tr.Block] = true
				blocks = append(blocks, tr.Block)
			}
			dead[tr] = true
		}
	}
	for _, b := range blocks {
		b.Remove(func(x *ir.Instr) bool { return dead[x] })
	}
	return true
}

// permuteDotDims maps batch and contracting dimensions of transpose(x, perm)
// to those of x, and reports whether the free dimensions keep their order.
func permuteDotDims(perm, batch, contract []int64) (nb, nc []int64, ok bool) {
	used := make([]bool, len(perm))
	for _, d := range append(slices.Clone(batch), contract...) {
		if d < 0 || int(d) >= len(perm) {
			return nil, nil, false
		}
		used[d] = true
	}
	last := int64(-1)
	for i, p := range perm {
		if used[i] {
			continue
		}
		if p < last {
			return nil, nil, false
		}
		last = p
	}
	nb = make([]int64, len(batch))
	for i, d := range batch {
		nb[i] = perm[d]
	}
	nc = make([]int64, len(contract))
	for i, d := range contract {
		nc[i] = perm[d]
	}
	return nb, nc, true
}
