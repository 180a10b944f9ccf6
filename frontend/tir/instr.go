package tir

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// stmt builds one instruction. Every check whose inputs are available runs,
// so independent problems of one line are all reported; if any fails, the
// results are bound as poisoned names so later uses do not cascade.
func (fb *funcBuilder) stmt(st *stmtAST) {
	instrPos := fb.pos(st.Pos)
	opPos := fb.pos(st.Op.Pos)
	name := st.Op.Value
	fb.bld.Pos = instrPos

	argToks := st.Args
	if st.Call != nil {
		argToks = st.Call.Args
	}
	args, argsOK := fb.operands(argToks)
	hint, hintOK := fb.types(st.Types)
	var fields []ir.AttrField
	if st.Attrs != nil {
		var ok bool
		fields, ok = fb.attrFields(st.Attrs.Fields)
		hintOK = hintOK && ok
	}
	ok := argsOK && hintOK

	// The operand form must fit the op.
	if st.Call != nil && name != "call" && name != "custom_call" {
		fb.errorf(fb.pos(st.Call.Callee.Pos), "only call and custom_call take a callee, not %s", name)
		ok = false
	}
	if st.Const != nil && name != "constant" {
		fb.errorf(fb.pos(st.Const.Pos), "only constant takes a literal, not %s", name)
		ok = false
	}

	if len(st.Regions) > 0 && name != "fusion" && name != "while" && name != "case" && name != "sort" {
		fb.errorf(fb.pos(st.Regions[0].Pos), "only fusion, while, case and sort take regions, not %s", name)
		ok = false
	}

	var results []*ir.Value
	switch name {
	case "return":
		switch {
		case fb.region != nil && fb.region.Op == ir.OpFusion:
			fb.regionRet(st, opPos, args, fields, ok)
		case fb.region != nil:
			fb.controlRet(st, opPos, args, fields, ok)
		default:
			fb.ret(st, opPos, args, hint, fields, ok)
		}
		fb.bind(st, opPos, name, nil, true)
		return
	case "call":
		results, ok = fb.call(st, opPos, args, hint, fields, ok)
	case "custom_call":
		results, ok = fb.customCall(st, opPos, args, hint, fields, ok)
	case "constant":
		results, ok = fb.constant(st, opPos, hint, fields, ok)
	case "fusion":
		results, ok = fb.fusion(st, opPos, args, hint, fields, ok)
	case "while":
		results, ok = fb.control(st, ir.OpWhile, opPos, args, hint, fields, ok)
	case "case":
		results, ok = fb.control(st, ir.OpCase, opPos, args, hint, fields, ok)
	case "sort":
		results, ok = fb.control(st, ir.OpSort, opPos, args, hint, fields, ok)
	case "matmul":
		results, ok = fb.matmul(opPos, args, hint, fields, ok)
	default:
		results, ok = fb.generic(name, opPos, args, hint, fields, ok)
	}
	fb.bind(st, opPos, name, results, ok)
}

