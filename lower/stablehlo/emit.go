package stablehlo

import (
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// hv is a StableHLO SSA value as the emitter tracks it: how it is referred to
// (%3, %arg0, %5#1) and its type. Every helper takes and returns hv, so a type
// is always at hand when a line is written.
type hv struct {
	ref string
	t   ir.Type
}

// emitter writes one function's body. Value numbers (%N) and block-argument
// numbers (%argN) are each allocated from one counter per function, regions
// included, so no name is ever defined twice in a function and the text is a
// pure function of the IR.
type emitter struct {
	b       *strings.Builder
	indent  string
	next    int // next %N
	nextArg int // next %argN
	vals    map[*ir.Value]hv
	syms    map[string]string // ir function name -> symbol in the output
	// nativeRagged writes ragged_dot as chlo.ragged_dot (Options.NativeRaggedDot).
	nativeRagged bool
	// precision is every product's precision (Options.Precision), spelled
	// as StableHLO spells it.
	precision string
	// regions is how many while or case regions enclose what is emitted.
	regions int
}

func newEmitter(b *strings.Builder, syms map[string]string) *emitter {
	return &emitter{b: b, indent: "    ", vals: map[*ir.Value]hv{}, syms: syms, precision: "DEFAULT"}
}

// line writes one line at the current indentation.
func (e *emitter) line(parts ...string) {
	e.b.WriteString(e.indent)
	for _, p := range parts {
		e.b.WriteString(p)
	}
	e.b.WriteByte('\n')
}

// fresh allocates the next value name.
func (e *emitter) fresh() string {
	s := "%" + strconv.Itoa(e.next)
	e.next++
	return s
}

// freshArg allocates the next block-argument name.
func (e *emitter) freshArg() string {
	s := "%arg" + strconv.Itoa(e.nextArg)
	e.nextArg++
	return s
}

// def writes "%N = text" and returns the new value of type t.
func (e *emitter) def(t ir.Type, text ...string) hv {
	r := e.fresh()
	e.line(append([]string{r, " = "}, text...)...)
	return hv{r, t}
}

// defN writes "%N:k = text" (or "%N = text" for one result) and returns the results.
func (e *emitter) defN(ts []ir.Type, text ...string) []hv {
	switch len(ts) {
	case 0:
		e.line(text...)
		return nil
	case 1:
		return []hv{e.def(ts[0], text...)}
	}
	r := e.fresh()
	e.line(append([]string{r, ":", strconv.Itoa(len(ts)), " = "}, text...)...)
	out := make([]hv, len(ts))
	for i, t := range ts {
		out[i] = hv{r + "#" + strconv.Itoa(i), t}
	}
	return out
}

// elemType spells a dtype as StableHLO does: integers are signless (i32) or
// unsigned (ui32), booleans are i1.
func elemType(d ir.DType) string {
	switch d {
	case ir.U8:
		return "ui8"
	case ir.U32:
		return "ui32"
	case ir.C64, ir.C128:
		return "complex<" + d.ComplexPart().String() + ">"
	case ir.U16:
		return "ui16"
	case ir.U64:
		return "ui64"
	case ir.U2:
		return "ui2"
	case ir.U4:
		return "ui4"
	}
	if n, ok := narrowNames[d]; ok {
		return n
	}
	return d.String()
}

// narrowNames are MLIR's spellings of the narrow float types.
var narrowNames = map[ir.DType]string{
	ir.F8E4M3FN: "f8E4M3FN", ir.F8E5M2: "f8E5M2", ir.F8E4M3FNUZ: "f8E4M3FNUZ", ir.F8E5M2FNUZ: "f8E5M2FNUZ",
	ir.F8E4M3B11FNUZ: "f8E4M3B11FNUZ", ir.F8E4M3: "f8E4M3", ir.F8E3M4: "f8E3M4", ir.F8E8M0FNU: "f8E8M0FNU",
	ir.F6E2M3FN: "f6E2M3FN", ir.F6E3M2FN: "f6E3M2FN", ir.F4E2M1FN: "f4E2M1FN",
}

// tensorType spells tensor<2x3xf32>, or tensor<f32> for a scalar. Shapes are
// static here: Lower rejects symbolic ones before emitting anything.
func tensorType(t ir.Type) string {
	var b strings.Builder
	b.WriteString("tensor<")
	for _, d := range t.Shape {
		b.WriteString(strconv.FormatInt(d.Size, 10))
		b.WriteByte('x')
	}
	b.WriteString(elemType(t.DType))
	b.WriteByte('>')
	return b.String()
}

func typeList(ts []ir.Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = tensorType(t)
	}
	return strings.Join(parts, ", ")
}

// resultTypes spells a result list: bare for one type, parenthesised otherwise.
func resultTypes(ts []ir.Type) string {
	if len(ts) == 1 {
		return tensorType(ts[0])
	}
	return "(" + typeList(ts) + ")"
}

// funcType spells (a, b) -> r, the functional type of ops whose types differ.
func funcType(args []hv, res []ir.Type) string {
	return "(" + typeList(types(args)) + ") -> " + resultTypes(res)
}

func types(vs []hv) []ir.Type {
	ts := make([]ir.Type, len(vs))
	for i, v := range vs {
		ts[i] = v.t
	}
	return ts
}

func refs(vs []hv) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.ref
	}
	return strings.Join(parts, ", ")
}

