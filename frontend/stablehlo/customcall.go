package stablehlo

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// customCallMeta are attributes JAX writes for profiles and tools, not for
// the kernel: the import leaves them out (sdy.sharding can only name a
// one-device mesh here: any other is refused at the module).
var customCallMeta = map[string]bool{"kernel_name": true, "mhlo.frontend_attributes": true, "sdy.sharding": true}

// customCall reads stablehlo.custom_call into ir's custom_call: target,
// backend_config (a string, byte for byte), has_side_effect, api_version and
// layouts. Anything that would change what the kernel computes and that ir
// cannot hold (aliasing, called computations, a dictionary backend_config)
// is refused by name.
func (bd *builder) customCall(o *op, args []*ir.Value) []*ir.Value {
	a := &ir.CustomCallAttr{Target: bd.attr(o, "call_target_name").text}
	// In the order written, so that of two refused attributes the first is named.
	names := slices.Collect(maps.Keys(o.attrs))
	slices.SortFunc(names, func(x, y string) int {
		p, q := o.attrs[x].pos, o.attrs[y].pos
		return cmp.Or(cmp.Compare(p.Line, q.Line), cmp.Compare(p.Col, q.Col), strings.Compare(x, y))
	})
	for _, name := range names {
		v := o.attrs[name]
		switch name {
		case "call_target_name":
		case "backend_config":
			if v.kind != attrStr {
				bd.s.failf(v.pos, "%s @%s: a backend_config that is not a string (api_version 4's dictionary) is not supported", o.name, a.Target)
			}
			a.BackendConfig = v.text
		case "has_side_effect":
			if v.kind != attrBool {
				bd.s.failf(v.pos, "%s @%s: has_side_effect must be true or false", o.name, a.Target)
			}
			a.HasSideEffect = v.text == "true"
		case "api_version":
			a.APIVersion = v.int(bd.s, "api_version")
		case "operand_layouts":
			a.OperandLayouts = bd.layouts(o, v)
		case "result_layouts":
			a.ResultLayouts = bd.layouts(o, v)
		case "output_operand_aliases", "called_computations":
			if v.kind != attrList || len(v.list) > 0 {
				bd.s.failf(v.pos, "%s @%s: %s is not supported", o.name, a.Target, name)
			}
		default:
			if !customCallMeta[name] {
				bd.s.failf(v.pos, "%s @%s: unsupported attribute %s", o.name, a.Target, name)
			}
		}
	}
	in, err := bd.b.Emit(ir.OpCustomCall, a, append([]ir.Type{}, o.outs...), args...)
	if err != nil {
		bd.s.failf(o.pos, "%s: %v", o.name, err)
	}
	return in.Results
}

// layouts reads [dense<[1, 0]> : tensor<2xindex>, ...]: one minor-to-major
// order per operand or result.
func (bd *builder) layouts(o *op, v *attr) [][]int64 {
	if v.kind != attrList {
		bd.s.failf(v.pos, "%s: expected a list of layouts", o.name)
	}
	out := make([][]int64, len(v.list))
	for i, e := range v.list {
		if e.kind != attrDense || e.dense.typ.Rank() != 1 {
			bd.s.failf(e.pos, "%s: a layout must be a dense index vector", o.name)
		}
		n := e.dense.typ.Shape[0].Size
		l := make([]int64, n)
		for j := range l {
			el := e.dense.elems[0]
			if len(e.dense.elems) > 1 {
				el = e.dense.elems[j]
			}
			x, err := strconv.ParseInt(el.text, 10, 64)
			if err != nil {
				bd.s.failf(el.pos, "%s: a layout must be a dense index vector", o.name)
			}
			l[j] = x
		}
		out[i] = l
	}
	return out
}
