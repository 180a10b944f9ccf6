package ir

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Attr is an op's typed attribute struct. Fields lists the non-default fields
// sorted by name: it is what the printer writes between braces.
type Attr interface {
	Fields() []AttrField
}

// AttrField is one name=value pair as written in .tir.
type AttrField struct {
	Name  string
	Value AttrValue
	Pos   Pos
}

// AttrValueKind says which member of AttrValue holds the value.
type AttrValueKind uint8

const (
	AttrInt AttrValueKind = iota
	AttrFloat
	AttrBool
	AttrString
	AttrIdent // a bare word: a comparison direction, a dtype
	AttrList
	AttrSharding // <@mesh, [{"dp"}, {}]>
)

// AttrValue is an attribute value before it is checked against an op's schema.
type AttrValue struct {
	Kind  AttrValueKind
	Int   int64
	Float float64
	Bool  bool
	Str   string // AttrString and AttrIdent
	List  []AttrValue
	// Sharding is the value of an AttrSharding.
	Sharding *Sharding
}

func (v AttrValue) String() string {
	switch v.Kind {
	case AttrInt:
		return strconv.FormatInt(v.Int, 10)
	case AttrFloat:
		return FormatFloat(v.Float, F64)
	case AttrBool:
		return strconv.FormatBool(v.Bool)
	case AttrString:
		return strconv.Quote(v.Str)
	case AttrIdent:
		return v.Str
	case AttrList:
		parts := make([]string, len(v.List))
		for i, e := range v.List {
			parts[i] = e.String()
		}
		return "[" + strings.Join(parts, ",") + "]"
	case AttrSharding:
		return v.Sharding.String()
	}
	return "?"
}

func intsValue(xs []int64) AttrValue {
	l := make([]AttrValue, len(xs))
	for i, x := range xs {
		l[i] = AttrValue{Kind: AttrInt, Int: x}
	}
	return AttrValue{Kind: AttrList, List: l}
}

func intField(name string, x int64) AttrField {
	return AttrField{Name: name, Value: AttrValue{Kind: AttrInt, Int: x}}
}

func intsField(name string, xs []int64) AttrField {
	return AttrField{Name: name, Value: intsValue(xs)}
}

func sortFields(fs []AttrField) []AttrField {
	sort.Slice(fs, func(i, j int) bool { return fs[i].Name < fs[j].Name })
	return fs
}

// CmpDir is a comparison direction.
type CmpDir uint8

const (
	CmpEQ CmpDir = iota
	CmpNE
	CmpLT
	CmpLE
	CmpGT
	CmpGE
)

var cmpNames = []string{"eq", "ne", "lt", "le", "gt", "ge"}

func (d CmpDir) String() string { return cmpNames[d] }

// CompareAttr: compare {dir=lt}.
type CompareAttr struct{ Dir CmpDir }

func (a *CompareAttr) Fields() []AttrField {
	return []AttrField{{Name: "dir", Value: AttrValue{Kind: AttrIdent, Str: a.Dir.String()}}}
}

// AxesAttr: reduce_sum {axes=[1], keepdims=true}; keepdims defaults to false.
type AxesAttr struct {
	Axes     []int64
	KeepDims bool
}

func (a *AxesAttr) Fields() []AttrField {
	fs := []AttrField{intsField("axes", a.Axes)}
	if a.KeepDims {
		fs = append(fs, AttrField{Name: "keepdims", Value: AttrValue{Kind: AttrBool, Bool: true}})
	}
	return fs
}

// AxisAttr: one axis (argmax, cumsum, concat, iota, softmax, take, scatter_add, argsort).
type AxisAttr struct{ Axis int64 }

func (a *AxisAttr) Fields() []AttrField { return []AttrField{intField("axis", a.Axis)} }

// DimsAttr: broadcast {dims=[...]}: operand dimension i becomes result dimension Dims[i].
type DimsAttr struct{ Dims []int64 }

func (a *DimsAttr) Fields() []AttrField { return []AttrField{intsField("dims", a.Dims)} }

// PermAttr: transpose {perm=[...]}: result dimension i is operand dimension Perm[i].
type PermAttr struct{ Perm []int64 }

func (a *PermAttr) Fields() []AttrField { return []AttrField{intsField("perm", a.Perm)} }

// SliceAttr: slice {start, limit, stride}; stride defaults to all ones.
type SliceAttr struct{ Start, Limit, Stride []int64 }

