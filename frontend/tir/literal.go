package tir

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// types converts written types; ok is false if any was bad (reported).
func (b *moduleBuilder) types(ts []*typeAST) ([]ir.Type, bool) {
	if len(ts) == 0 {
		return nil, true
	}
	out := make([]ir.Type, len(ts))
	ok := true
	for i, t := range ts {
		var tok bool
		out[i], tok = b.typ(t)
		ok = ok && tok
	}
	return out, ok
}

// typ converts DTYPE[dims]{layout}. On error it returns the invalid type.
func (b *moduleBuilder) typ(t *typeAST) (ir.Type, bool) {
	ok := true
	dt, known := ir.ParseDType(t.DType.Value)
	if !known {
		b.errorf(b.pos(t.DType.Pos), "unknown dtype '%s'", t.DType.Value)
		ok = false
	}
	if len(t.Dims) > MaxRank {
		b.errorf(b.pos(t.Pos), "a type of %d dimensions, more than %d", len(t.Dims), MaxRank)
		return ir.Type{}, false
	}
	shape := make([]ir.Dim, len(t.Dims))
	for i, d := range t.Dims {
		if d.Sym != "" {
			shape[i] = ir.Dim{Sym: d.Sym}
			continue
		}
		n, err := strconv.ParseInt(d.Num, 10, 64)
		switch {
		case strings.ContainsAny(d.Num, ".eE"):
			b.errorf(b.pos(d.Pos), "dimension size %s must be an integer", d.Num)
			ok = false
		case err != nil:
			b.errorf(b.pos(d.Pos), "dimension size %s does not fit in int64", d.Num)
			ok = false
		case n < 0:
			b.errorf(b.pos(d.Pos), "dimension size %d must not be negative", n)
			ok = false
		}
		shape[i] = ir.D(n)
	}
	res := ir.Type{DType: dt, Shape: shape}
	if t.Layout != nil {
		l, lok := b.layout(t.Layout, len(shape))
		ok = ok && lok
		res.Layout = l
	}
	if !ok {
		return ir.Type{}, false
	}
	return res, true
}

// layout converts {minor_to_major:T(tile)...}: minor_to_major must be a
// permutation of the dimensions and tile sizes positive.
func (b *moduleBuilder) layout(l *layoutAST, rank int) (*ir.Layout, bool) {
	out := &ir.Layout{MinorToMajor: []int{}}
	seen := make([]bool, rank)
	for _, tok := range l.Minor {
		n, err := strconv.Atoi(tok.Value)
		if err != nil || n < 0 || n >= rank || seen[n] {
			b.errorf(b.pos(l.Pos), "layout minor-to-major order must list each of the %s once", plural(rank, "dimension"))
			return nil, false
		}
		seen[n] = true
		out.MinorToMajor = append(out.MinorToMajor, n)
	}
	if len(out.MinorToMajor) != rank {
		b.errorf(b.pos(l.Pos), "layout minor-to-major order must list each of the %s once", plural(rank, "dimension"))
		return nil, false
	}
	for _, tile := range l.Tiles {
		var ts []int64
		for _, tok := range tile.Dims {
			n, err := strconv.ParseInt(tok.Value, 10, 64)
			if err != nil || n < 1 {
				b.errorf(b.pos(tok.Pos), "tile size %s must be a positive integer", tok.Value)
				return nil, false
			}
			ts = append(ts, n)
		}
		if len(ts) == 0 {
			b.errorf(b.pos(tile.Pos), "a tile needs at least one size")
			return nil, false
		}
		out.Tiles = append(out.Tiles, ts)
	}
	return out, true
}

// attrFields converts written attributes; BuildAttr checks them against the op.
func (b *moduleBuilder) attrFields(as []*attrAST) ([]ir.AttrField, bool) {
	out := make([]ir.AttrField, 0, len(as))
	ok := true
	for _, a := range as {
		v, vok := b.attrValue(a.Value)
		ok = ok && vok
		out = append(out, ir.AttrField{Name: a.Name.Value, Value: v, Pos: b.pos(a.Name.Pos)})
	}
	return out, ok
}

