package runtime

import (
	"fmt"
	"math"
	"slices"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// step applies one op's row-independence rule (see checkPadding) and
// propagates padding values to its results; it returns why the op is unsafe,
// or "".
func (c *padCheck) step(in *ir.Instr) string {
	if in.Op.Info().Elementwise {
		c.elementwise(in)
		return ""
	}
	unsafe := func(format string, args ...any) string {
		return fmt.Sprintf("%s%s ", in.Op, at(in.Pos)) + fmt.Sprintf(format, args...)
	}
	var o *ir.Value
	if len(in.Args) > 0 {
		o = in.Args[0]
	}
	r := in.Results[0]
	switch in.Op {
	case ir.OpConstant, ir.OpIota:
		// Constants were compared (and splats given their padding value) by
		// sameAttrs; an iota along a labelled axis is the same on the real region.
	case ir.OpBroadcast:
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
	case ir.OpTranspose:
		a := in.Attr.(*ir.PermAttr)
		for i, p := range a.Perm {
			c.pads[r.ID][i] = c.pads[o.ID][p]
		}
	case ir.OpReshape:
		return c.reshape(in, unsafe)
	case ir.OpSlice:
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
	case ir.OpConcat:
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
	case ir.OpPad:
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
	case ir.OpDotGeneral:
		return c.dot(in, unsafe)
	case ir.OpReduceSum, ir.OpReduceMax, ir.OpReduceMin, ir.OpReduceProd:
		return c.reduce(in, unsafe)
	case ir.OpArgmax, ir.OpArgmin:
		axis := int(in.Attr.(*ir.AxisAttr).Axis)
		if l := c.labels[o.ID][axis]; l != 0 {
			op := ir.OpReduceMax
			if in.Op == ir.OpArgmin {
				op = ir.OpReduceMin
			}
			want := identity(op, o.Type.DType)
			if !c.pads[o.ID][axis].is(want) {
				return unsafe("searches along %s, %s", c.name(l), padWant(c.pads[o.ID][axis], want))
			}
		}
	case ir.OpCumsum:
		// A prefix sum at index i reads indices <= i: trailing padding never
		// reaches the real region, along the axis or any other dimension.
		axis := int(in.Attr.(*ir.AxisAttr).Axis)
		for d, l := range c.labels[r.ID] {
			if l != 0 && d != axis && c.pads[o.ID][d].is(0) {
				c.pads[r.ID][d] = known(0)
			}
		}
	case ir.OpSoftmax, ir.OpLogSoftmax:
		axis := int(in.Attr.(*ir.AxisAttr).Axis)
		if l := c.labels[o.ID][axis]; l != 0 && !c.pads[o.ID][axis].is(math.Inf(-1)) {
			return unsafe("normalises over %s, %s", c.name(l), padWant(c.pads[o.ID][axis], math.Inf(-1)))
		}
	case ir.OpLayerNorm, ir.OpRMSNorm:
		if l := c.labels[o.ID][o.Type.Rank()-1]; l != 0 {
			return unsafe("normalises over %s", c.name(l))
		}
	case ir.OpTake:
		axis := int(in.Attr.(*ir.AxisAttr).Axis)
		if l := c.labels[o.ID][axis]; l != 0 {
			return unsafe("gathers along %s: clamped indices would read the padding", c.name(l))
		}
	case ir.OpScatterAdd:
		axis := int(in.Attr.(*ir.AxisAttr).Axis)
		if l := c.labels[o.ID][axis]; l != 0 {
			return unsafe("scatters along %s", c.name(l))
		}
		if d := c.anyLabel(in.Args[1]); d >= 0 {
			return unsafe("scatters rows indexed along %s: padded indices would add padding to row 0", c.name(c.labels[in.Args[1].ID][d]))
		}
	case ir.OpDynamicSlice:
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
	case ir.OpDynamicUpdateSlice:
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
	case ir.OpOneHot:
		// Row i of the result reads index i; a labelled depth compares real
		// indices with positions, which agree on the real region.
	case ir.OpTopK:
		if l := c.labels[o.ID][o.Type.Rank()-1]; l != 0 {
			return unsafe("sorts along %s", c.name(l))
		}
	case ir.OpArgsort:
		axis := int(in.Attr.(*ir.AxisAttr).Axis)
		if l := c.labels[o.ID][axis]; l != 0 {
			return unsafe("sorts along %s", c.name(l))
		}
	default:
		if c.touchesLabel(in) {
			return unsafe("is not known to the padding check")
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
				return known(l.Float(0))
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
		c.pads[r.ID][d] = evalPad(in, vals)
	}
}

// evalPad computes an elementwise op on padding values: exactly, through the
// CPU executor on a scalar copy of the instruction, when all are known; a
// select with a known predicate picks its branch.
func evalPad(in *ir.Instr, vals []padVal) padVal {
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
	args := make([]*ir.Value, len(in.Args))
	ts := make([]*backend.Buffer, len(in.Args))
	for k, a := range in.Args {
		t := ir.Scalar(a.Type.DType)
		args[k] = &ir.Value{Type: t}
		ts[k] = backend.FromFloats(t, vals[k].v)
	}
	res := &ir.Value{Type: ir.Scalar(in.Results[0].Type.DType)}
	scalar := &ir.Instr{Op: in.Op, Attr: in.Attr, Args: args, Results: []*ir.Value{res}, Pos: in.Pos}
	out, err := cpu.Eval(scalar, ts)
	if err != nil {
		return padVal{}
	}
	return known(out[0].Float64At(0))
}

// join is what an element holds when it may come from either of two paddings.
func join(a, b padVal) padVal {
	if a.known && b.is(a.v) {
		return a
	}
	return padVal{}
}

// identity is the value a reduction may absorb without changing its result.
func identity(op ir.Op, dt ir.DType) float64 {
	lo, hi := dt.IntRange()
	switch op {
	case ir.OpReduceProd:
		return 1
	case ir.OpReduceMax:
		if dt.IsFloat() {
			return math.Inf(-1)
		}
		return float64(lo)
	case ir.OpReduceMin:
		if dt.IsFloat() {
			return math.Inf(1)
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

// reduce checks a reduction: over a labelled axis the padding must be the
// reduction's identity.
func (c *padCheck) reduce(in *ir.Instr, unsafe func(string, ...any) string) string {
	o, r := in.Args[0], in.Results[0]
	a := in.Attr.(*ir.AxesAttr)
	want := identity(in.Op, o.Type.DType)
	verb := map[ir.Op]string{ir.OpReduceSum: "sums", ir.OpReduceMax: "takes the maximum", ir.OpReduceMin: "takes the minimum", ir.OpReduceProd: "multiplies"}[in.Op]
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
			case in.Op == ir.OpReduceMax || in.Op == ir.OpReduceMin:
				c.pads[r.ID][j] = p
			case p.v == 0 || (in.Op == ir.OpReduceProd && p.v == 1):
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
			n = c.classes[l-1].n
		}
		p *= n
	}
	return p
}