func (a *SliceAttr) Fields() []AttrField {
	fs := []AttrField{intsField("limit", a.Limit), intsField("start", a.Start)}
	if !allEqual(a.Stride, 1) {
		fs = append(fs, intsField("stride", a.Stride))
	}
	return fs
}

// PadAttr: pad {low, high, interior}; interior defaults to all zeros. Low and high may be negative.
type PadAttr struct{ Low, High, Interior []int64 }

func (a *PadAttr) Fields() []AttrField {
	fs := []AttrField{intsField("high", a.High)}
	if !allEqual(a.Interior, 0) {
		fs = append(fs, intsField("interior", a.Interior))
	}
	return append(fs, intsField("low", a.Low))
}

// DotAttr: dot_general's dimension numbers. Result dims: batch, lhs free, rhs free.
type DotAttr struct {
	LhsBatch, RhsBatch, LhsContract, RhsContract []int64
	// Algorithm, when set, is the algorithm the program named (dotalg.go).
	Algorithm *DotAlgorithm
}

func (a *DotAttr) Fields() []AttrField {
	fs := []AttrField{
		intsField("lhs_batch", a.LhsBatch),
		intsField("lhs_contract", a.LhsContract),
		intsField("rhs_batch", a.RhsBatch),
		intsField("rhs_contract", a.RhsContract),
	}
	if a.Algorithm != nil {
		fs = append([]AttrField{a.Algorithm.field()}, fs...)
	}
	return fs
}

// DepthAttr: one_hot {depth=N}.
type DepthAttr struct{ Depth int64 }

func (a *DepthAttr) Fields() []AttrField { return []AttrField{intField("depth", a.Depth)} }

// TopKAttr: top_k {k=N}.
type TopKAttr struct{ K int64 }

func (a *TopKAttr) Fields() []AttrField { return []AttrField{intField("k", a.K)} }

// GeluAttr: gelu {approximate=true} selects the tanh approximation; default is exact (erf).
type GeluAttr struct{ Approximate bool }

func (a *GeluAttr) Fields() []AttrField {
	if !a.Approximate {
		return nil
	}
	return []AttrField{{Name: "approximate", Value: AttrValue{Kind: AttrBool, Bool: true}}}
}

// EpsAttr: layer_norm and rms_norm {eps=F}.
type EpsAttr struct{ Eps float64 }

func (a *EpsAttr) Fields() []AttrField {
	return []AttrField{{Name: "eps", Value: AttrValue{Kind: AttrFloat, Float: a.Eps}}}
}

// SizesAttr: dynamic_slice {sizes=[...]}.
type SizesAttr struct{ Sizes []int64 }

func (a *SizesAttr) Fields() []AttrField { return []AttrField{intsField("sizes", a.Sizes)} }

// ConstAttr holds a constant's elements; the printer writes them as a literal, not in braces.
type ConstAttr struct{ Value *Literal }

func (a *ConstAttr) Fields() []AttrField { return nil }

// CallAttr names the callee of call; printed as call @name(...).
type CallAttr struct{ Callee string }

func (a *CallAttr) Fields() []AttrField { return nil }

func allEqual(xs []int64, v int64) bool {
	for _, x := range xs {
		if x != v {
			return false
		}
	}
	return true
}

// attrReader checks written fields against an op's schema while decoding them.
type attrReader struct {
	op     Op
	fields map[string]AttrField
	used   map[string]bool
	errs   []*Error
	pos    Pos
}

func (r *attrReader) errorf(pos Pos, format string, args ...any) {
	if !pos.Known() {
		pos = r.pos
	}
	r.errs = append(r.errs, Errorf(pos, format, args...))
}

func (r *attrReader) get(name string, required bool) (AttrField, bool) {
	f, ok := r.fields[name]
	r.used[name] = true
	if !ok && required {
		r.errorf(r.pos, "%s requires attribute '%s'", r.op, name)
	}
	return f, ok
}

func (r *attrReader) ints(name string, required bool) []int64 {
	f, ok := r.get(name, required)
	if !ok {
		return nil
	}
	if f.Value.Kind != AttrList {
		r.errorf(f.Pos, "attribute '%s' of %s must be a list of integers, got %s", name, r.op, f.Value)
		return nil
	}
	out := make([]int64, 0, len(f.Value.List))
	for _, e := range f.Value.List {
		if e.Kind != AttrInt {
			r.errorf(f.Pos, "attribute '%s' of %s must be a list of integers, got %s", name, r.op, f.Value)
			return nil
		}
		out = append(out, e.Int)
	}
	return out
}

