package tir

import "github.com/tpucc/tpucc/ir"

// fusion builds a fusion instruction and its one region. The region's names
// live in their own scope: the body sees its parameters and its own values
// only, and its names are not visible after the closing brace.
func (fb *funcBuilder) fusion(st *stmtAST, opPos ir.Pos, args []*ir.Value, hint []ir.Type, fields []ir.AttrField, ok bool) ([]*ir.Value, bool) {
	attr, err := ir.BuildAttr(ir.OpFusion, fields, opPos)
	if err != nil {
		fb.addErr(opPos, err)
		ok = false
	}
	if len(st.Regions) != 1 {
		fb.errorf(opPos, "fusion needs exactly 1 region: (%%p: T, ...) { ... }, got %d", len(st.Regions))
		return nil, false
	}
	ra := st.Regions[0]
	if ra.Label != nil {
		fb.errorf(fb.pos(ra.Label.Pos), "a fusion region takes no label, got '%s'", ra.Label.Value)
		return nil, false
	}
	params := make([]ir.Type, len(ra.Params))
	for i, p := range ra.Params {
		if p.Annotation != nil {
			fb.errorf(fb.pos(p.Name.Pos), "fusion region parameter %s cannot carry a sharding", p.Name.Value)
		}
		t, tok := fb.typ(p.Type)
		ok = ok && tok
		params[i] = t
	}
	if !ok {
		return nil, false
	}
	if len(params) != len(args) {
		fb.errorf(fb.pos(ra.Pos), "fusion has %s, but its region has %s", plural(len(args), "operand"), plural(len(params), "parameter"))
		return nil, false
	}
	for i, t := range params {
		if !t.Equal(args[i].Type) {
			fb.errorf(fb.pos(ra.Params[i].Name.Pos), "fusion region parameter %s is %s, but operand %d is %s", ra.Params[i].Name.Value, t, i, args[i].Type)
			ok = false
		}
	}
	if !ok {
		return nil, false
	}
	in, err := fb.bld.Emit(ir.OpFusion, attr, hint, args...)
	if err != nil {
		fb.errorf(opPos, "%v", err)
		return nil, false
	}
	blk := &ir.Block{Parent: in}
	in.Regions = []*ir.Block{blk}
	for i, p := range ra.Params {
		v := fb.f.NewValue(params[i])
		v.Index = i
		v.Name = valueName(p.Name.Value)
		v.Pos = fb.pos(p.Name.Pos)
		blk.Params = append(blk.Params, v)
	}

	fb.regionBody(in, blk, ra, "fusion body")
	fb.bld.Pos = opPos
	return in.Results, true
}

// regionBody builds the statements of ra into blk, a region of in whose
// parameters are made. The region's names live in their own scope: the body
// sees its parameters and its own values only, and its names are not
// visible after the closing brace. what names the region in messages.
func (fb *funcBuilder) regionBody(in *ir.Instr, blk *ir.Block, ra *regionAST, what string) {
	saveScope, saveOuter, saveRegion, saveWhat, saveBlock := fb.scope, fb.outer, fb.region, fb.regionWhat, fb.bld.Block
	outer := map[string]binding{}
	for k, v := range fb.outer {
		outer[k] = v
	}
	for k, v := range fb.scope {
		outer[k] = v
	}
	fb.scope, fb.outer, fb.region, fb.regionWhat = map[string]binding{}, outer, in, what
	fb.bld.SetAppend(blk)
	for i, p := range ra.Params {
		fb.define(p.Name, blk.Params[i])
	}
	returns := false
	for i, s := range ra.Body {
		if s.Op.Value == "return" {
			returns = true
			if i != len(ra.Body)-1 {
				fb.errorf(fb.pos(s.Op.Pos), "return must be the last instruction of a %s", what)
			}
		}
		fb.stmt(s)
	}
	if !returns {
		fb.errorf(fb.pos(ra.Pos), "%s does not end with return", what)
	}
	fb.scope, fb.outer, fb.region, fb.regionWhat = saveScope, saveOuter, saveRegion, saveWhat
	fb.bld.SetAppend(saveBlock)
}

// regionRet checks a fusion body's return against the fusion's result types.
func (fb *funcBuilder) regionRet(st *stmtAST, opPos ir.Pos, args []*ir.Value, fields []ir.AttrField, ok bool) {
	if _, err := ir.BuildAttr(ir.OpReturn, fields, opPos); err != nil {
		fb.addErr(opPos, err)
		ok = false
	}
	if len(st.Types) > 0 {
		fb.errorf(fb.pos(st.Types[0].Pos), "return takes no result types")
		ok = false
	}
	if !ok {
		return
	}
	res := fb.region.Results
	if len(args) != len(res) {
		fb.errorf(opPos, "fusion body returns %s, but the fusion has %s", plural(len(args), "value"), plural(len(res), "result"))
		return
	}
	for i, a := range args {
		if !a.Type.Equal(res[i].Type) {
			fb.errorf(opPos, "fusion body returns %s as result %d, but the fusion's result is %s", a.Type, i, res[i].Type)
			ok = false
		}
	}
	if ok {
		fb.bld.Return(args...)
	}
}
