package passes

import (
	"hash/fnv"
	"math"
	"strconv"

	"github.com/tpucc/tpucc/ir"
)

// cse merges an instruction into an earlier one that computes the same thing:
// the same op, attribute fields, operands (as values, in either order for a
// commutative op) and result types (layouts included). Constants are the same
// when their elements are, bit for bit (so -0.0 and +0.0 stay apart, and a
// splat equals the same value written out in full). One forward sweep over a
// straight-line body is global value numbering here: every earlier
// instruction dominates every later one. The merged instruction stays, dead,
// for dce; its users are pointed at the survivor as the sweep reaches them.
func cse(f *ir.Func, c *Context) (bool, error) {
	repl := make([]*ir.Value, f.NumValues())
	table := map[uint64][]*ir.Instr{} // looked up only, never iterated
	changed := false
	for _, in := range f.Body.Instrs {
		remapArgs(in, repl)
		if !cseCandidate(in) {
			continue
		}
		h := hashInstr(in)
		var match *ir.Instr
		for _, prev := range table[h] {
			if sameComputation(prev, in) {
				match = prev
				break
			}
		}
		if match == nil {
			table[h] = append(table[h], in)
			continue
		}
		for i, r := range in.Results {
			repl[r.ID] = match.Results[i]
		}
		c.Count(in.Op.String())
		changed = true
	}
	return changed, nil
}

// remapArgs points in's operands, and those inside its regions, at the
// survivors of earlier merges.
func remapArgs(in *ir.Instr, repl []*ir.Value) {
	for i, a := range in.Args {
		if a.ID < len(repl) && repl[a.ID] != nil {
			in.Args[i] = repl[a.ID]
		}
	}
	for _, r := range in.Regions {
		r.Walk(func(x *ir.Instr) {
			for i, a := range x.Args {
				if a.ID < len(repl) && repl[a.ID] != nil {
					x.Args[i] = repl[a.ID]
				}
			}
		})
	}
}

// hasSideEffects reports whether in does more than compute its results (a
// custom_call marked has_side_effect). cse, dce and licm ask, so such an
// instruction is neither merged, dropped nor moved.
func hasSideEffects(in *ir.Instr) bool { return ir.HasSideEffects(in) }

// cseCandidate: an instruction with results, without regions (a body would
// need comparing too), and without side effects.
func cseCandidate(in *ir.Instr) bool {
	return len(in.Results) > 0 && len(in.Regions) == 0 && !hasSideEffects(in)
}

// hashInstr is a hash consistent with sameComputation.
func hashInstr(in *ir.Instr) uint64 {
	h := fnv.New64a()
	w := func(s string) { h.Write([]byte(s)); h.Write([]byte{0}) }
	w(in.Op.String())
	for _, r := range in.Results {
		w(r.Type.String())
	}
	ids := make([]int, len(in.Args))
	for i, a := range in.Args {
		ids[i] = a.ID
	}
	if in.Op.Info().Commutative && len(ids) == 2 && ids[0] > ids[1] {
		ids[0], ids[1] = ids[1], ids[0]
	}
	for _, id := range ids {
		w(strconv.Itoa(id))
	}
	switch a := in.Attr.(type) {
	case *ir.ConstAttr:
		// The first and last element stand for the literal; sameComputation decides.
		n, _ := in.Result().Type.NumElements()
		if a.Value.Len() > 0 && n > 0 {
			w(elementKey(a.Value, 0))
			w(elementKey(a.Value, int(n-1)))
		}
	case *ir.CallAttr:
		w(a.Callee)
	case *ir.CustomCallAttr:
		w(a.Target)
		for _, f := range a.Fields() {
			w(f.Name)
			w(f.Value.String())
		}
	case nil:
	default:
		for _, f := range a.Fields() {
			w(f.Name)
			w(f.Value.String())
		}
	}
	return h.Sum64()
}

// elementKey spells element i exactly (floats by their bits).
func elementKey(l *ir.Literal, i int) string {
	if l.Complex != nil {
		c := l.ComplexAt(i)
		return strconv.FormatUint(math.Float64bits(real(c)), 16) + "," + strconv.FormatUint(math.Float64bits(imag(c)), 16)
	}
	if l.Floats != nil {
		return strconv.FormatUint(math.Float64bits(l.Float(i)), 16)
	}
	return strconv.FormatInt(l.Int(i), 10)
}

// sameElement compares element i of two literals of one kind as elementKey
// spells them (floats by their bits), without spelling them.
func sameElement(x, y *ir.Literal, i int) bool {
	if x.Complex != nil {
		return sameComplexBits(x.ComplexAt(i), y.ComplexAt(i))
	}
	if x.Floats != nil {
		return math.Float64bits(x.Float(i)) == math.Float64bits(y.Float(i))
	}
	return x.Int(i) == y.Int(i)
}

// sameComputation reports whether b computes what a computes.
func sameComputation(a, b *ir.Instr) bool {
	if a.Op != b.Op || len(a.Args) != len(b.Args) || len(a.Results) != len(b.Results) {
		return false
	}
	for i := range a.Results {
		if !a.Results[i].Type.Equal(b.Results[i].Type) {
			return false
		}
	}
	if !sameArgs(a, b) {
		return false
	}
	return sameAttr(a, b)
}

func sameArgs(a, b *ir.Instr) bool {
	same := true
	for i := range a.Args {
		same = same && a.Args[i] == b.Args[i]
	}
	if same {
		return true
	}
	return a.Op.Info().Commutative && len(a.Args) == 2 && a.Args[0] == b.Args[1] && a.Args[1] == b.Args[0]
}

func sameAttr(a, b *ir.Instr) bool {
	switch x := a.Attr.(type) {
	case nil:
		return b.Attr == nil
	case *ir.ConstAttr:
		y, ok := b.Attr.(*ir.ConstAttr)
		if !ok {
			return false
		}
		if x.Value.Len() == 0 || y.Value.Len() == 0 {
			return x.Value.Len() == y.Value.Len()
		}
		if (x.Value.Floats != nil) != (y.Value.Floats != nil) || (x.Value.Complex != nil) != (y.Value.Complex != nil) {
			return false
		}
		// A literal stores one element (a splat) or all of them, so the
		// stored elements of the longer one are every distinct position:
		// two splats compare once, not once per element of their shape
		// (a [8, 4096, 4096] mask constant made cse take most of a
		// 30B-A3B export).
		n := max(x.Value.Len(), y.Value.Len())
		for i := 0; i < n; i++ {
			if !sameElement(x.Value, y.Value, i) {
				return false
			}
		}
		return true
	case *ir.CallAttr:
		y, ok := b.Attr.(*ir.CallAttr)
		return ok && x.Callee == y.Callee
	case *ir.CustomCallAttr:
		y, ok := b.Attr.(*ir.CustomCallAttr)
		if !ok || x.Target != y.Target {
			return false
		}
	}
	if b.Attr == nil {
		return false
	}
	fa, fb := a.Attr.Fields(), b.Attr.Fields()
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i].Name != fb[i].Name || fa[i].Value.String() != fb[i].Value.String() {
			return false
		}
	}
	return true
}