func (r *attrReader) int(name string) int64 {
	f, ok := r.get(name, true)
	if !ok {
		return 0
	}
	if f.Value.Kind != AttrInt {
		r.errorf(f.Pos, "attribute '%s' of %s must be an integer, got %s", name, r.op, f.Value)
	}
	return f.Value.Int
}

func (r *attrReader) bool(name string) bool {
	f, ok := r.get(name, false)
	if !ok {
		return false
	}
	if f.Value.Kind != AttrBool {
		r.errorf(f.Pos, "attribute '%s' of %s must be true or false, got %s", name, r.op, f.Value)
	}
	return f.Value.Bool
}

func (r *attrReader) float(name string) float64 {
	f, ok := r.get(name, true)
	if !ok {
		return 0
	}
	switch f.Value.Kind {
	case AttrFloat:
		return f.Value.Float
	case AttrInt:
		return float64(f.Value.Int)
	}
	r.errorf(f.Pos, "attribute '%s' of %s must be a number, got %s", name, r.op, f.Value)
	return 0
}

func (r *attrReader) cmpDir(name string) CmpDir {
	f, ok := r.get(name, true)
	if !ok {
		return 0
	}
	if f.Value.Kind == AttrIdent {
		for i, n := range cmpNames {
			if n == f.Value.Str {
				return CmpDir(i)
			}
		}
	}
	r.errorf(f.Pos, "attribute 'dir' of %s must be one of eq, ne, lt, le, gt, ge, got %s", r.op, f.Value)
	return 0
}

// BuildAttr checks the fields written for op and returns its typed attribute.
// Rank-dependent defaults (slice strides, pad interior) are filled in by Infer's caller
// through FillDefaults once operand types are known. pos is the op's position, used
// for missing fields.
func BuildAttr(op Op, fields []AttrField, pos Pos) (Attr, error) {
	r := &attrReader{op: op, fields: map[string]AttrField{}, used: map[string]bool{}, pos: pos}
	for _, f := range fields {
		if _, dup := r.fields[f.Name]; dup {
			r.errorf(f.Pos, "attribute '%s' given twice", f.Name)
		}
		r.fields[f.Name] = f
	}
	var a Attr
	if dec := op.Info().decode; dec != nil {
		a = dec(r)
	}
	for _, f := range fields {
		if !r.used[f.Name] {
			r.errorf(f.Pos, "%s has no attribute '%s'", op, f.Name)
		}
	}
	if len(r.errs) > 0 {
		return nil, joinErrors(r.errs)
	}
	return a, nil
}

