package stablehlo

import (
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// customCall writes stablehlo.custom_call as JAX prints it: the attributes
// sorted by name, each left out at its default (api_version 1, no side
// effect), backend_config escaped as MLIR escapes strings. The fallback and
// the cost are tpucc's own and are not written.
func (e *emitter) customCall(in *ir.Instr, args []hv) []hv {
	a := in.Attr.(*ir.CustomCallAttr)
	ts := make([]ir.Type, len(in.Results))
	for i, r := range in.Results {
		ts[i] = r.Type
	}
	var attrs []string
	if a.APIVersion != 0 && a.APIVersion != 1 {
		attrs = append(attrs, "api_version = "+strconv.FormatInt(a.APIVersion, 10)+" : i32")
	}
	if a.BackendConfig != "" {
		attrs = append(attrs, "backend_config = "+mlirString(a.BackendConfig))
	}
	if a.HasSideEffect {
		attrs = append(attrs, "has_side_effect = true")
	}
	if a.OperandLayouts != nil {
		attrs = append(attrs, "operand_layouts = "+layoutList(a.OperandLayouts))
	}
	if a.ResultLayouts != nil {
		attrs = append(attrs, "result_layouts = "+layoutList(a.ResultLayouts))
	}
	dict := ""
	if len(attrs) > 0 {
		dict = " {" + strings.Join(attrs, ", ") + "}"
	}
	res := resultTypes(ts)
	if len(ts) == 0 {
		res = "()"
	}
	return e.defN(ts, "stablehlo.custom_call @", symbol(a.Target), "(", refs(args), ")", dict,
		" : (", typeList(types(args)), ") -> ", res)
}

// mlirString quotes s as MLIR prints a string attribute: printable ASCII as
// is, except '"' and '\', and every other byte as \XX in upper-case hex.
func mlirString(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c >= 0x20 && c < 0x7f && c != '"':
			b.WriteByte(c)
		default:
			b.WriteByte('\\')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	b.WriteByte('"')
	return b.String()
}

// layoutList spells minor-to-major layouts as index tensors: a rank-1 one
// is a splat, dense<0>, as MLIR prints it.
func layoutList(ls [][]int64) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		var v string
		switch len(l) {
		case 0:
			v = "dense<>"
		case 1:
			v = "dense<" + strconv.FormatInt(l[0], 10) + ">"
		default:
			v = "dense<" + ints(l) + ">"
		}
		parts[i] = v + " : tensor<" + strconv.Itoa(len(l)) + "xindex>"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