// bind gives the written names to the results, or poisons them.
func (fb *funcBuilder) bind(st *stmtAST, opPos ir.Pos, name string, results []*ir.Value, ok bool) {
	if ok && len(results) != len(st.Results) {
		fb.errorf(opPos, "%s has %s, but %s", name, plural(len(results), "result"), givenNames(len(st.Results)))
		ok = false
	}
	for i, tok := range st.Results {
		var v *ir.Value
		if ok {
			v = results[i]
			v.Name = valueName(tok.Value)
			v.Pos = fb.pos(tok.Pos)
		}
		fb.define(tok, v)
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func givenNames(n int) string {
	if n == 1 {
		return "1 name is given"
	}
	return fmt.Sprintf("%d names are given", n)
}

// generic builds an op of the table: attributes through ir.BuildAttr,
// broadcasting sugar for elementwise ops, result types through ir.Infer.
func (fb *funcBuilder) generic(name string, opPos ir.Pos, args []*ir.Value, hint []ir.Type, fields []ir.AttrField, ok bool) ([]*ir.Value, bool) {
	op, known := ir.LookupOp(name)
	if !known {
		fb.errorf(opPos, "unknown op '%s'", name)
		return nil, false
	}
	attr, err := ir.BuildAttr(op, fields, opPos)
	if err != nil {
		fb.addErr(opPos, err)
		return nil, false
	}
	if !ok {
		return nil, false
	}
	info := op.Info()
	if info.Elementwise && info.Args >= 2 && len(args) == info.Args {
		if args, ok = fb.broadcastOperands(op, opPos, args); !ok {
			return nil, false
		}
	}
	in, err := fb.bld.Emit(op, attr, hint, args...)
	if err != nil {
		fb.errorf(opPos, "%v", err)
		return nil, false
	}
	// ir.Infer's size arithmetic for slice and concat can overflow int64 into
	// a negative size; refuse it here rather than print an unparsable type.
	for _, r := range in.Results {
		for _, d := range r.Type.Shape {
			if !d.Symbolic() && d.Size < 0 {
				fb.errorf(opPos, "a result dimension of %s overflows int64", op)
				return nil, false
			}
		}
	}
	return in.Results, true
}

// call checks the arguments and written result types against the callee's
// signature; the results take the callee's types.
func (fb *funcBuilder) call(st *stmtAST, opPos ir.Pos, args []*ir.Value, hint []ir.Type, fields []ir.AttrField, ok bool) ([]*ir.Value, bool) {
	if _, err := ir.BuildAttr(ir.OpCall, fields, opPos); err != nil {
		fb.addErr(opPos, err)
		ok = false
	}
	if st.Call == nil {
		fb.errorf(opPos, "call needs a callee: call @name(%%arg, ...)")
		return nil, false
	}
	callee := st.Call.Callee.Value[1:]
	g := fb.funcs[callee]
	if g == nil {
		fb.errorf(fb.pos(st.Call.Callee.Pos), "unknown function @%s", callee)
		return nil, false
	}
	if !ok || fb.badSig[g] {
		return nil, false
	}
	if len(args) != len(g.Params) {
		fb.errorf(opPos, "@%s takes %s, got %d", g.Name, plural(len(g.Params), "argument"), len(args))
		return nil, false
	}
	for i, a := range args {
		if !a.Type.Equal(g.Params[i].Type) {
			fb.errorf(opPos, "argument %d of call @%s is %s, but the parameter is %s", i, g.Name, a.Type, g.Params[i].Type)
			ok = false
		}
	}
	if hint != nil {
		if len(hint) != len(g.Results) {
			fb.errorf(opPos, "@%s returns %s, but %d types are written", g.Name, plural(len(g.Results), "value"), len(hint))
			return nil, false
		}
		for i, t := range hint {
			if !t.Equal(g.Results[i]) {
				fb.errorf(opPos, "result %d of call @%s is written %s, but @%s returns %s", i, g.Name, t, g.Name, g.Results[i])
				ok = false
			}
		}
	}
	if !ok {
		return nil, false
	}
	// A non-nil hint even for a callee with no results: Infer treats a nil
	// hint as "no types known" and refuses the call.
	res := append(make([]ir.Type, 0, len(g.Results)), g.Results...)
	in, err := fb.bld.Emit(ir.OpCall, &ir.CallAttr{Callee: g.Name}, res, args...)
	if err != nil {
		fb.errorf(opPos, "%v", err)
		return nil, false
	}
	return in.Results, true
}

// customCall builds custom_call @target(...): the target is the callee
// position's name; its fallback is checked against the module by the verifier,
// once every function is known.
func (fb *funcBuilder) customCall(st *stmtAST, opPos ir.Pos, args []*ir.Value, hint []ir.Type, fields []ir.AttrField, ok bool) ([]*ir.Value, bool) {
	attr, err := ir.BuildAttr(ir.OpCustomCall, fields, opPos)
	if err != nil {
		fb.addErr(opPos, err)
		ok = false
	}
	if st.Call == nil {
		fb.errorf(opPos, "custom_call needs a target: custom_call @name(%%arg, ...)")
		return nil, false
	}
	if !ok {
		return nil, false
	}
	a := attr.(*ir.CustomCallAttr)
	a.Target = st.Call.Callee.Value[1:]
	if hint == nil {
		hint = []ir.Type{}
	}
	in, err := fb.bld.Emit(ir.OpCustomCall, a, hint, args...)
	if err != nil {
		fb.errorf(opPos, "%v", err)
		return nil, false
	}
	return in.Results, true
}

// ret checks the returned values against the signature.
func (fb *funcBuilder) ret(st *stmtAST, opPos ir.Pos, args []*ir.Value, hint []ir.Type, fields []ir.AttrField, ok bool) {
	if _, err := ir.BuildAttr(ir.OpReturn, fields, opPos); err != nil {
		fb.addErr(opPos, err)
		ok = false
	}
	if len(st.Types) > 0 {
		fb.errorf(fb.pos(st.Types[0].Pos), "return takes no result types")
		ok = false
	}
	f := fb.f
	for _, t := range f.Results {
		if t.DType == ir.Invalid {
			ok = false // a result type of the signature was bad (reported)
		}
	}
	if !ok {
		return
	}
	if len(args) != len(f.Results) {
		fb.errorf(opPos, "@%s returns %s, but its signature has %s", f.Name, plural(len(args), "value"), plural(len(f.Results), "result"))
		return
	}
	for i, a := range args {
		if !a.Type.Equal(f.Results[i]) {
			fb.errorf(opPos, "result %d of @%s is %s, but its signature says %s", i, f.Name, a.Type, f.Results[i])
			ok = false
		}
	}
	if ok {
		fb.bld.Return(args...)
	}
}

// constant builds a literal of the written type.
func (fb *funcBuilder) constant(st *stmtAST, opPos ir.Pos, hint []ir.Type, fields []ir.AttrField, ok bool) ([]*ir.Value, bool) {
	if _, err := ir.BuildAttr(ir.OpConstant, fields, opPos); err != nil {
		fb.addErr(opPos, err)
		ok = false
	}
	if st.Const == nil {
		fb.errorf(opPos, "constant needs a literal value (a number, true, false or a nested list)")
		return nil, false
	}
	if len(st.Types) == 0 {
		fb.errorf(opPos, "constant needs its result type written after ':'")
		return nil, false
	}
	if len(st.Types) > 1 {
		fb.errorf(opPos, "constant has 1 result, but %d types are written", len(st.Types))
		return nil, false
	}
	if !ok {
		return nil, false
	}
	t := hint[0]
	lit, litOK := fb.literal(st.Const, t, opPos)
	if !litOK {
		return nil, false
	}
	in, err := fb.bld.Emit(ir.OpConstant, &ir.ConstAttr{Value: lit}, hint)
	if err != nil {
		fb.errorf(opPos, "%v", err)
		return nil, false
	}
	return in.Results, true
}
