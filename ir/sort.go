package ir

import (
	"fmt"
	"slices"
)

// SortAttr: sort {dimension=N, stable}, StableHLO's attributes.
type SortAttr struct {
	Dimension int64
	Stable    bool
}

// Fields writes stable=false too, so the printed form says which it is.
func (a *SortAttr) Fields() []AttrField {
	return []AttrField{intField("dimension", a.Dimension),
		{Name: "stable", Value: AttrValue{Kind: AttrBool, Bool: a.Stable}}}
}

func decodeSort(r *attrReader) Attr {
	return &SortAttr{Dimension: r.int("dimension"), Stable: r.bool("stable")}
}

// inferSort: the operands have one shape (their dtypes may differ), the
// dimension is one of its axes, and the results are the operands' types.
func inferSort(c *inferCtx) []Type {
	x := c.args[0]
	for i, a := range c.args[1:] {
		if !slices.Equal(a.Dims(), x.Dims()) {
			return c.fail("sort operand %d is %s, but operand 0 is %s: the operands must have one shape", i+1, a, x)
		}
	}
	if !c.axis(c.attr.(*SortAttr).Dimension, x.Rank(), "dimension") {
		return nil
	}
	return slices.Clone(c.args)
}

// sortSig is the comparator's signature: two scalars of each operand's
// dtype (operand i's pair at parameters 2i and 2i+1) to one i1[].
func sortSig(in *Instr) ([]regionSig, error) {
	if len(in.Regions) != 1 {
		return nil, fmt.Errorf("sort needs 1 comparator region, got %d", len(in.Regions))
	}
	params := make([]Type, 0, 2*len(in.Args))
	for _, a := range in.Args {
		if a == nil {
			return nil, fmt.Errorf("sort has a missing operand")
		}
		params = append(params, Scalar(a.Type.DType), Scalar(a.Type.DType))
	}
	return []regionSig{{name: "sort comparator region", params: params, rets: []Type{Scalar(I1)},
		paramOf: "operand scalar", retOf: "i1[] condition", anyLayout: true}}, nil
}