func (b *moduleBuilder) attrValue(a *attrValueAST) (ir.AttrValue, bool) {
	pos := b.pos(a.Pos)
	if a.Sharding != nil {
		sh, ok := b.sharding(a.Sharding)
		return ir.AttrValue{Kind: ir.AttrSharding, Sharding: sh}, ok
	}
	if a.List {
		l := make([]ir.AttrValue, 0, len(a.Elems))
		ok := true
		for _, e := range a.Elems {
			v, eok := b.attrValue(e)
			ok = ok && eok
			l = append(l, v)
		}
		return ir.AttrValue{Kind: ir.AttrList, List: l}, ok
	}
	s := a.Scalar
	switch {
	case s == "true" || s == "false":
		return ir.AttrValue{Kind: ir.AttrBool, Bool: s == "true"}, true
	case s[0] == '"':
		str, err := strconv.Unquote(s)
		if err != nil {
			b.errorf(pos, "malformed string %s", s)
			return ir.AttrValue{}, false
		}
		return ir.AttrValue{Kind: ir.AttrString, Str: str}, true
	case isNumberText(s):
		if isIntText(s) {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				b.errorf(pos, "integer %s does not fit in int64", s)
				return ir.AttrValue{}, false
			}
			return ir.AttrValue{Kind: ir.AttrInt, Int: n}, true
		}
		f, ok := b.float(s, ir.F64, pos)
		return ir.AttrValue{Kind: ir.AttrFloat, Float: f}, ok
	}
	return ir.AttrValue{Kind: ir.AttrIdent, Str: s}, true
}

// isNumberText reports whether a scalar token is numeric: digits, or inf and nan with an optional '-'.
func isNumberText(s string) bool {
	t := strings.TrimPrefix(s, "-")
	return t == "inf" || t == "nan" || (t != "" && t[0] >= '0' && t[0] <= '9')
}

func isIntText(s string) bool {
	t := strings.TrimPrefix(s, "-")
	return t != "" && t[0] >= '0' && t[0] <= '9' && !strings.ContainsAny(t, ".eE")
}

