package ir

import (
	"strconv"
	"strings"
)

// Print returns the canonical .tir text of m: functions in order, separated by a
// blank line. The text is deterministic: source names are kept, other values are
// numbered in print order, attributes are sorted, and no IDs appear.
func Print(m *Module) string {
	var b strings.Builder
	if m.Replicas > 1 {
		b.WriteString("replicas = " + strconv.FormatInt(m.Replicas, 10) + "\n")
	}
	for _, x := range m.Meshes {
		b.WriteString("mesh @" + x.Name + " = " + x.String() + "\n")
	}
	if (len(m.Meshes) > 0 || m.Replicas > 1) && len(m.Funcs) > 0 {
		b.WriteByte('\n')
	}
	for i, f := range m.Funcs {
		if i > 0 {
			b.WriteByte('\n')
		}
		printFunc(&b, f)
	}
	return b.String()
}

// PrintFunc returns the canonical .tir text of one function.
func PrintFunc(f *Func) string {
	var b strings.Builder
	printFunc(&b, f)
	return b.String()
}

// ValueNames returns, for every value of f, the name Print writes for it
// (without the %): source names kept, the others numbered in print order.
// Tools that refer to values (cost reports, dumps) use it to agree with the
// printed .tir.
func ValueNames(f *Func) map[*Value]string { return newNamer(f).names }

type namer struct {
	names  map[*Value]string
	taken  map[string]bool // every name given, in any scope: numbers are unique in the function
	suffix map[string]int  // by kept name: the least suffix that may be free
	next   int
}

// nameScope is the set of names one block's values must not repeat. The
// regions of while and case are scopes of their own (the parser lets their
// names shadow outer ones, since they capture nothing); a fusion body shares
// its enclosing block's scope and must avoid every enclosing one too, as the
// parser requires.
type nameScope struct {
	taken  map[string]bool
	parent *nameScope
}

// free reports whether name can be given in s: unused in s, and for a
// fusion body's value in every scope around it as well.
func (s *nameScope) free(name string, fusion bool) bool {
	for ; s != nil; s = s.parent {
		if s.taken[name] {
			return false
		}
		if !fusion {
			return true
		}
	}
	return true
}

// scoped is a value to name with the scope it is named in.
type scoped struct {
	v      *Value
	s      *nameScope
	fusion bool
}

// newNamer assigns every value of f its printed name. Kept names come first so
// that numbers for unnamed values never collide with them.
func newNamer(f *Func) *namer {
	n := &namer{names: map[*Value]string{}, taken: map[string]bool{}, suffix: map[string]int{}}
	order := scopedValues(f)
	for _, x := range order {
		v := x.v
		if v.Name == "" || isNumber(v.Name) {
			continue
		}
		name := v.Name
		if !x.s.free(name, x.fusion) {
			// The first free suffix; those below suffix[v.Name] were
			// taken when it was set (names are never freed), so n values
			// sharing a name cost O(n), not O(n²).
			k := max(n.suffix[v.Name], 1)
			for !x.s.free(v.Name+"_"+strconv.Itoa(k), x.fusion) {
				k++
			}
			name = v.Name + "_" + strconv.Itoa(k)
			n.suffix[v.Name] = k + 1
		}
		n.give(x, name)
	}
	for _, x := range order {
		if _, ok := n.names[x.v]; ok {
			continue
		}
		for n.taken[strconv.Itoa(n.next)] {
			n.next++
		}
		name := strconv.Itoa(n.next)
		n.next++
		n.give(x, name)
	}
	return n
}

func (n *namer) give(x scoped, name string) {
	n.taken[name] = true
	x.s.taken[name] = true
	n.names[x.v] = name
}

// scopedValues lists f's values in print order, each with its scope: a
// instruction's results before its regions' parameters, which are printed
// after them on its line.
func scopedValues(f *Func) []scoped {
	var order []scoped
	root := &nameScope{taken: map[string]bool{}}
	for _, p := range f.Params {
		order = append(order, scoped{v: p, s: root})
	}
	var walk func(b *Block, s *nameScope, fusion bool)
	walk = func(b *Block, s *nameScope, fusion bool) {
		for _, in := range b.Instrs {
			for _, r := range in.Results {
				order = append(order, scoped{v: r, s: s, fusion: fusion})
			}
			for _, r := range in.Regions {
				rs, rf := s, true
				if IsControl(in.Op) {
					rs, rf = &nameScope{taken: map[string]bool{}, parent: s}, false
				}
				for _, p := range r.Params {
					order = append(order, scoped{v: p, s: rs, fusion: rf})
				}
				walk(r, rs, rf)
			}
		}
	}
	walk(f.Body, root, false)
	return order
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func (n *namer) ref(v *Value) string {
	if name, ok := n.names[v]; ok {
		return "%" + name
	}
	return "%<undefined>"
}

func printFunc(b *strings.Builder, f *Func) {
	n := newNamer(f)
	b.WriteString("func @")
	b.WriteString(f.Name)
	b.WriteByte('(')
	for i, p := range f.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n.ref(p))
		b.WriteString(": ")
		b.WriteString(p.Type.String())
		if f.ArgShardings != nil {
			writeSharding(b, f.ArgShardings[i])
		}
	}
	b.WriteString(") -> ")
	if len(f.Results) != 1 {
		b.WriteByte('(')
	}
	for i, t := range f.Results {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.String())
		if i < len(f.ResultShardings) {
			writeSharding(b, f.ResultShardings[i])
		}
	}
	if len(f.Results) != 1 {
		b.WriteByte(')')
	}
	b.WriteString(" {\n")
	printBlock(b, n, f.Body, "  ")
	b.WriteString("}\n")
}

