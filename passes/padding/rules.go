package padding

import (
	"fmt"
	"math"
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// step applies one op's row-independence rule (see Check) and
// propagates padding values to its results; it returns why the op is unsafe,
// or "".
func (c *padCheck) step(in *ir.Instr) string {
	unsafe := func(format string, args ...any) string {
		return fmt.Sprintf("%s%s ", in.Op, at(in.Pos)) + fmt.Sprintf(format, args...)
	}
	switch in.Op.Info().Pad {
	case ir.PadElementwise:
		c.elementwise(in)
		return ""
	case ir.PadNone:
		// Constants were compared (and splats given their padding value) by
		// sameAttrs; an iota along a labelled axis is the same on the real
		// region; row i of a one_hot reads index i, and a labelled depth
		// compares real indices with positions, which agree on the real region.
		return ""
	case ir.PadReshape:
		return c.reshape(in, unsafe)
	case ir.PadDot:
		return c.dot(in, unsafe)
	case ir.PadReduce:
		return c.reduce(in, unsafe)
	case ir.PadBroadcast, ir.PadTranspose, ir.PadSlice, ir.PadConcat, ir.PadPad:
		return c.movement(in, unsafe)
	case ir.PadArgReduce, ir.PadScan, ir.PadSoftmax, ir.PadNorm, ir.PadSort:
		return c.alongAxis(in, unsafe)
	case ir.PadTake, ir.PadScatter, ir.PadDynamicSlice, ir.PadDynamicUpdateSlice:
		return c.indexing(in, unsafe)
	}
	// PadRefuse, and an op the table gives no rule (TestEveryOpHasPadRule).
	if c.touchesLabel(in) {
		return unsafe("is not known to the padding check")
	}
	return ""
}

// movement applies the rules of the movement ops: padding follows the
// dimensions they map, and they must not cut, join or pad a labelled one.
func (c *padCheck) movement(in *ir.Instr, unsafe func(string, ...any) string) string {
	o, r := in.Args[0], in.Results[0]
	switch in.Op.Info().Pad {
	case ir.PadBroadcast:
		a := in.Attr.(*ir.DimsAttr)
		for j, l := range c.labels[r.ID] {
			if l == 0 {
				continue
			}
			i := slices.Index(a.Dims, int64(j))
			if i >= 0 && c.labels[o.ID][i] != 0 {
				c.pads[r.ID][j] = c.pads[o.ID][i]
			} else {
				c.pads[r.ID][j] = c.uniform(o)
			}
		}
	case ir.PadTranspose:
		a := in.Attr.(*ir.PermAttr)
		for i, p := range a.Perm {
			c.pads[r.ID][i] = c.pads[o.ID][p]
		}
	case ir.PadSlice:
		a := in.Attr.(*ir.SliceAttr)
		for d, l := range c.labels[o.ID] {
			if l == 0 {
				continue
			}
			if a.Start[d] != 0 || a.Limit[d] != o.Type.Shape[d].Size || nth(a.Stride, d, 1) != 1 {
				return unsafe("cuts %s", c.name(l))
			}
			c.pads[r.ID][d] = c.pads[o.ID][d]
		}
	case ir.PadConcat:
		axis := int(in.Attr.(*ir.AxisAttr).Axis)
		for _, x := range in.Args {
			if l := c.labels[x.ID][axis]; l != 0 {
				return unsafe("joins along %s", c.name(l))
			}
		}
		for d, l := range c.labels[r.ID] {
			if l != 0 {
				p := c.pads[in.Args[0].ID][d]
				for _, x := range in.Args[1:] {
					p = join(p, c.pads[x.ID][d])
				}
				c.pads[r.ID][d] = p
			}
		}
	case ir.PadPad:
		a := in.Attr.(*ir.PadAttr)
		grows := false
		for d, l := range c.labels[o.ID] {
			edge := a.Low[d] != 0 || a.High[d] != 0 || nth(a.Interior, d, 0) != 0
			if l != 0 && edge {
				return unsafe("pads %s", c.name(l))
			}
			grows = grows || edge
		}
		for d, l := range c.labels[r.ID] {
			if l != 0 {
				c.pads[r.ID][d] = c.pads[o.ID][d]
				if grows {
					c.pads[r.ID][d] = join(c.pads[o.ID][d], c.uniform(in.Args[1]))
				}
			}
		}
	}
	return ""
}

// alongAxis applies the rules of ops that combine the elements along an
// axis: searches, scans, normalisations and sorts.
func (c *padCheck) alongAxis(in *ir.Instr, unsafe func(string, ...any) string) string {
	o, r := in.Args[0], in.Results[0]
	switch in.Op.Info().Pad {
	case ir.PadArgReduce:
		axis := int(in.Attr.(*ir.AxisAttr).Axis)
		if l := c.labels[o.ID][axis]; l != 0 {
			kind := ir.ReduceMax
			if in.Op == ir.OpArgmin {
				kind = ir.ReduceMin
			}
			want := identity(kind, o.Type.DType)
			if !c.pads[o.ID][axis].is(want) {
				return unsafe("searches along %s, %s", c.name(l), padWant(c.pads[o.ID][axis], want))
			}
		}
	case ir.PadScan:
		// A prefix sum at index i reads indices <= i: trailing padding never
		// reaches the real region, along the axis or any other dimension.
		axis := int(in.Attr.(*ir.AxisAttr).Axis)
		for d, l := range c.labels[r.ID] {
			if l != 0 && d != axis && c.pads[o.ID][d].is(0) {
				c.pads[r.ID][d] = known(0)
			}
		}
	case ir.PadSoftmax:
		axis := int(in.Attr.(*ir.AxisAttr).Axis)
		if l := c.labels[o.ID][axis]; l != 0 && !c.pads[o.ID][axis].is(math.Inf(-1)) {
			return unsafe("normalises over %s, %s", c.name(l), padWant(c.pads[o.ID][axis], math.Inf(-1)))
		}
	case ir.PadNorm:
		if l := c.labels[o.ID][o.Type.Rank()-1]; l != 0 {
			return unsafe("normalises over %s", c.name(l))
		}
	case ir.PadSort:
		axis := o.Type.Rank() - 1 // top_k sorts along the last axis
		if a, ok := in.Attr.(*ir.AxisAttr); ok {
			axis = int(a.Axis)
		}
		if l := c.labels[o.ID][axis]; l != 0 {
			return unsafe("sorts along %s", c.name(l))
		}
	}
	return ""
}

// indexing applies the rules of gathers, scatters and dynamic windows.
func (c *padCheck) indexing(in *ir.Instr, unsafe func(string, ...any) string) string {
	o, r := in.Args[0], in.Results[0]
	switch in.Op.Info().Pad {
	case ir.PadTake:
		axis := int(in.Attr.(*ir.AxisAttr).Axis)
		if l := c.labels[o.ID][axis]; l != 0 {
			return unsafe("gathers along %s: clamped indices would read the padding", c.name(l))
		}
	case ir.PadScatter:
		axis := int(in.Attr.(*ir.AxisAttr).Axis)
		if l := c.labels[o.ID][axis]; l != 0 {
			return unsafe("scatters along %s", c.name(l))
		}
		if d := c.anyLabel(in.Args[1]); d >= 0 {
			return unsafe("scatters rows indexed along %s: padded indices would add padding to row 0", c.name(c.labels[in.Args[1].ID][d]))
		}
	case ir.PadDynamicSlice:
		a := in.Attr.(*ir.SizesAttr)
		for d, l := range c.labels[o.ID] {
			if l == 0 {
				continue
			}
			if a.Sizes[d] != o.Type.Shape[d].Size {
				return unsafe("takes a window along %s", c.name(l))
			}
			c.pads[r.ID][d] = c.pads[o.ID][d]
		}
	case ir.PadDynamicUpdateSlice:
		u := in.Args[1]
		for d, l := range c.labels[o.ID] {
			if l == 0 {
				continue
			}
			if c.labels[u.ID][d] != l {
				return unsafe("writes a window along %s", c.name(l))
			}
			c.pads[r.ID][d] = join(c.pads[o.ID][d], c.pads[u.ID][d])
		}
	}
	return ""
}

// touchesLabel reports whether any operand or result of in has a labelled dimension.
func (c *padCheck) touchesLabel(in *ir.Instr) bool {
	for _, v := range append(append([]*ir.Value(nil), in.Args...), in.Results...) {
		if c.anyLabel(v) >= 0 {
			return true
		}
	}
	return false
}

// uniform is v's single value when every element of v is the same known
// number (a splat constant, possibly broadcast, reshaped or transposed).
func (c *padCheck) uniform(v *ir.Value) padVal {
	for v.Def != nil {
		switch v.Def.Op {
		case ir.OpConstant:
			if l := v.Def.Attr.(*ir.ConstAttr).Value; l.Len() == 1 {
				return known(litValue(l, v.Type.DType))
			}
			return padVal{}
		case ir.OpBroadcast, ir.OpReshape, ir.OpTranspose:
			v = v.Def.Args[0]
		default:
			return padVal{}
		}
	}
	return padVal{}
}

// elementwise evaluates the op on its operands' padding values, dimension
// by dimension. Operands have the result's shape (and labels) or are scalars.
func (c *padCheck) elementwise(in *ir.Instr) {
	r := in.Results[0]
	for d, l := range c.labels[r.ID] {
		if l == 0 {
			continue
		}
		vals := make([]padVal, len(in.Args))
		for k, a := range in.Args {
			if a.Type.Rank() == 0 {
				vals[k] = c.uniform(a)
			} else if c.labels[a.ID][d] == l {
				vals[k] = c.pads[a.ID][d]
			}
		}
		c.pads[r.ID][d] = c.evalPad(in, vals)
	}
}

// evalPad computes an elementwise op on padding values: exactly, through
// the evaluator on a scalar copy of the instruction, when all are known; a
// select with a known predicate picks its branch.
func (c *padCheck) evalPad(in *ir.Instr, vals []padVal) padVal {
	if in.Op == ir.OpSelect && vals[0].known {
		if vals[0].v != 0 {
			return vals[1]
		}
		return vals[2]
	}
	for _, v := range vals {
		if !v.known {
			return padVal{}
		}
	}
	if c.eval == nil {
		return padVal{}
	}
	args := make([]*ir.Value, len(in.Args))
	lits := make([]*ir.Literal, len(in.Args))
	for k, a := range in.Args {
		t := ir.Scalar(a.Type.DType)
		args[k] = &ir.Value{Type: t}
		lits[k] = scalarLiteral(t.DType, vals[k].v)
	}
	res := &ir.Value{Type: ir.Scalar(in.Results[0].Type.DType)}
	scalar := &ir.Instr{Op: in.Op, Attr: in.Attr, Args: args, Results: []*ir.Value{res}, Pos: in.Pos}
	out, err := c.eval.Fold(scalar, lits)
	if err != nil || len(out) != 1 || out[0].Len() != 1 {
		return padVal{}
	}
	return known(litValue(out[0], res.Type.DType))
}

// litValue is element 0 of l as a number; a u64 element is its bit pattern
// read unsigned (ir holds 2^64-1 as -1).
func litValue(l *ir.Literal, dt ir.DType) float64 {
	if dt == ir.U64 {
		return float64(uint64(l.Int(0)))
	}
	return l.Float(0)
}

// scalarLiteral brings a padding value into dt as the convert op would:
// rounded for floats; truncated toward zero and saturated for integers,
// NaN giving 0; != 0 for i1.
func scalarLiteral(dt ir.DType, v float64) *ir.Literal {
	t := ir.Scalar(dt)
	switch {
	case dt.IsFloat():
		return ir.NewLiteral(t, []float64{v})
	case dt.IsBool():
		if v != 0 {
			return ir.NewIntLiteral(t, []int64{1})
		}
		return ir.NewIntLiteral(t, []int64{0})
	case math.IsNaN(v):
		return ir.NewIntLiteral(t, []int64{0})
	}
	lo, hi := dt.IntRange()
	if dt == ir.U64 { // hi is 2^64-1's bit pattern, -1
		switch v = math.Trunc(v); {
		case v <= 0:
			return ir.NewIntLiteral(t, []int64{0})
		case v >= 1<<64:
			return ir.NewIntLiteral(t, []int64{hi})
		}
		return ir.NewIntLiteral(t, []int64{int64(uint64(v))})
	}
	switch v = math.Trunc(v); {
	case v <= float64(lo):
		return ir.NewIntLiteral(t, []int64{lo})
	case v >= float64(hi): // for i64, float64(hi) is 2^63, itself out of range
		return ir.NewIntLiteral(t, []int64{hi})
	}
	return ir.NewIntLiteral(t, []int64{int64(v)})
}

// join is what an element holds when it may come from either of two paddings.
func join(a, b padVal) padVal {
	if a.known && b.is(a.v) {
		return a
	}
	return padVal{}
}

// identity is the value a reduction may absorb without changing its result.
func identity(kind ir.ReduceKind, dt ir.DType) float64 {
	lo, hi := dt.IntRange()
	switch kind {
	case ir.ReduceProd:
		return 1
	case ir.ReduceMax:
		if dt.IsFloat() {
			return math.Inf(-1)
		}
		return float64(lo)
	case ir.ReduceMin:
		if dt.IsFloat() {
			return math.Inf(1)
		}
		if dt == ir.U64 {
			return float64(uint64(hi))
		}
		return float64(hi)
	}
	return 0
}

func number(v float64) string { return ir.FormatFloat(v, ir.F64) }

// padWant says that padding p is not the value want an op needs.
func padWant(p padVal, want float64) string {
	if !p.known {
		return "whose padding is not known to be " + number(want)
	}
	return "whose padding is " + number(p.v) + ", not " + number(want)
}

func padText(p padVal) string {
	if !p.known {
		return "not known"
	}
	return number(p.v)
}

// reduceVerb says what a reduction does over an axis, in a reason.
var reduceVerb = [...]string{ir.ReduceSum: "sums", ir.ReduceMax: "takes the maximum", ir.ReduceMin: "takes the minimum", ir.ReduceProd: "multiplies"}

// reduce checks a reduction: over a labelled axis the padding must be the
// reduction's identity.
func (c *padCheck) reduce(in *ir.Instr, unsafe func(string, ...any) string) string {
	o, r := in.Args[0], in.Results[0]
	a := in.Attr.(*ir.AxesAttr)
	kind := in.Op.Info().Reduce
	want := identity(kind, o.Type.DType)
	verb := reduceVerb[kind]
	mixed := false
	for _, ax := range a.Axes {
		if l := c.labels[o.ID][ax]; l != 0 {
			if !c.pads[o.ID][ax].is(want) {
				return unsafe("%s over %s, %s", verb, c.name(l), padWant(c.pads[o.ID][ax], want))
			}
			mixed = true
		}
	}
	j := 0
	for d := range o.Type.Shape {
		if slices.Contains(a.Axes, int64(d)) {
			if a.KeepDims {
				j++
			}
			continue
		}
		if p := c.pads[o.ID][d]; !mixed && c.labels[o.ID][d] != 0 && p.known {
			switch {
			case kind == ir.ReduceMax || kind == ir.ReduceMin:
				c.pads[r.ID][j] = p
			case p.v == 0 || (kind == ir.ReduceProd && p.v == 1):
				c.pads[r.ID][j] = known(p.v)
			}
		}
		j++
	}
	return ""
}

// dot checks a dot_general: a contraction over a labelled dimension must
// multiply paddings whose product is exactly 0.
func (c *padCheck) dot(in *ir.Instr, unsafe func(string, ...any) string) string {
	lhs, rhs := in.Args[0], in.Args[1]
	a := in.Attr.(*ir.DotAttr)
	for k, lc := range a.LhsContract {
		rc := a.RhsContract[k]
		l := c.labels[lhs.ID][lc]
		if l == 0 && c.labels[rhs.ID][rc] == 0 {
			continue
		}
		if l == 0 {
			l = c.labels[rhs.ID][rc]
		}
		pl, pr := c.pads[lhs.ID][lc], c.pads[rhs.ID][rc]
		finite := func(p padVal) bool { return p.known && !math.IsInf(p.v, 0) && !math.IsNaN(p.v) }
		if !finite(pl) || !finite(pr) || pl.v*pr.v != 0 {
			return unsafe("contracts over %s, whose padding is %s on the left and %s on the right (it needs 0 on one side and a finite value on the other)",
				c.name(l), padText(pl), padText(pr))
		}
	}
	return ""
}

// reshape checks that every labelled dimension survives as a whole, at the
// same row-major position: the product of the dimensions before it is the
// same in the operand and the result, at both sizes.
func (c *padCheck) reshape(in *ir.Instr, unsafe func(string, ...any) string) string {
	o, r := in.Args[0], in.Results[0]
	lo, lr := c.labelled(o), c.labelled(r)
	first := func(ds []int, v *ir.Value) string {
		if len(ds) > 0 {
			return c.name(c.labels[v.ID][ds[0]])
		}
		return c.name(c.labels[r.ID][lr[0]])
	}
	if len(lo) != len(lr) {
		return unsafe("merges or splits %s", first(lo, o))
	}
	for k := range lo {
		if c.labels[o.ID][lo[k]] != c.labels[r.ID][lr[k]] ||
			c.prefix(o, lo[k], true) != c.prefix(r, lr[k], true) || c.prefix(o, lo[k], false) != c.prefix(r, lr[k], false) {
			return unsafe("merges or splits %s", c.name(c.labels[o.ID][lo[k]]))
		}
		c.pads[r.ID][lr[k]] = c.pads[o.ID][lo[k]]
	}
	return ""
}

// labelled lists v's labelled dimensions.
func (c *padCheck) labelled(v *ir.Value) []int {
	var out []int
	for d, l := range c.labels[v.ID] {
		if l != 0 {
			out = append(out, d)
		}
	}
	return out
}

// prefix is the product of v's dimensions before d, at the bucket or the
// exact sizes.
func (c *padCheck) prefix(v *ir.Value, d int, bucket bool) int64 {
	p := int64(1)
	for k := 0; k < d; k++ {
		n := v.Type.Shape[k].Size
		if l := c.labels[v.ID][k]; l != 0 && !bucket {
			n = c.classes[l-1].Real
		}
		p *= n
	}
	return p
}
