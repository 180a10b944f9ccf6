package ir

import "fmt"

// FusionKind says what a fusion's kernel is rooted at, as XLA names it: a
// loop fusion is elementwise work over its output, an input fusion is rooted
// at a reduction (or a composite with reductions: softmax, the norms) and
// reads its inputs in the reduction's order, an output fusion is rooted at a
// dot_general with an elementwise epilogue.
type FusionKind uint8

const (
	FusionLoop FusionKind = iota
	FusionInput
	FusionOutput
)

var fusionKindNames = []string{"loop", "input", "output"}

func (k FusionKind) String() string {
	if int(k) < len(fusionKindNames) {
		return fusionKindNames[k]
	}
	return "?"
}

// FusionAttr: fusion {kind=loop}.
type FusionAttr struct{ Kind FusionKind }

func (a *FusionAttr) Fields() []AttrField {
	return []AttrField{{Name: "kind", Value: AttrValue{Kind: AttrIdent, Str: a.Kind.String()}}}
}

func decodeFusion(r *attrReader) Attr {
	f, ok := r.get("kind", true)
	if !ok {
		return &FusionAttr{}
	}
	if f.Value.Kind == AttrIdent {
		for i, n := range fusionKindNames {
			if n == f.Value.Str {
				return &FusionAttr{Kind: FusionKind(i)}
			}
		}
	}
	r.errorf(f.Pos, "attribute 'kind' of %s must be one of loop, input, output, got %s", r.op, f.Value)
	return &FusionAttr{}
}

// inferFusion takes the written result types: they are the region's return
// types, which the verifier checks (Infer sees operand types only).
func inferFusion(c *inferCtx) []Type {
	if c.hint == nil {
		return c.fail("fusion needs its result types written after ':'")
	}
	return c.hint
}

// verifyRegions checks a fusion's one region: its parameters match the
// operands 1:1 in type; its body is straight-line, uses only its own
// parameters and values (no captures of outer values), holds no call and no
// nested fusion, and ends in one return whose types are the fusion's result
// types. Other instructions must have no region.
func verifyRegions(m *Module, f *Func, n *namer, in *Instr) []*Error {
	rc := &regionCheck{m: m, f: f, n: n, in: in}
	if in.Op != OpFusion {
		if len(in.Regions) > 0 {
			rc.bad(in.Pos, "%s cannot have a region", in.Op)
		}
		return rc.errs
	}
	if len(in.Regions) != 1 {
		rc.bad(in.Pos, "fusion must have exactly 1 region, got %d", len(in.Regions))
		return rc.errs
	}
	r := in.Regions[0]
	if r.Parent != in {
		rc.bad(in.Pos, "internal: fusion region does not point back to its fusion")
	}
	if !rc.params(r) {
		return rc.errs
	}
	for i, x := range r.Instrs {
		rc.instr(r, i, x)
	}
	if r.Terminator() == nil {
		rc.bad(in.Pos, "fusion body does not end with return")
	}
	return rc.errs
}

// regionCheck is the state of verifying one fusion's region: local marks
// the value IDs defined so far inside it (its parameters first).
type regionCheck struct {
	m     *Module
	f     *Func
	n     *namer
	in    *Instr
	local map[int]bool // a map, not a slice of f.NumValues(): one per fusion made verifying n fusions O(n²)
	errs  []*Error
}

// bad records an error at pos, or at the fusion (or the function) when pos
// is unknown.
func (rc *regionCheck) bad(pos Pos, format string, args ...any) {
	if !pos.Known() {
		pos = rc.in.Pos
	}
	if !pos.Known() {
		pos = rc.f.Pos
	}
	rc.errs = append(rc.errs, Errorf(pos, format, args...))
}

func (rc *regionCheck) inRange(v *Value) bool {
	return v != nil && v.ID >= 0 && v.ID < rc.f.NumValues()
}

