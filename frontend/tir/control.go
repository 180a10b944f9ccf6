package tir

import (
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// control builds a while or a case and its regions. The parser checks the
// form (the labels, the region count) and builds each region in its own
// scope; ir.Verify, which runs on every parsed module, checks the regions'
// parameter and return types against the op's, with their positions.
func (fb *funcBuilder) control(st *stmtAST, op ir.Op, opPos ir.Pos, args []*ir.Value, hint []ir.Type, fields []ir.AttrField, ok bool) ([]*ir.Value, bool) {
	attr, err := ir.BuildAttr(op, fields, opPos)
	if err != nil {
		fb.addErr(opPos, err)
		ok = false
	}
	if !fb.controlForm(st, op, opPos) {
		return nil, false
	}
	params := make([][]ir.Type, len(st.Regions))
	for i, ra := range st.Regions {
		params[i] = make([]ir.Type, len(ra.Params))
		for j, p := range ra.Params {
			t, tok := fb.typ(p.Type)
			ok = ok && tok
			params[i][j] = t
		}
	}
	if !ok {
		return nil, false
	}
	in, err := fb.bld.Emit(op, attr, hint, args...)
	if err != nil {
		fb.errorf(opPos, "%v", err)
		return nil, false
	}
	for i, ra := range st.Regions {
		blk := fb.f.NewRegion(in, params[i])
		for j, p := range ra.Params {
			blk.Params[j].Name = valueName(p.Name.Value)
			blk.Params[j].Pos = fb.pos(p.Name.Pos)
		}
		fb.regionBody(in, blk, ra, regionWhat(op, i))
	}
	fb.bld.Pos = opPos
	return in.Results, true
}

// regionWhat names region i of a while or case in messages, as the
// verifier does.
func regionWhat(op ir.Op, i int) string {
	if op == ir.OpSort {
		return "sort comparator region"
	}
	if op == ir.OpWhile {
		if i == ir.WhileCond {
			return "while cond region"
		}
		return "while do region"
	}
	return "case branch " + strconv.Itoa(i) + " region"
}

// controlForm checks the regions' labels: a while has a cond region then a
// do region, a case one or more unlabelled branches.
func (fb *funcBuilder) controlForm(st *stmtAST, op ir.Op, opPos ir.Pos) bool {
	if op == ir.OpWhile {
		if len(st.Regions) != 2 || label(st.Regions[0]) != "cond" || label(st.Regions[1]) != "do" {
			fb.errorf(opPos, "while needs a cond region then a do region: while %%a, ... : T, ... cond (%%p: T, ...) { ... } do (%%p: T, ...) { ... }")
			return false
		}
		return true
	}
	if op == ir.OpSort && len(st.Regions) != 1 {
		fb.errorf(opPos, "sort needs 1 comparator region: sort %%a, ... {dimension=N, stable=BOOL} (%%a0: A, %%a1: A, ...) { ...; return %%lt }")
		return false
	}
	if len(st.Regions) == 0 {
		fb.errorf(opPos, "case needs at least 1 branch: case %%k, %%a, ... : R, ... (%%p: T, ...) { ... } ...")
		return false
	}
	ok := true
	for _, ra := range st.Regions {
		if ra.Label != nil {
			fb.errorf(fb.pos(ra.Label.Pos), "a %s takes no label, got '%s'", strings.TrimSuffix(regionWhat(op, 0), " 0 region"), ra.Label.Value)
			ok = false
		}
	}
	return ok
}

func label(ra *regionAST) string {
	if ra.Label == nil {
		return ""
	}
	return ra.Label.Value
}

// controlRet builds a return in a while or case region; its types are
// checked by the verifier against the region's signature.
func (fb *funcBuilder) controlRet(st *stmtAST, opPos ir.Pos, args []*ir.Value, fields []ir.AttrField, ok bool) {
	if _, err := ir.BuildAttr(ir.OpReturn, fields, opPos); err != nil {
		fb.addErr(opPos, err)
		ok = false
	}
	if len(st.Types) > 0 {
		fb.errorf(fb.pos(st.Types[0].Pos), "return takes no result types")
		ok = false
	}
	if ok {
		fb.bld.Return(args...)
	}
}
