package stablehlo

import (
	"sort"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// canonical spells a region with its parameters and values renumbered in
// order (p0, p1, ...; v0, v1, ...), each op with its operands and attribute
// values: two regions with the same spelling compute the same function.
func canonical(r *region) string {
	names := map[string]string{}
	for i, p := range r.params {
		names[p.name] = "p" + itoa(i)
	}
	var b strings.Builder
	for i, o := range r.ops {
		for j, res := range o.results {
			names[res] = "v" + itoa(i) + "." + itoa(j)
		}
		b.WriteString(o.name)
		for _, a := range o.args {
			key := a.name
			if a.idx > 0 {
				key += "#" + itoa(a.idx)
			}
			b.WriteString(" " + names[key])
		}
		keys := make([]string, 0, len(o.attrs))
		for k := range o.attrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b.WriteString(" " + k + "=" + attrText(o.attrs[k]))
		}
		b.WriteString(";")
	}
	return b.String()
}

func attrText(a *attr) string {
	switch a.kind {
	case attrList:
		parts := make([]string, len(a.list))
		for i, e := range a.list {
			parts[i] = attrText(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case attrDense:
		parts := make([]string, len(a.dense.elems))
		for i, e := range a.dense.elems {
			parts[i] = e.text
		}
		return "dense(" + strings.Join(parts, ",") + ")" + mlirType(a.dense.typ)
	case attrDict:
		return "dict"
	}
	return a.text
}

// jaxArg is the argmax/argmin reducer JAX writes, tpucc's the one
// lower/stablehlo writes for floats and tpuccIntArg for integers: p0, p2 are
// the values, p1, p3 the i32 indices; {D} is GT for argmax, LT for argmin and
// {C} the compare type of the values' dtype. Each keeps the first index of
// the extreme, a NaN counting as the extreme.
const (
	jaxArg = "stablehlo.compare p0 p2 compare_type={C} comparison_direction={D};stablehlo.compare p0 p0 compare_type={C} comparison_direction=NE;" +
		"stablehlo.or v0.0 v1.0;stablehlo.compare p0 p2 compare_type={C} comparison_direction=EQ;stablehlo.compare p1 p3 compare_type=SIGNED comparison_direction=LT;" +
		"stablehlo.and v3.0 v4.0;stablehlo.or v2.0 v5.0;stablehlo.select v2.0 p0 p2;stablehlo.select v6.0 p1 p3;stablehlo.return v7.0 v8.0;"
	tpuccArg = "stablehlo.compare p2 p0 compare_type=FLOAT comparison_direction={D};stablehlo.compare p2 p0 compare_type=FLOAT comparison_direction=EQ;" +
		"stablehlo.compare p2 p2 compare_type=FLOAT comparison_direction=NE;stablehlo.compare p0 p0 compare_type=FLOAT comparison_direction=NE;" +
		"stablehlo.not v3.0;stablehlo.and v2.0 v4.0;stablehlo.or v0.0 v5.0;stablehlo.and v2.0 v3.0;stablehlo.or v1.0 v7.0;" +
		"stablehlo.compare p3 p1 compare_type=SIGNED comparison_direction=LT;stablehlo.and v8.0 v9.0;stablehlo.or v6.0 v10.0;" +
		"stablehlo.select v11.0 p2 p0;stablehlo.select v11.0 p3 p1;stablehlo.return v12.0 v13.0;"
	tpuccIntArg = "stablehlo.compare p2 p0 compare_type={C} comparison_direction={D};stablehlo.compare p2 p0 compare_type={C} comparison_direction=EQ;" +
		"stablehlo.compare p3 p1 compare_type=SIGNED comparison_direction=LT;stablehlo.and v1.0 v2.0;stablehlo.or v0.0 v3.0;" +
		"stablehlo.select v4.0 p2 p0;stablehlo.select v4.0 p3 p1;stablehlo.return v5.0 v6.0;"
)

// argKind says which of argmax and argmin body computes, if either.
func argKind(body string, dt ir.DType) (ir.Op, bool) {
	c := "FLOAT"
	switch {
	case dt.IsSigned():
		c = "SIGNED"
	case dt.IsUnsigned() || dt == ir.I1:
		c = "UNSIGNED"
	}
	for _, form := range []string{jaxArg, tpuccArg, tpuccIntArg} {
		for dir, code := range map[string]ir.Op{"GT": ir.OpArgmax, "LT": ir.OpArgmin} {
			if strings.NewReplacer("{C}", c, "{D}", dir).Replace(form) == body {
				return code, true
			}
		}
	}
	return ir.OpInvalid, false
}

// argReduce maps the two-input reduce of values and their iota indices (i32,
// or i64 under jax_enable_x64) that computes argmax or argmin. Its first result, the extreme value, is not
// bound: a use of it is refused, since ir's reduce_max may differ from the
// body in the sign of a zero.
func (bd *builder) argReduce(o *op) {
	args := bd.args(o)
	refuse := func() {
		bd.s.failf(o.pos, "unsupported form of %s: %d inputs (only argmax and argmin as JAX and tpucc write them)", o.name, len(args)/2)
	}
	if len(args) != 4 || len(o.regions) != 1 || o.nres != 2 || len(o.outs) != 2 {
		refuse()
	}
	x, idx := args[0], args[1]
	r := o.regions[0]
	dims := bd.ints(o, "dimensions")
	code, ok := argKind(canonical(r), x.Type.DType)
	// JAX writes i64 indices under jax_enable_x64: argmax's i32, converted.
	wide := idx.Type.DType == ir.I64
	if !ok || len(dims) != 1 || idx.Type.DType != ir.I32 && !wide || idx.Def == nil || idx.Def.Op != ir.OpIota ||
		idx.Def.Attr.(*ir.AxisAttr).Axis != dims[0] || !isIdentity(args[3], ir.OpReduceSum) || len(r.params) != 4 {
		refuse()
	}
	scalar, index := ir.Scalar(x.Type.DType), ir.Scalar(idx.Type.DType)
	for i, p := range r.params {
		if want := []ir.Type{scalar, index}[i%2]; !p.typ.Equal(want) {
			refuse()
		}
	}
	ext := map[ir.Op]ir.Op{ir.OpArgmax: ir.OpReduceMax, ir.OpArgmin: ir.OpReduceMin}[code]
	if !isIdentity(args[2], ext) {
		refuse()
	}
	if x.Type.DType == ir.I1 {
		// jnp.argmax of a mask (the first true): ir's argmax wants numbers.
		x = bd.emit(o, ir.OpConvert, nil, []ir.Type{x.Type.WithDType(ir.U8)}, x)
	}
	v := bd.emit(o, code, &ir.AxisAttr{Axis: dims[0]}, nil, x)
	if wide {
		v = bd.emit(o, ir.OpConvert, nil, []ir.Type{v.Type.WithDType(ir.I64)}, v)
	}
	if !v.Type.Equal(o.outs[1]) {
		bd.s.failf(o.pos, "%s: result 1 is %s, the text says %s", o.name, mlirType(v.Type), mlirType(o.outs[1]))
	}
	bd.define(o.results[1], v, o.pos)
	bd.unbound[o.results[0]] = "the values of an argmax-form " + o.name
}
