package ir

import "math"

// TripCount is how many times a while runs its do region, when the loop
// has a counted form: a carried integer scalar (the counter) that starts at
// a constant, that do steps by the constant 1 or -1 (add or sub), and that
// cond compares with a constant, or with a carried value that starts at a
// constant and that do passes on unchanged (the limit). The counter may be
// either operand of the compare (4 > i is i < 4). Counting up, cond is lt,
// le or ne (ne only from a start at most the limit); counting down, gt, ge
// or ne (from a start at least the limit): the loop a fori_loop lowers to,
// and the same loop written backwards. ok is false for any other loop: its
// trip count depends on the data, or it would not end before the counter
// wraps.
func TripCount(in *Instr) (n int64, ok bool) {
	if in.Op != OpWhile || len(in.Regions) != 2 {
		return 0, false
	}
	cond, body := in.Regions[WhileCond], in.Regions[WhileBody]
	cret, bret := cond.Terminator(), body.Terminator()
	if cret == nil || bret == nil || len(cret.Args) != 1 || len(bret.Args) != len(in.Args) {
		return 0, false
	}
	cmp := cret.Args[0].Def
	if cmp == nil || cmp.Op != OpCompare || len(cmp.Args) != 2 {
		return 0, false
	}
	dir := cmp.Attr.(*CompareAttr).Dir
	for side := 0; side < 2; side++ {
		i := paramIndex(cond, cmp.Args[side])
		if i < 0 {
			continue
		}
		step := stepOf(body, i, bret.Args[i])
		start, ok := scalarConstant(in.Args[i])
		limit, lok := loopLimit(in, cmp.Args[1-side])
		if step == 0 || !ok || !lok {
			continue
		}
		d := dir
		if side == 1 {
			d = mirrored(dir)
		}
		if n, ok := countedTrips(d, step, start, limit, in.Args[i].Type.DType); ok {
			return n, true
		}
	}
	return 0, false
}

// loopLimit is the value of v, an operand of cond's compare, when it is
// the same in every iteration: a constant, or a carried value that starts
// at a constant and that do passes on unchanged.
func loopLimit(in *Instr, v *Value) (int64, bool) {
	if c, ok := scalarConstant(v); ok {
		return c, true
	}
	cond, body := in.Regions[WhileCond], in.Regions[WhileBody]
	j := paramIndex(cond, v)
	if j < 0 || body.Terminator().Args[j] != body.Params[j] {
		return 0, false
	}
	return scalarConstant(in.Args[j])
}

// mirrored is the direction of the compare with its operands swapped.
func mirrored(d CmpDir) CmpDir {
	switch d {
	case CmpLT:
		return CmpGT
	case CmpLE:
		return CmpGE
	case CmpGT:
		return CmpLT
	case CmpGE:
		return CmpLE
	}
	return d
}

// countedTrips is the trip count of a counter of dtype dt from start
// stepping by step (1 or -1) while "counter dir limit" holds, when it ends
// without wrapping: i <= hi or i >= lo for dt's largest or smallest value
// holds for ever. (A u64 counter is counted only below 2^63.)
func countedTrips(dir CmpDir, step, start, limit int64, dt DType) (int64, bool) {
	lo, hi := dt.IntRange()
	if dt == U64 {
		hi = math.MaxInt64
		if start < 0 || limit < 0 {
			return 0, false
		}
	}
	up := step > 0
	switch {
	case up && dir == CmpLT, !up && dir == CmpGT:
	case up && dir == CmpLE && limit < hi:
		limit++
	case !up && dir == CmpGE && limit > lo:
		limit--
	case dir == CmpNE && (up && start <= limit || !up && start >= limit):
	default:
		return 0, false
	}
	if !up {
		return max(0, start-limit), true
	}
	return max(0, limit-start), true
}

// paramIndex is the position of v among r's parameters, or -1.
func paramIndex(r *Block, v *Value) int {
	for i, p := range r.Params {
		if p == v {
			return i
		}
	}
	return -1
}

// stepOf is what do adds to its parameter i each iteration when next is
// that parameter plus or minus the constant 1 (1 or -1); 0 otherwise.
func stepOf(body *Block, i int, next *Value) int64 {
	op := next.Def
	if op == nil || (op.Op != OpAdd && op.Op != OpSub) || len(op.Args) != 2 {
		return 0
	}
	p := body.Params[i]
	for k, a := range op.Args {
		if a != p || op.Op == OpSub && k == 1 {
			continue
		}
		c, ok := scalarConstant(op.Args[1-k])
		switch {
		case !ok || c != 1 && c != -1:
			return 0
		case op.Op == OpSub:
			return -c
		}
		return c
	}
	return 0
}

// scalarConstant is the value of an integer scalar constant.
func scalarConstant(v *Value) (int64, bool) {
	if v.Def == nil || v.Def.Op != OpConstant || v.Type.Rank() != 0 || !v.Type.DType.IsInt() {
		return 0, false
	}
	a, ok := v.Def.Attr.(*ConstAttr)
	if !ok || a.Value == nil || a.Value.Len() == 0 {
		return 0, false
	}
	return a.Value.Int(0), true
}
