package ir

// TripCount is how many times a while runs its do region, when the loop
// has the counted form a fori_loop lowers to: a carried integer scalar
// that starts at a constant, that do increments by the constant 1, and
// that cond compares (lt or le) with a constant, or with a carried value
// that starts at a constant and that do passes on unchanged. ok is false
// for any other loop: its trip count depends on the data.
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
	if dir != CmpLT && dir != CmpLE {
		return 0, false
	}
	i := paramIndex(cond, cmp.Args[0])
	if i < 0 || !countsByOne(body, i, bret.Args[i]) {
		return 0, false
	}
	start, ok := scalarConstant(in.Args[i])
	if !ok {
		return 0, false
	}
	limit, ok := scalarConstant(cmp.Args[1])
	if !ok {
		j := paramIndex(cond, cmp.Args[1])
		if j < 0 || bret.Args[j] != body.Params[j] {
			return 0, false
		}
		if limit, ok = scalarConstant(in.Args[j]); !ok {
			return 0, false
		}
	}
	if dir == CmpLE {
		limit++
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

// countsByOne reports whether next is do's parameter i plus the constant 1.
func countsByOne(body *Block, i int, next *Value) bool {
	add := next.Def
	if add == nil || add.Op != OpAdd || len(add.Args) != 2 {
		return false
	}
	p := body.Params[i]
	for k, a := range add.Args {
		if a == p {
			one, ok := scalarConstant(add.Args[1-k])
			return ok && one == 1
		}
	}
	return false
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