// float parses a float token for dtype dt. A finite decimal that overflows the
// dtype is an error, not a silent inf.
func (b *moduleBuilder) float(s string, dt ir.DType, pos ir.Pos) (float64, bool) {
	switch strings.TrimPrefix(s, "-") {
	case "inf":
		if s[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(dt.RoundFloat(f), 0) {
		b.errorf(pos, "%s is out of range for %s", s, dt)
		return 0, false
	}
	return f, true
}

// literal converts a constant's literal for type t. A scalar is a splat; a
// list must nest like t's shape, except that an empty list stands for a zero
// dimension and everything below it. Elements must suit the dtype: true and
// false for i1, integers in range for integer dtypes, numbers, inf and nan for
// floats.
func (b *moduleBuilder) literal(c *constAST, t ir.Type, opPos ir.Pos) (*ir.Literal, bool) {
	if _, static := t.NumElements(); !static {
		if !t.IsStatic() {
			b.errorf(opPos, "constant needs a static type, got %s", t)
		} else {
			b.errorf(opPos, "constant type %s has too many elements", t)
		}
		return nil, false
	}
	var elems []*constAST
	if !c.List {
		elems = []*constAST{c}
	} else {
		shape, ok := b.literalShape(c)
		if !ok {
			return nil, false
		}
		if !shapeFits(shape, t.Dims()) {
			b.errorf(b.pos(c.Pos), "literal has shape %s, but the type is %s", shapeString(shape), t)
			return nil, false
		}
		elems = flatten(c, nil)
	}
	ok := true
	if t.DType.IsComplex() {
		vals := make([]complex128, len(elems))
		for i, e := range elems {
			var eok bool
			vals[i], eok = b.complexElem(e, t.DType)
			ok = ok && eok
		}
		return &ir.Literal{Complex: vals}, ok
	}
	if t.DType.IsFloatValued() {
		vals := make([]float64, len(elems))
		for i, e := range elems {
			var eok bool
			vals[i], eok = b.floatElem(e, t.DType)
			ok = ok && eok
		}
		return ir.NewLiteral(t, vals), ok
	}
	vals := make([]int64, len(elems))
	for i, e := range elems {
		var eok bool
		vals[i], eok = b.intElem(e, t.DType)
		ok = ok && eok
	}
	return ir.NewIntLiteral(t, vals), ok
}

// literalShape is the numpy shape of a nested list; ragged lists are errors.
func (b *moduleBuilder) literalShape(c *constAST) ([]int64, bool) {
	if !c.List {
		return []int64{}, true
	}
	shape := []int64{int64(len(c.Elems))}
	if len(c.Elems) == 0 {
		return shape, true
	}
	inner, ok := b.literalShape(c.Elems[0])
	if !ok {
		return nil, false
	}
	for _, e := range c.Elems[1:] {
		s, ok := b.literalShape(e)
		if !ok {
			return nil, false
		}
		if !slices.Equal(s, inner) {
			b.errorf(b.pos(e.Pos), "ragged list literal: this element has shape %s, the first has shape %s", shapeString(s), shapeString(inner))
			return nil, false
		}
	}
	return append(shape, inner...), true
}

// shapeFits compares a literal's shape with a type's dims: equal, or equal up
// to a zero-sized dimension where the literal stops.
func shapeFits(lit, dims []int64) bool {
	if len(lit) > len(dims) {
		return false
	}
	for i := range lit {
		if lit[i] != dims[i] {
			return false
		}
	}
	return len(lit) == len(dims) || (len(lit) > 0 && lit[len(lit)-1] == 0)
}

func flatten(c *constAST, out []*constAST) []*constAST {
	if !c.List {
		return append(out, c)
	}
	for _, e := range c.Elems {
		out = flatten(e, out)
	}
	return out
}

func shapeString(s []int64) string {
	parts := make([]string, len(s))
	for i, n := range s {
		parts[i] = strconv.FormatInt(n, 10)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// complexElem reads (re, im), each part a float of the complex type's part
// type, rounded into it.
func (b *moduleBuilder) complexElem(e *constAST, dt ir.DType) (complex128, bool) {
	if e.Pair == nil {
		b.errorf(b.pos(e.Pos), "%s elements are written (re, im), got %s", dt, e.Scalar)
		return 0, false
	}
	part := dt.ComplexPart()
	re, rok := b.floatElem(e.Pair[0], part)
	im, iok := b.floatElem(e.Pair[1], part)
	return dt.RoundComplex(complex(re, im)), rok && iok
}

func (b *moduleBuilder) floatElem(e *constAST, dt ir.DType) (float64, bool) {
	pos := b.pos(e.Pos)
	if e.Pair != nil || e.List {
		b.errorf(pos, "%s elements are single numbers; (re, im) pairs are for c64 and c128", dt)
		return 0, false
	}
	if e.Scalar == "true" || e.Scalar == "false" {
		b.errorf(pos, "%s is not a number: true and false are only for i1", e.Scalar)
		return 0, false
	}
	return b.float(e.Scalar, dt, pos)
}

func (b *moduleBuilder) intElem(e *constAST, dt ir.DType) (int64, bool) {
	pos := b.pos(e.Pos)
	if e.Pair != nil {
		b.errorf(pos, "%s elements are single numbers; (re, im) pairs are for c64 and c128", dt)
		return 0, false
	}
	s := e.Scalar
	if dt == ir.I1 {
		switch s {
		case "true":
			return 1, true
		case "false":
			return 0, true
		}
		b.errorf(pos, "i1 elements are written true or false, got %s", s)
		return 0, false
	}
	if s == "true" || s == "false" {
		b.errorf(pos, "%s is not a number: true and false are only for i1", s)
		return 0, false
	}
	if !isIntText(s) {
		b.errorf(pos, "%s needs an integer, got %s", dt, s)
		return 0, false
	}
	if dt == ir.U64 { // held as its bit pattern: 2^64-1 is -1
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			b.errorf(pos, "%s is out of range for u64 (0 to %d)", s, uint64(math.MaxUint64))
			return 0, false
		}
		return int64(n), true
	}
	lo, hi := dt.IntRange()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < lo || n > hi {
		b.errorf(pos, "%s is out of range for %s (%d to %d)", s, dt, lo, hi)
		return 0, false
	}
	return n, true
}
