package passes

import (
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// abiCopy is one layout-changing copy at a function boundary that
// insertABICopies tries: of a parameter into the layout its consumers'
// class picks (in), or of a returned value into the ABI's row-major (out).
type abiCopy struct {
	in   *ir.Instr
	src  *ir.Value   // the value copied
	refs []operandAt // the operands moved from src to the copy's result
}

// operandAt is operand i of instruction in.
type operandAt struct {
	in *ir.Instr
	i  int
}

// insertABICopies puts a copy between each parameter and its consumers
// (calls and the return excepted: they are the ABI too), and between each
// value computed in f's body and the return, and keeps those that pay under
// the cost model, returning how many. A class that loses its ABI member that
// way is free to take its best order (layoutClasses.choose); the copies it
// needs are kept, all of them or none, when the traffic of its materialised
// members in that order plus the copies' own is less than the traffic
// without copies, where everything stays row-major:
//
//	cost(order) = sum over members v of Bytes(v in order) * (writes(v) + reads(v))
//	keep iff cost(best) + 2 * sum over copies of Bytes(copied value, row-major) < cost(row-major)
//
// (a copy reads its operand and writes its result; without it the reads of
// the copy's result fall on the parameter, and the returned value is written
// once). Reads are the top-level operands that name the value (a fusion
// reads its operands once, the return reads nothing); a parameter is never
// written. A class still pinned after the split (it reaches a call, or both
// a parameter's copy and the return) or of unknown size keeps no copy.
//
// Parameter copies come first in the body, in parameter order; return
// copies come just before the return, in the order of its operands, so the
// output is deterministic. A second run adds nothing: a copy is never
// joined to its operand's class, and copying a copy never pays.
func insertABICopies(f *ir.Func, t Target) int {
	ret := f.Body.Terminator()
	if ret == nil {
		return 0
	}
	copies := append(paramCopies(f), returnCopies(f, ret)...)
	if len(copies) == 0 {
		return 0
	}
	keep := copiesToKeep(f, t, copies)
	n := 0
	dropped := map[*ir.Instr]bool{}
	for _, c := range copies {
		if keep[c] {
			n++
			continue
		}
		for _, r := range c.refs {
			r.in.Args[r.i] = c.src
		}
		dropped[c.in] = true
	}
	if len(dropped) > 0 {
		f.Body.Remove(func(in *ir.Instr) bool { return dropped[in] })
	}
	return n
}

// paramCopies inserts a tentative copy of each parameter that some
// instruction other than a call or the return reads, at the top of the body
// in parameter order, and redirects those reads to it.
func paramCopies(f *ir.Func) []*abiCopy {
	uses := f.Uses()
	var copies []*abiCopy
	var made []*ir.Instr
	for _, p := range f.Params {
		var refs []operandAt
		var last *ir.Instr
		for _, in := range uses.Users(p) {
			if in == last || in.Op == ir.OpReturn || in.Op == ir.OpCall {
				continue // an instruction is listed once per operand reading p
			}
			last = in
			for i, a := range in.Args {
				if a == p {
					refs = append(refs, operandAt{in, i})
				}
			}
		}
		if len(refs) == 0 {
			continue
		}
		cp := f.NewInstr(ir.OpCopy, nil, []*ir.Value{p}, []ir.Type{p.Type}, p.Pos)
		cp.Block = f.Body
		made = append(made, cp)
		for _, r := range refs {
			r.in.Args[r.i] = cp.Result()
		}
		copies = append(copies, &abiCopy{in: cp, src: p, refs: refs})
	}
	f.Body.Instrs = append(made, f.Body.Instrs...)
	return copies
}

// returnCopies inserts a tentative copy of each distinct returned value
// computed in the body (not a parameter, call result or copy, which are
// already in the ABI's layout) just before the return, in operand order.
func returnCopies(f *ir.Func, ret *ir.Instr) []*abiCopy {
	var copies []*abiCopy
	body := f.Body.Instrs[: len(f.Body.Instrs)-1 : len(f.Body.Instrs)-1]
	for i, r := range ret.Args {
		if r.Def == nil || r.Def.Block != f.Body || r.Def.Op == ir.OpCall || r.Def.Op == ir.OpCopy {
			continue
		}
		if slices.Contains(ret.Args[:i], r) {
			continue
		}
		cp := f.NewInstr(ir.OpCopy, nil, []*ir.Value{r}, []ir.Type{r.Type}, ret.Pos)
		cp.Block = f.Body
		body = append(body, cp)
		c := &abiCopy{in: cp, src: r}
		for j := i; j < len(ret.Args); j++ {
			if ret.Args[j] == r {
				ret.Args[j] = cp.Result()
				c.refs = append(c.refs, operandAt{ret, j})
			}
		}
		copies = append(copies, c)
	}
	f.Body.Instrs = append(body, ret)
	return copies
}

// copiesToKeep decides, per layout class a copy frees, whether the copies
// of that class pay for themselves (copiesPay); all of a class's copies go
// together.
func copiesToKeep(f *ir.Func, t Target, copies []*abiCopy) map[*abiCopy]bool {
	la := newLayoutClasses(f)
	la.pinABI(f)
	la.collectPrefs(f)
	la.roots()
	reads := make([]int64, f.NumValues())
	for _, in := range f.Body.Instrs {
		if in.Op == ir.OpReturn {
			continue
		}
		for _, a := range in.Args {
			reads[a.ID]++
		}
	}
	// The class each copy frees: its result's for a parameter copy, its
	// operand's for a return copy. Copies are decided a class at a time, in
	// the order of each class's first copy.
	freed := func(c *abiCopy) int {
		if c.src.Def == nil {
			return la.find(c.in.Result().ID)
		}
		return la.find(c.src.ID)
	}
	byClass := map[int][]*abiCopy{}
	var classes []int
	for _, c := range copies {
		root := freed(c)
		if _, seen := byClass[root]; !seen {
			classes = append(classes, root)
		}
		byClass[root] = append(byClass[root], c)
	}
	keep := map[*abiCopy]bool{}
	for _, root := range classes {
		if _, ok := la.members[root]; !ok {
			continue
		}
		ok := la.copiesPay(t, root, byClass[root], reads)
		for _, d := range byClass[root] {
			keep[d] = ok
		}
	}
	return keep
}

// copiesPay applies insertABICopies's rule to the class root and the copies
// that free it.
func (la *layoutClasses) copiesPay(t Target, root int, group []*abiCopy, reads []int64) bool {
	ms := la.members[root]
	rank := ms[0].Type.Rank()
	for _, v := range ms {
		if la.pinned[v.ID] || v.Type.Rank() != rank {
			return false
		}
	}
	cost := func(m2m []int) int64 {
		var sum int64
		for _, v := range ms {
			if la.inner[v.ID] {
				continue
			}
			b := t.Bytes(ir.Type{DType: v.Type.DType, Shape: v.Type.Shape, Layout: layoutFor(t, v.Type, m2m)})
			if b < 0 {
				return -1
			}
			w := int64(0)
			if v.Def != nil {
				w = 1
			}
			sum += b * (w + reads[v.ID])
		}
		return sum
	}
	best, rm := cost(la.choose(t, root)), cost(rowMajor(rank))
	if best < 0 || rm < 0 {
		return false
	}
	var moved int64
	for _, c := range group {
		b := t.Bytes(ir.Type{DType: c.src.Type.DType, Shape: c.src.Type.Shape, Layout: layoutFor(t, c.src.Type, rowMajor(rank))})
		if b < 0 {
			return false
		}
		moved += b
	}
	return best+2*moved < rm
}
