package passes

import "github.com/tpucc/tpucc/ir"

// Control identities: a case whose index is a constant is the branch it
// selects, and a while whose cond is constantly false never runs its body.
var controlRules = []rule{
	{name: "case-constant-index", ops: []ir.Op{ir.OpCase}, multi: caseConstantIndex},
	{name: "while-never", ops: []ir.Op{ir.OpWhile}, multi: whileNever},
}

// caseConstantIndex moves the selected branch's instructions (nested
// regions and all) to just before the case, its parameters read as the
// case's operands, and answers the case's results with what the branch
// returns; the other branches go with the case, which is then dead.
// Pattern: case(K, A...) {B0} ... {Bn-1} with K constant -> the body of B_k, k = K in [0,n) else n-1
func caseConstantIndex(r *rewriter, in *ir.Instr) []*ir.Value {
	l, ok := literal(in.Args[0])
	if !ok || len(in.Regions) == 0 {
		return nil
	}
	n := len(in.Regions)
	k := int(l.Int(0))
	if l.Int(0) < 0 || l.Int(0) >= int64(n) {
		k = n - 1
	}
	br := in.Regions[k]
	ret := br.Terminator()
	if ret == nil || len(ret.Args) != len(in.Results) {
		return nil
	}
	for _, v := range in.Results {
		if !v.Type.IsStatic() {
			return nil // the emptied branch returns constants (below)
		}
	}
	b := r.builder()
	for i, p := range br.Params {
		r.s.replace(p, in.Args[1+i])
	}
	for _, x := range br.Instrs[:len(br.Instrs)-1] {
		b.Block.Append(x)
	}
	out := append([]*ir.Value(nil), ret.Args...)
	// The case stays, dead, until dce; its emptied branch must still be a
	// closed region of the right types, so it returns zeros.
	r.s.uses.Drop(ret)
	zb := ir.NewBuilder(r.s.f)
	zb.SetAppend(br)
	zb.Pos = ret.Pos
	br.Instrs = nil
	for i, v := range in.Results {
		t := v.Type
		lit := ir.NewIntLiteral(t, []int64{0})
		if t.DType.IsFloat() {
			lit = ir.NewLiteral(t, []float64{0})
		}
		ret.Args[i] = zb.Typed(ir.OpConstant, &ir.ConstAttr{Value: lit}, &t)
	}
	br.Append(ret)
	return out
}

// whileNever: a while whose cond returns a constant false returns its
// operands.
// Pattern: while(A...) cond {return false} do {...} -> A...
func whileNever(r *rewriter, in *ir.Instr) []*ir.Value {
	if len(in.Regions) != 2 {
		return nil
	}
	ret := in.Regions[ir.WhileCond].Terminator()
	if ret == nil || len(ret.Args) != 1 {
		return nil
	}
	l, ok := splatLiteral(ret.Args[0])
	if !ok || l.Int(0) != 0 {
		return nil
	}
	for i, a := range in.Args {
		if !a.Type.Equal(in.Results[i].Type) {
			return nil
		}
	}
	return append([]*ir.Value(nil), in.Args...)
}