// params checks that the region's parameters match the operands 1:1 in
// type; false when the region cannot be checked further.
func (rc *regionCheck) params(r *Block) bool {
	in := rc.in
	if len(r.Params) != len(in.Args) {
		rc.bad(in.Pos, "fusion has %s, but its region has %s", plural(len(in.Args), "operand"), plural(len(r.Params), "parameter"))
		return false
	}
	rc.local = map[int]bool{}
	for i, p := range r.Params {
		if !rc.inRange(p) {
			rc.bad(in.Pos, "internal: region parameter ID out of range in @%s", rc.f.Name)
			return false
		}
		if a := in.Args[i]; a != nil && !p.Type.Equal(a.Type) {
			rc.bad(p.Pos, "fusion region parameter %s is %s, but operand %d is %s", rc.n.ref(p), p.Type, i, a.Type)
		}
		rc.local[p.ID] = true
	}
	return true
}

// instr checks the body's instruction i: its operands are the region's own,
// it is not a call or a nested fusion, a return comes last with the fusion's
// result types, and it is otherwise well typed and well linked.
func (rc *regionCheck) instr(r *Block, i int, x *Instr) {
	for _, a := range x.Args {
		if rc.inRange(a) && rc.local[a.ID] {
			continue
		}
		if rc.inRange(a) && isOuter(a, r) {
			rc.bad(x.Pos, "fusion body uses %s from outside its region", rc.n.ref(a))
			continue
		}
		name := "a value"
		if a != nil {
			name = rc.n.ref(a)
		}
		rc.bad(x.Pos, "%s uses %s before it is defined", x.Op, name)
	}
	switch x.Op {
	case OpReturn:
		rc.ret(r, i, x)
		return
	case OpCall, OpFusion, OpWhile, OpCase:
		rc.bad(x.Pos, "a fusion body cannot contain %s", x.Op)
		for _, res := range x.Results {
			rc.local[res.ID] = true // its uses are not errors of their own
		}
		return
	}
	if len(x.Regions) > 0 {
		rc.bad(x.Pos, "%s cannot have a region", x.Op)
	}
	if x.Block != r {
		rc.bad(x.Pos, "internal: %s in a fusion body does not point back to it", x.Op)
	}
	if err := checkTypes(rc.m, x); err != nil {
		rc.bad(x.Pos, "%v", err)
	}
	for _, res := range x.Results {
		if !rc.inRange(res) || res.Def != x {
			rc.bad(x.Pos, "internal: result of %s does not point back to it", x.Op)
			continue
		}
		if rc.local[res.ID] {
			rc.bad(res.Pos, "internal: value ID %d defined twice in @%s", res.ID, rc.f.Name)
		}
		rc.local[res.ID] = true
	}
}

// ret checks the body's return: last, and returning the fusion's result types.
func (rc *regionCheck) ret(r *Block, i int, x *Instr) {
	if i != len(r.Instrs)-1 {
		rc.bad(x.Pos, "return must be the last instruction of a fusion body")
	}
	if len(x.Args) != len(rc.in.Results) {
		rc.bad(x.Pos, "fusion body returns %s, but the fusion has %s",
			plural(len(x.Args), "value"), plural(len(rc.in.Results), "result"))
		return
	}
	for j, a := range x.Args {
		if a != nil && !a.Type.Equal(rc.in.Results[j].Type) {
			rc.bad(x.Pos, "fusion body returns %s as result %d, but the fusion's result is %s", a.Type, j, rc.in.Results[j].Type)
		}
	}
}

// isOuter reports whether v is defined outside region r: a function
// parameter or the result of an instruction not inside r.
func isOuter(v *Value, r *Block) bool {
	if v.Def == nil {
		for _, p := range r.Params {
			if p == v {
				return false
			}
		}
		return true
	}
	return v.Def.Block != r
}

// FusionBody returns the region of a fusion instruction; it panics for any
// other instruction (a broken invariant of the caller).
func (in *Instr) FusionBody() *Block {
	if in.Op != OpFusion || len(in.Regions) != 1 {
		panic(fmt.Sprintf("ir: %s is not a fusion", in.Op))
	}
	return in.Regions[0]
}
