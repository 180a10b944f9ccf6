package ir

import "fmt"

// DotAlgorithm is StableHLO's dot_general algorithm: the types the operands
// are rounded to, the accumulation type, and how many components each
// operand is split into for how many products. tpucc's dot has one
// algorithm per operand type (AcceptedDotAlgorithm), so an attribute
// records that the program asked for it by name, and the lowering writes
// it back.
type DotAlgorithm struct {
	Lhs, Rhs, Acc                        DType
	LhsComponents, RhsComponents, Primes int64
	ImpreciseAccumulation                bool
}

// DotAccumulation is the type tpucc's dot_general accumulates operands of
// type d in: f32 for f32 and the half types, f64 for f64 (other types
// have no algorithm).
func DotAccumulation(d DType) (DType, bool) {
	switch d {
	case F32, F16, BF16:
		return F32, true
	case F64:
		return F64, true
	}
	return d, false
}

// Refusal says why tpucc's dot of operand type d cannot honour a, naming
// the field; "" when it computes exactly a's products: the operands as
// they are (precision types equal to d), one component each and one
// product, accumulated in DotAccumulation(d). Imprecise accumulation only
// permits less precision, so either value is honoured.
func (a *DotAlgorithm) Refusal(d DType) string {
	acc, ok := DotAccumulation(d)
	switch {
	case !ok:
		return fmt.Sprintf("an algorithm on %s operands (tpucc's dot has one for f32, f16, bf16 and f64)", d)
	case a.Lhs != d:
		return fmt.Sprintf("lhs_precision_type %s on %s operands", a.Lhs, d)
	case a.Rhs != d:
		return fmt.Sprintf("rhs_precision_type %s on %s operands", a.Rhs, d)
	case a.Acc != acc:
		return fmt.Sprintf("accumulation_type %s for %s operands (tpucc's accumulates in %s)", a.Acc, d, acc)
	case a.LhsComponents != 1:
		return fmt.Sprintf("lhs_component_count %d", a.LhsComponents)
	case a.RhsComponents != 1:
		return fmt.Sprintf("rhs_component_count %d", a.RhsComponents)
	case a.Primes != 1:
		return fmt.Sprintf("num_primitive_operations %d", a.Primes)
	}
	return ""
}

// field is a as dot_general's attribute algorithm=[lhs,rhs,acc,lhs
// components,rhs components,products,imprecise accumulation].
func (a *DotAlgorithm) field() AttrField {
	id := func(d DType) AttrValue { return AttrValue{Kind: AttrIdent, Str: d.String()} }
	n := func(x int64) AttrValue { return AttrValue{Kind: AttrInt, Int: x} }
	return AttrField{Name: "algorithm", Value: AttrValue{Kind: AttrList, List: []AttrValue{
		id(a.Lhs), id(a.Rhs), id(a.Acc), n(a.LhsComponents), n(a.RhsComponents), n(a.Primes),
		{Kind: AttrBool, Bool: a.ImpreciseAccumulation}}}}
}

// dotAlgorithm reads the field written by field, nil when absent.
func (r *attrReader) dotAlgorithm() *DotAlgorithm {
	f, ok := r.get("algorithm", false)
	if !ok {
		return nil
	}
	l := f.Value.List
	bad := f.Value.Kind != AttrList || len(l) != 7 || l[6].Kind != AttrBool
	var ds [3]DType
	for i := 0; !bad && i < 6; i++ {
		if i < 3 {
			d, known := ParseDType(l[i].Str)
			ds[i], bad = d, l[i].Kind != AttrIdent || !known
		} else {
			bad = l[i].Kind != AttrInt
		}
	}
	if bad {
		r.errorf(f.Pos, "attribute 'algorithm' of %s must be [lhs type, rhs type, accumulation type, lhs components, rhs components, products, imprecise accumulation], got %s", r.op, f.Value)
		return nil
	}
	return &DotAlgorithm{Lhs: ds[0], Rhs: ds[1], Acc: ds[2], LhsComponents: l[3].Int, RhsComponents: l[4].Int, Primes: l[5].Int, ImpreciseAccumulation: l[6].Bool}
}