func ints(xs []int64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func denseArray(xs []int64) string {
	if len(xs) == 0 {
		return "array<i64>"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return "array<i64: " + strings.Join(parts, ", ") + ">"
}

// --- One-line op helpers. Each writes one op and returns its result. ---

// op1 writes a unary elementwise op whose result type is its operand's.
func (e *emitter) op1(name string, x hv) hv {
	return e.def(x.t, name, " ", x.ref, " : ", tensorType(x.t))
}

// op2 writes a binary elementwise op over operands of one type.
func (e *emitter) op2(name string, x, y hv) hv {
	return e.def(x.t, name, " ", x.ref, ", ", y.ref, " : ", tensorType(x.t))
}

func (e *emitter) add(x, y hv) hv { return e.op2("stablehlo.add", x, y) }
func (e *emitter) sub(x, y hv) hv { return e.op2("stablehlo.subtract", x, y) }
func (e *emitter) mul(x, y hv) hv { return e.op2("stablehlo.multiply", x, y) }
func (e *emitter) div(x, y hv) hv { return e.op2("stablehlo.divide", x, y) }

// convert changes x's dtype; converting to the same dtype writes nothing.
func (e *emitter) convert(x hv, d ir.DType) hv {
	if x.t.DType == d {
		return x
	}
	t := x.t.WithDType(d)
	return e.def(t, "stablehlo.convert ", x.ref, " : ", funcType([]hv{x}, []ir.Type{t}))
}

// reshape writes a reshape unless the shape is already t's.
func (e *emitter) reshape(x hv, t ir.Type) hv {
	t = x.t.WithShape(t.Shape)
	if x.t.SameShape(t) {
		return hv{x.ref, t}
	}
	return e.def(t, "stablehlo.reshape ", x.ref, " : ", funcType([]hv{x}, []ir.Type{t}))
}

// broadcast writes broadcast_in_dim: operand dim i becomes result dim dims[i].
func (e *emitter) broadcast(x hv, t ir.Type, dims []int64) hv {
	t = x.t.WithShape(t.Shape)
	return e.def(t, "stablehlo.broadcast_in_dim ", x.ref, ", dims = ", ints(dims), " : ", funcType([]hv{x}, []ir.Type{t}))
}

// compareType is the compare_type StableHLO wants for a dtype.
func compareType(d ir.DType) string {
	switch {
	case d.IsFloatValued(), d.IsComplex():
		return "FLOAT"
	case d.IsSigned():
		return "SIGNED"
	}
	return "UNSIGNED" // unsigned integers and i1
}

// compare writes compare DIR with the compare type kind (FLOAT, TOTALORDER, SIGNED, UNSIGNED).
func (e *emitter) compareAs(dir, kind string, x, y hv) hv {
	t := x.t.WithDType(ir.I1)
	return e.def(t, "stablehlo.compare ", dir, ", ", x.ref, ", ", y.ref, ", ", kind, " : ",
		funcType([]hv{x, y}, []ir.Type{t}))
}

func (e *emitter) compare(dir string, x, y hv) hv {
	return e.compareAs(dir, compareType(x.t.DType), x, y)
}

// selectOp writes select; the predicate is i1 of the branches' shape or i1[].
func (e *emitter) selectOp(p, a, b hv) hv {
	return e.def(a.t, "stablehlo.select ", p.ref, ", ", a.ref, ", ", b.ref, " : ", tensorType(p.t), ", ", tensorType(a.t))
}

// iota writes iota along dim with result type t.
func (e *emitter) iota(t ir.Type, dim int64) hv {
	return e.def(t, "stablehlo.iota dim = ", strconv.FormatInt(dim, 10), " : ", tensorType(t))
}

// slice writes a static slice [start:limit:stride, ...].
func (e *emitter) slice(x hv, start, limit, stride []int64) hv {
	parts := make([]string, len(start))
	shape := make([]ir.Dim, len(start))
	for i := range start {
		s := strconv.FormatInt(start[i], 10) + ":" + strconv.FormatInt(limit[i], 10)
		if stride[i] != 1 {
			s += ":" + strconv.FormatInt(stride[i], 10)
		}
		parts[i] = s
		shape[i] = ir.D((limit[i] - start[i] + stride[i] - 1) / stride[i])
	}
	t := x.t.WithShape(shape)
	return e.def(t, "stablehlo.slice ", x.ref, " [", strings.Join(parts, ", "), "] : ", funcType([]hv{x}, []ir.Type{t}))
}

// --- Regions. ---

// region opens a block with fresh arguments of the given types, one level deeper;
// the caller writes its body and calls endRegion.
func (e *emitter) regionArgs(ts []ir.Type) []hv {
	out := make([]hv, len(ts))
	for i, t := range ts {
		out[i] = hv{e.freshArg(), t}
	}
	return out
}

// blockHeader writes ^bb0(%argA: T, ...): for a generic-form region.
func (e *emitter) blockHeader(args []hv) {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.ref + ": " + tensorType(a.t)
	}
	e.line("^bb0(", strings.Join(parts, ", "), "):")
}

// ret writes stablehlo.return inside a region.
func (e *emitter) ret(vs ...hv) {
	e.line("stablehlo.return ", refs(vs), " : ", typeList(types(vs)))
}

func (e *emitter) push() { e.indent += "  " }
func (e *emitter) pop()  { e.indent = e.indent[:len(e.indent)-2] }

// binaryBody writes the one-op region of a reduce_window or scatter: ^bb0(a, b): op(a, b).
func (e *emitter) binaryBody(op string, d ir.DType) {
	s := ir.Scalar(d)
	args := e.regionArgs([]ir.Type{s, s})
	e.blockHeader(args)
	e.push()
	r := e.op2(op, args[0], args[1])
	e.ret(r)
	e.pop()
}
