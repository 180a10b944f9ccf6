package passes

import (
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// assign-layout gives every value of a function a physical layout: a
// minor-to-major order and the target's tiling for that order and dtype
// (Target.Tiles), written into the value's type, so that dumps print
// f32[64,256]{1,0:T(8,128)} and the cost model (Target.Bytes) charges the
// padded size of the layout chosen. Without a target (Context.Target nil) it
// does nothing: layouts are a property of a machine.
//
// How the layouts are chosen:
//
//   - Values are grouped into layout classes: the operands and result of an
//     elementwise op of one shape, a fusion's operands and its region's
//     parameters, a fusion's results and what its region returns. A class has
//     one minor-to-major order (the tiles then follow from each member's
//     dtype), so no elementwise kernel ever reads one layout and writes
//     another, and a fusion's region agrees with its operands and results in
//     type, as the verifier requires. Every other op (dot_general, reductions,
//     reshape, transpose, slice, concat, broadcast, ...) reads and writes
//     whole values anyway, so it can write its result in any order: the
//     cost model charges it the same read and write whatever the layouts.
//   - Classes holding a function's parameter or returned value, or an
//     argument or result of a call, are row-major with tiles: that is the
//     caller's ABI (XLA's entry layout), for every function, so callers and
//     callees agree without looking at each other's bodies. The pass sets the
//     signatures of the functions f calls to the same types, so f verifies
//     on its own whichever function runs first.
//   - Every other class takes, among row-major and the orders that put any
//     one dimension minor and any other second-minor (the rest row-major),
//     the order with the fewest device bytes over its materialised members
//     (values inside a fusion body live in VMEM and do not count): tiles pad
//     the two minor dimensions, so a [4,64,32] value of rotary halves takes
//     {1,2,0} and pads 32 of 64 lanes instead of 96 of 128. Ties go to the
//     order that satisfies the most operand preferences — dot_general's
//     operands want their contracting dimensions minor (for the rhs of x·W
//     that is W in layout {0,1}, a pre-transposed weight, so both operands
//     are read along K), reductions (reduce_*, argmax, argmin, cumsum,
//     softmax, log_softmax, the norms) want their reduced axes minor — and
//     then to row-major. A preference never overrides the ABI: a W that is
//     a parameter stays row-major (no option asks otherwise yet).
//   - A transpose feeding a dot_general folds into the dot_general's
//     dimension numbers when the free dimensions keep their order (so the
//     result does not change): the dot reads the untransposed operand in
//     whatever layout it has. Once nothing else uses the transpose it is
//     removed, which saves its read and write. Both must be in one block:
//     a transpose that fuse put at the end of a producer's kernel is
//     already free of memory traffic and is left where it is.
//
// Inside a function no value needs two layouts (classes give each exactly
// one, and the ops at class boundaries move data anyway), so the only
// conflict is between the ABI's row-major and the order a class would pick
// if it were free. Where that pays, the conflict becomes an explicit copy
// (ir.OpCopy: the same values, the result type carrying the new layout) at
// the boundary: a parameter is copied once, first thing, into the layout
// its consumers' class picks; a value computed in its best layout is copied
// to row-major just before the return. A copy is inserted only when the
// bytes it saves its class's reads and writes exceed its own read and write
// (insertABICopies has the rule; rule counter insert-copy), so a parameter
// read once never gets one. A copy never joins its operand's class. Calls'
// arguments and results are not copied yet.
//
// On the CPU (Tiles nil) bytes do not depend on the order, so the
// preferences decide: intermediate matmul operands get their contracting
// dimension minor (pre-transposed weights), except values the backend
// reads or updates in place only when row-major (movedInPlace: reshape,
// dynamic_slice, dynamic_update_slice, bitcast_convert), and everything
// else is row-major,
// which an untiled target leaves implicit (a nil layout means untiled
// row-major, as Target.Bytes reads it), so CPU dumps and diagnostics show a
// layout only where it is not the default; the code generator is meant to
// use them. Neither the CPU executor nor the StableHLO lowering reads
// layouts, so the numbers and the emitted text are unchanged except for
// folded transposes (whose dot_general computes the same sums).
//
// Matmul dimensions are not padded to MXU multiples (Target.MatmulAlign):
// the cost model already charges a dot_general the FLOPs of its MXU-padded
// shape, as XLA:TPU pads inside the kernel, so an explicit pad, dot_general
// and slice would only add the pad's and the slice's bytes and never pays
// under it. It would pay where padding could be hoisted out of a loop or
// done once for constant weights; neither exists yet.
//
// Symbolic shapes: a class whose bytes are unknown (Target.Bytes -1) is
// row-major; its preferences are not consulted.
func assignLayout(f *ir.Func, c *Context) (bool, error) {
	t := c.Target
	if t == nil {
		return false, nil
	}
	folded := foldTransposesIntoDots(f, c)
	changed := false // a layout or a signature type changed
	for range insertABICopies(f, t) {
		c.Count("insert-copy")
		changed = true
	}
	la := newLayoutClasses(f)
	la.pinABI(f)
	la.collectPrefs(f)
	for _, root := range la.roots() {
		order := la.choose(t, root)
		for _, v := range la.members[root] {
			l := layoutFor(t, v.Type, order)
			if l.Tiles == nil && slices.Equal(order, rowMajor(len(order))) {
				// Untiled row-major is what a nil layout means
				// (Target.Bytes): the CPU's default stays implicit.
				l = nil
			}
			if setLayout(v, l) {
				changed = true
			}
		}
	}
	// The signature follows the values: parameters are the values
	// themselves; results are what the return returns.
	if ret := f.Body.Terminator(); ret != nil {
		for i, a := range ret.Args {
			if i < len(f.Results) && !f.Results[i].Equal(a.Type) {
				f.Results[i] = a.Type
				changed = true
			}
		}
	}
	// Callees get the ABI types their callers now pass.
	f.Body.Walk(func(in *ir.Instr) {
		a, ok := in.Attr.(*ir.CallAttr)
		if !ok || f.Module == nil {
			return
		}
		g := f.Module.Func(a.Callee)
		if g == nil || len(g.Params) != len(in.Args) || len(g.Results) != len(in.Results) {
			return
		}
		for i, p := range g.Params {
			p.Type = in.Args[i].Type
		}
		for i, r := range in.Results {
			g.Results[i] = r.Type
		}
	})
	if changed {
		c.Count("layout") // once per function whose layouts changed
	}
	return changed || folded, nil
}

// setLayout gives v the layout l, reporting whether that changed its type.
func setLayout(v *ir.Value, l *ir.Layout) bool {
	if v.Type.Layout.Equal(l) {
		return false
	}
	v.Type.Layout = l
	return true
}

// layoutFor is ty in minor-to-major order m2m, with the target's tiles for
// the physical shape (dimensions permuted major to minor).
func layoutFor(t Target, ty ir.Type, m2m []int) *ir.Layout {
	r := ty.Rank()
	phys := make([]ir.Dim, r)
	for i, d := range m2m {
		phys[r-1-i] = ty.Shape[d]
	}
	tiles := t.Tiles(ir.Type{DType: ty.DType, Shape: phys})
	return &ir.Layout{MinorToMajor: slices.Clone(m2m), Tiles: tiles}
}

// rowMajor is {r-1,...,0}.
func rowMajor(r int) []int {
	m2m := make([]int, r)
	for i := range m2m {
		m2m[i] = r - 1 - i
	}
	return m2m
}

// candidateOrders lists row-major first, then every order with dimension a
// minor and b second-minor, the others row-major: the orders that change
// which two dimensions the tiles pad.
func candidateOrders(r int) [][]int {
	out := [][]int{rowMajor(r)}
	for a := r - 1; a >= 0; a-- {
		for b := r - 1; b >= 0; b-- {
			if a == b || (a == r-1 && b == r-2) {
				continue
			}
			m2m := []int{a, b}
			for d := r - 1; d >= 0; d-- {
				if d != a && d != b {
					m2m = append(m2m, d)
				}
			}
			out = append(out, m2m)
		}
	}
	return out
}