func joinErrors(errs []*Error) error {
	if len(errs) == 0 {
		return nil
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return &ErrorList{errs}
}

// ErrorList is several diagnostics, one per line, in source order.
type ErrorList struct{ Errs []*Error }

func (l *ErrorList) Error() string {
	parts := make([]string, len(l.Errs))
	for i, e := range l.Errs {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap lets errors.As find the individual diagnostics.
func (l *ErrorList) Unwrap() []error {
	out := make([]error, len(l.Errs))
	for i, e := range l.Errs {
		out[i] = e
	}
	return out
}

// FormatFloat writes v so that it parses back to the same value of dtype dt:
// the shortest decimal, always with a '.' or exponent; inf, -inf and nan spelled out.
// A narrow float (f8, f6, f4) is written exactly, as its float64.
func FormatFloat(v float64, dt DType) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	var s string
	switch {
	case dt == F16 || dt == BF16:
		// The shortest decimal that rounds back to the same half-precision value.
		for prec := 1; prec <= 9; prec++ {
			s = strconv.FormatFloat(v, 'g', prec, 64)
			if f, err := strconv.ParseFloat(s, 64); err == nil && dt.RoundFloat(f) == v {
				break
			}
		}
	case dt == F32:
		s = strconv.FormatFloat(v, 'g', -1, 32)
	default:
		s = strconv.FormatFloat(v, 'g', -1, 64)
	}
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// FormatComplex spells a complex element as (re, im), each part as
// FormatFloat spells it in d's part type: StableHLO's spelling, also .tir's.
func FormatComplex(v complex128, d DType) string {
	p := d.ComplexPart()
	return "(" + FormatFloat(real(v), p) + ", " + FormatFloat(imag(v), p) + ")"
}

// Literal is the element data of a constant, row-major. Float dtypes use Floats,
// integer dtypes and i1 (0 or 1) use Ints, complex dtypes Complex. A single element
// is a splat over the whole type.
type Literal struct {
	Floats  []float64
	Ints    []int64
	Complex []complex128
}

// Len is the number of stored elements (1 for a splat).
func (l *Literal) Len() int {
	if l.Complex != nil {
		return len(l.Complex)
	}
	if l.Floats != nil {
		return len(l.Floats)
	}
	return len(l.Ints)
}

// ComplexAt returns element i as a complex128, repeating a splat; a real
// literal's elements have imaginary part 0.
func (l *Literal) ComplexAt(i int) complex128 {
	if l.Complex == nil {
		return complex(l.Float(i), 0)
	}
	if len(l.Complex) == 1 {
		return l.Complex[0]
	}
	return l.Complex[i]
}

// Float returns element i as a float64 (a complex element's real part), repeating a splat.
func (l *Literal) Float(i int) float64 {
	if l.Complex != nil {
		return real(l.ComplexAt(i))
	}
	if l.Floats != nil {
		if len(l.Floats) == 1 {
			return l.Floats[0]
		}
		return l.Floats[i]
	}
	if len(l.Ints) == 1 {
		return float64(l.Ints[0])
	}
	return float64(l.Ints[i])
}

// Int returns element i as an int64, repeating a splat.
func (l *Literal) Int(i int) int64 {
	if l.Complex != nil {
		return int64(l.Float(i))
	}
	if l.Ints != nil {
		if len(l.Ints) == 1 {
			return l.Ints[0]
		}
		return l.Ints[i]
	}
	if len(l.Floats) == 1 {
		return int64(l.Floats[0])
	}
	return int64(l.Floats[i])
}

// Equal reports whether two literals hold the same elements (NaNs compare by bits).
func (l *Literal) Equal(m *Literal) bool {
	if len(l.Floats) != len(m.Floats) || len(l.Ints) != len(m.Ints) || len(l.Complex) != len(m.Complex) {
		return false
	}
	for i, c := range l.Complex {
		d := m.Complex[i]
		if math.Float64bits(real(c)) != math.Float64bits(real(d)) || math.Float64bits(imag(c)) != math.Float64bits(imag(d)) {
			return false
		}
	}
	for i := range l.Floats {
		if math.Float64bits(l.Floats[i]) != math.Float64bits(m.Floats[i]) {
			return false
		}
	}
	for i := range l.Ints {
		if l.Ints[i] != m.Ints[i] {
			return false
		}
	}
	return true
}

// NewLiteral makes a literal for type t from float values, rounding each into t's dtype
// (floats to nearest even, integers wrapped, i1 to 0 or 1). One value is a splat.
func NewLiteral(t Type, vals []float64) *Literal {
	if t.DType.IsComplex() {
		cs := make([]complex128, len(vals))
		for i, v := range vals {
			cs[i] = t.DType.RoundComplex(complex(v, 0))
		}
		return &Literal{Complex: cs}
	}
	if t.DType.IsFloatValued() {
		fs := make([]float64, len(vals))
		for i, v := range vals {
			fs[i] = t.DType.RoundFloat(v)
		}
		return &Literal{Floats: fs}
	}
	is := make([]int64, len(vals))
	for i, v := range vals {
		is[i] = t.DType.WrapInt(int64(v))
	}
	return &Literal{Ints: is}
}

// NewIntLiteral makes a literal for an integer or i1 type from int values, wrapped into range.
func NewIntLiteral(t Type, vals []int64) *Literal {
	if t.DType.IsComplex() {
		return NewLiteral(t, intsAsFloats(vals, t.DType.ComplexPart()))
	}
	if t.DType.IsFloatValued() {
		fs := make([]float64, len(vals))
		for i, v := range vals {
			fs[i] = t.DType.RoundFloat(float64(v))
		}
		return &Literal{Floats: fs}
	}
	is := make([]int64, len(vals))
	for i, v := range vals {
		is[i] = t.DType.WrapInt(v)
	}
	return &Literal{Ints: is}
}

// intsAsFloats converts integer values to the float type p with one rounding
// (int64 to f32 directly, not through f64), as converting them does.
func intsAsFloats(vals []int64, p DType) []float64 {
	fs := make([]float64, len(vals))
	for i, v := range vals {
		fs[i] = float64(v)
		if p == F32 {
			fs[i] = float64(float32(v))
		}
	}
	return fs
}

func (l *Literal) String() string {
	if l.Complex != nil {
		return fmt.Sprintf("%v", l.Complex)
	}
	return fmt.Sprintf("%v%v", l.Floats, l.Ints)
}
