package llvm

import "github.com/tpucc/tpucc/ir"

// sunk returns a block's instructions with each pure expression (and each
// fusion of expressions alone) moved down to just before the first
// instruction that uses it, the others in their order. A loop over layers
// slices and converts every stacked weight at the top of its body, and the
// products that read them come after norms that are steps of their own:
// planned where they stand, the slices are values that a later group
// needs, so each was a copy of the layer's weights (widened to f32 for a
// bf16 checkpoint) on every iteration. Beside their products they are in
// the products' group, which reads them in place (readInPlace, narrow.go).
// Moving a pure instruction later is sound in SSA: its operands are still
// defined before it, and a step that writes an operand's storage in place
// is the operand's only use (inplaceUpdates, carriedUpdates, adoptable).
func sunk(instrs []*ir.Instr) []*ir.Instr {
	at := make(map[*ir.Instr]int, len(instrs))
	for i, in := range instrs {
		at[in] = i
	}
	users := map[*ir.Value][]*ir.Instr{}
	for _, in := range instrs {
		for _, a := range in.Args {
			users[a] = append(users[a], in)
		}
	}
	// anchor[i] is the instruction that instruction i is placed before: its
	// own index when it stays, else the earliest anchor of its users.
	anchor := make([]int, len(instrs))
	moved := false
	for i := len(instrs) - 1; i >= 0; i-- {
		in := instrs[i]
		anchor[i] = i
		if !sinkable(in) {
			continue
		}
		first := len(instrs)
		for _, r := range in.Results {
			for _, u := range users[r] {
				first = min(first, anchor[at[u]])
			}
		}
		if first < len(instrs) && first > i {
			anchor[i], moved = first, true
		}
	}
	if !moved {
		return instrs
	}
	before := make([][]*ir.Instr, len(instrs))
	for i, in := range instrs {
		if anchor[i] != i {
			before[anchor[i]] = append(before[anchor[i]], in)
		}
	}
	out := make([]*ir.Instr, 0, len(instrs))
	for i, in := range instrs {
		if anchor[i] == i {
			out = append(append(out, before[i]...), in)
		}
	}
	return out
}

// sinkable reports whether in computes without side effects and without a
// step of its own that must stay where it is: an expression, or a fusion
// of expressions alone (a reshape and convert of a stacked weight).
func sinkable(in *ir.Instr) bool {
	if isExpr(in) {
		return true
	}
	if !inlinable(in) {
		return false
	}
	body := in.FusionBody().Instrs
	for _, x := range body[:len(body)-1] {
		if !isExpr(x) {
			return false
		}
	}
	return true
}