// writeSharding writes a parameter's or result's annotation, if it has one.
func writeSharding(b *strings.Builder, s *Sharding) {
	if s != nil {
		b.WriteString(" {sharding=" + s.String() + "}")
	}
}

func writeFields(b *strings.Builder, a Attr) {
	fs := a.Fields()
	if len(fs) == 0 {
		return
	}
	b.WriteString(" {")
	for i, f := range sortFields(fs) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Name)
		b.WriteByte('=')
		b.WriteString(f.Value.String())
	}
	b.WriteByte('}')
}

func writeTypes(b *strings.Builder, ts []Type) {
	for i, t := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.String())
	}
}

func printBlock(b *strings.Builder, n *namer, blk *Block, indent string) {
	for _, in := range blk.Instrs {
		b.WriteString(indent)
		printInstr(b, n, in, indent)
		b.WriteByte('\n')
	}
}

func printInstr(b *strings.Builder, n *namer, in *Instr, indent string) {
	for i, r := range in.Results {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n.ref(r))
	}
	if len(in.Results) > 0 {
		b.WriteString(" = ")
	}
	b.WriteString(in.Op.String())
	switch a := in.Attr.(type) {
	case *ConstAttr:
		b.WriteByte(' ')
		writeLiteral(b, a.Value, in.Results[0].Type)
	case *CallAttr:
		b.WriteString(" @")
		b.WriteString(a.Callee)
		b.WriteByte('(')
		writeRefs(b, n, in.Args)
		b.WriteByte(')')
	case *CustomCallAttr:
		b.WriteString(" @" + a.Target + "(")
		writeRefs(b, n, in.Args)
		b.WriteByte(')')
		writeFields(b, a)
	default:
		if len(in.Args) > 0 {
			b.WriteByte(' ')
			writeRefs(b, n, in.Args)
		}
		if in.Attr != nil {
			writeFields(b, in.Attr)
		}
	}
	if len(in.Results) > 0 {
		b.WriteString(" : ")
		types := make([]Type, len(in.Results))
		for i, r := range in.Results {
			types[i] = r.Type
		}
		writeTypes(b, types)
	}
	// A fusion's region closes at the instruction's indent; the regions of
	// while and case are continuations of the instruction's line, indented
	// one step, with their bodies a step further.
	inner, close := indent+"  ", indent
	if IsControl(in.Op) {
		inner, close = indent+"    ", indent+"  "
	}
	for i, r := range in.Regions {
		if in.Op == OpWhile && i < len(whileLabels) {
			b.WriteByte(' ')
			b.WriteString(whileLabels[i])
		}
		b.WriteString(" (")
		for i, p := range r.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n.ref(p))
			b.WriteString(": ")
			b.WriteString(p.Type.String())
		}
		b.WriteString(") {\n")
		printBlock(b, n, r, inner)
		b.WriteString(close)
		b.WriteByte('}')
	}
}

// whileLabels name a while's regions in .tir, in order.
var whileLabels = [...]string{WhileCond: "cond", WhileBody: "do"}

func writeRefs(b *strings.Builder, n *namer, vs []*Value) {
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n.ref(v))
	}
}

// writeLiteral writes a scalar when all elements are equal (a splat), else a
// nested list following t's shape.
func writeLiteral(b *strings.Builder, l *Literal, t Type) {
	count, _ := t.NumElements() // static: the verifier requires it for constants
	elem := func(i int) string {
		switch {
		case t.DType.IsComplex():
			return FormatComplex(l.ComplexAt(i), t.DType)
		case t.DType.IsFloatValued():
			return FormatFloat(l.Float(i), t.DType)
		case t.DType == I1:
			return strconv.FormatBool(l.Int(i) != 0)
		case t.DType == U64: // held as the bit pattern
			return strconv.FormatUint(uint64(l.Int(i)), 10)
		}
		return strconv.FormatInt(l.Int(i), 10)
	}
	splat := l.Len() > 0
	for i := 1; i < l.Len() && splat; i++ {
		splat = elem(i) == elem(0)
	}
	if splat && (l.Len() == 1 || count > 1) {
		b.WriteString(elem(0))
		return
	}
	WriteNested(b, t.Dims(), elem)
}

// WriteNested writes the elements of a row-major array of shape dims as nested
// lists, [[e0, e1], [e2, e3]], with elem(i) spelling element i. A zero-size
// dimension writes []. Both the .tir printer and the StableHLO lowering use it.
func WriteNested(b *strings.Builder, dims []int64, elem func(i int) string) {
	var rec func(d int, off int64)
	rec = func(d int, off int64) {
		if d == len(dims) {
			b.WriteString(elem(int(off)))
			return
		}
		stride := int64(1)
		for _, n := range dims[d+1:] {
			stride *= n
		}
		b.WriteByte('[')
		for i := int64(0); i < dims[d]; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			rec(d+1, off+i*stride)
		}
		b.WriteByte(']')
	}
	rec(0, 0)
}
