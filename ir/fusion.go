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
	var errs []*Error
	bad := func(pos Pos, format string, args ...any) {
		if !pos.Known() {
			pos = in.Pos
		}
		if !pos.Known() {
			pos = f.Pos
		}
		errs = append(errs, Errorf(pos, format, args...))
	}
	if in.Op != OpFusion {
		if len(in.Regions) > 0 {
			bad(in.Pos, "%s cannot have a region", in.Op)
		}
		return errs
	}
	if len(in.Regions) != 1 {
		bad(in.Pos, "fusion must have exactly 1 region, got %d", len(in.Regions))
		return errs
	}
	r := in.Regions[0]
	if r.Parent != in {
		bad(in.Pos, "internal: fusion region does not point back to its fusion")
	}
	if len(r.Params) != len(in.Args) {
		bad(in.Pos, "fusion has %s, but its region has %s", plural(len(in.Args), "operand"), plural(len(r.Params), "parameter"))
		return errs
	}
	// The region's own values. A map, not a slice of f.NumValues(): one
	// such slice per fusion made verifying a function of n fusions O(n²).
	local := map[int]bool{}
	inRange := func(v *Value) bool { return v != nil && v.ID >= 0 && v.ID < f.NumValues() }
	for i, p := range r.Params {
		if !inRange(p) {
			bad(in.Pos, "internal: region parameter ID out of range in @%s", f.Name)
			return errs
		}
		if a := in.Args[i]; a != nil && !p.Type.Equal(a.Type) {
			bad(p.Pos, "fusion region parameter %s is %s, but operand %d is %s", n.ref(p), p.Type, i, a.Type)
		}
		local[p.ID] = true
	}
	for i, x := range r.Instrs {
		for _, a := range x.Args {
			if !inRange(a) || !local[a.ID] {
				if inRange(a) && isOuter(a, r) {
					bad(x.Pos, "fusion body uses %s from outside its region", n.ref(a))
				} else {
					name := "a value"
					if a != nil {
						name = n.ref(a)
					}
					bad(x.Pos, "%s uses %s before it is defined", x.Op, name)
				}
			}
		}
		switch x.Op {
		case OpReturn:
			if i != len(r.Instrs)-1 {
				bad(x.Pos, "return must be the last instruction of a fusion body")
			}
			if len(x.Args) != len(in.Results) {
				bad(x.Pos, "fusion body returns %s, but the fusion has %s",
					plural(len(x.Args), "value"), plural(len(in.Results), "result"))
				continue
			}
			for j, a := range x.Args {
				if a != nil && !a.Type.Equal(in.Results[j].Type) {
					bad(x.Pos, "fusion body returns %s as result %d, but the fusion's result is %s", a.Type, j, in.Results[j].Type)
				}
			}
			continue
		case OpCall, OpFusion:
			bad(x.Pos, "a fusion body cannot contain %s", x.Op)
			continue
		}
		if len(x.Regions) > 0 {
			bad(x.Pos, "%s cannot have a region", x.Op)
		}
		if x.Block != r {
			bad(x.Pos, "internal: %s in a fusion body does not point back to it", x.Op)
		}
		if err := checkTypes(m, x); err != nil {
			bad(x.Pos, "%v", err)
		}
		for _, res := range x.Results {
			if !inRange(res) || res.Def != x {
				bad(x.Pos, "internal: result of %s does not point back to it", x.Op)
				continue
			}
			if local[res.ID] {
				bad(res.Pos, "internal: value ID %d defined twice in @%s", res.ID, f.Name)
			}
			local[res.ID] = true
		}
	}
	if r.Terminator() == nil {
		bad(in.Pos, "fusion body does not end with return")
	}
	return errs
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
