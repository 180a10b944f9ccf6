// Package padding decides whether a program traced at a bucket size, run on
// inputs padded with zeros, gives exactly the results of the program traced
// at the real size (see Check). It is an analysis of the IR: it imports ir
// and, for the evaluator interface, passes.
package padding

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
)

// Padding a dynamic dimension means: trace the function at the bucket size
// N, run that program on inputs padded with zeros from the real size n up to
// N, and slice the outputs back to n. Check decides whether that gives
// exactly the results of the program traced at n, from two traces of the
// same Go function, one at each size. It proves two things:
//
//  1. The two traces are the same program apart from the padded sizes: the
//     same ops in the same order on the same operands, the same attributes
//     and constants, and every dimension either equal in both or n in one and
//     N in the other ("labelled": derived from a padded dimension). This
//     catches Go code that uses a size as a value (a mean written as
//     sum/float(n), a size-dependent constant), which no single trace shows.
//  2. Every op keeps rows apart along labelled dimensions: the result at an
//     index below n reads operands only at indices below n. Elementwise ops,
//     broadcasts, transposes, row-major-compatible reshapes, contractions
//     over other dimensions, and reductions, sorts and normalisations over
//     other axes do. An op that mixes rows along a labelled dimension
//     (reduction, contraction, softmax, argmax over it) is accepted only
//     when the padding it reads is provably its identity (0 for sums,
//     -inf for max and softmax): that is "masked". cumsum along a labelled
//     dimension is accepted as it is, because a prefix sum at index i < n
//     reads only indices <= i. Everything else (slices, pads and concats
//     along it, gathers and scatters along it, norms, top_k and argsort over
//     it, calls) is refused with a reason naming the op and its position.
//
// The padding values are tracked per value and labelled dimension: padVal d
// of v is what every element of v holds at an index >= n along d (and < n
// along the value's other labelled dimensions), when that is one known
// number. Inputs hold 0; elementwise ops evaluate the op on the known
// values; anything else is unknown. Arithmetic is IEEE-exact: 0 times an
// unknown value is unknown (it could be inf), so a contraction over a padded
// dimension is accepted only when both sides' padding is known and the
// product is 0.

// Dim is one padded dimension of a call: size Real padded to Padded. Name
// is how the reasons Check gives name it ("dimension 0 of argument 1").
type Dim struct {
	Name         string
	Real, Padded int64
}

// Plan says how to run a bucket program for a call: the size each program
// parameter is padded to, and the size each result is sliced to.
type Plan struct {
	Inputs  [][]int64 // per program parameter: padded dims, nil when not padded
	Outputs [][]int64 // per result: real dims, nil when no dim is labelled
}

// padVal is the value held by the padding along one dimension, if known.
type padVal struct {
	known bool
	v     float64
}

func known(v float64) padVal { return padVal{known: true, v: v} }

func (p padVal) is(v float64) bool {
	return p.known && (p.v == v || (math.IsNaN(p.v) && math.IsNaN(v)))
}

// padCheck is the state of one Check run.
type padCheck struct {
	classes []Dim   // distinct (Real, Padded) pairs; label c means classes[c-1]
	labels  [][]int // per bucket value ID: label per dim (0: not derived)
	pads    [][]padVal
	eval    passes.Evaluator // folds elementwise ops on padding values
}

// Check returns the plan for running bucket on padded inputs, or the reason
// it would not give exact's results. eval computes elementwise ops on known
// padding values (the runtime hands in the reference executor's folder); an
// op it cannot evaluate leaves the padding unknown.
func Check(bucket, exact *ir.Module, pads []Dim, eval passes.Evaluator) (*Plan, string) {
	if len(bucket.Funcs) != 1 || len(exact.Funcs) != 1 {
		return nil, "the program calls functions, which the padding check does not follow"
	}
	fb, fe := bucket.Funcs[0], exact.Funcs[0]
	c := &padCheck{labels: make([][]int, fb.NumValues()), pads: make([][]padVal, fb.NumValues()), eval: eval}
	for _, p := range pads {
		found := false
		for _, q := range c.classes {
			found = found || (q.Real == p.Real && q.Padded == p.Padded)
		}
		if !found {
			c.classes = append(c.classes, p)
		}
	}
	if len(fb.Params) != len(fe.Params) || len(fb.Body.Instrs) != len(fe.Body.Instrs) {
		return nil, fmt.Sprintf("the program traced at %s differs from the one traced at %s", c.sizes(true), c.sizes(false))
	}
	corr := make([]*ir.Value, fe.NumValues()) // exact value ID -> bucket value
	plan := &Plan{}
	for i, pb := range fb.Params {
		pe := fe.Params[i]
		corr[pe.ID] = pb
		if err := c.label(pb, pe, nil); err != "" {
			return nil, err
		}
		var to []int64
		for d, l := range c.labels[pb.ID] {
			if l != 0 {
				to = pb.Type.Dims()
				c.pads[pb.ID][d] = known(0)
			}
		}
		plan.Inputs = append(plan.Inputs, to)
	}
	for k, ib := range fb.Body.Instrs {
		ie := fe.Body.Instrs[k]
		if ib.Op != ie.Op || len(ib.Args) != len(ie.Args) || len(ib.Results) != len(ie.Results) || len(ib.Regions)+len(ie.Regions) > 0 {
			return nil, fmt.Sprintf("the program traced at %s differs from the one traced at %s%s (%s vs %s)", c.sizes(true), c.sizes(false), at(ib.Pos), ib.Op, ie.Op)
		}
		for a := range ib.Args {
			if corr[ie.Args[a].ID] != ib.Args[a] {
				return nil, fmt.Sprintf("the program traced at %s differs from the one traced at %s%s (operand %d of %s)", c.sizes(true), c.sizes(false), at(ib.Pos), a, ib.Op)
			}
		}
		if ib.Op == ir.OpReturn {
			for _, a := range ib.Args {
				var to []int64
				if c.anyLabel(a) >= 0 {
					to = a.Type.Dims()
					for d, l := range c.labels[a.ID] {
						if l != 0 {
							to[d] = c.classes[l-1].Real
						}
					}
				}
				plan.Outputs = append(plan.Outputs, to)
			}
			return plan, ""
		}
		for r, vb := range ib.Results {
			corr[ie.Results[r].ID] = vb
			if err := c.label(vb, ie.Results[r], ib); err != "" {
				return nil, err
			}
		}
		if why := c.sameAttrs(ib, ie); why != "" {
			return nil, why
		}
		if why := c.step(ib); why != "" {
			return nil, why
		}
	}
	return nil, "the program has no return"
}

// sizes spells the padded sizes of one trace: "64" or "64 and 8".
func (c *padCheck) sizes(bucket bool) string {
	var s []string
	for _, p := range c.classes {
		if bucket {
			s = append(s, fmt.Sprint(p.Padded))
		} else {
			s = append(s, fmt.Sprint(p.Real))
		}
	}
	return strings.Join(s, " and ")
}

// name is the padded dimension a label stands for, as the log names it.
func (c *padCheck) name(l int) string { return c.classes[l-1].Name }

// at is " at FILE:LINE" for a known position, else "".
func at(p ir.Pos) string {
	if !p.Known() {
		return ""
	}
	return fmt.Sprintf(" at %s:%d", filepath.Base(p.File), p.Line)
}

// label compares a bucket value with its exact twin and records which of its
// dimensions derive from a padded one.
func (c *padCheck) label(vb, ve *ir.Value, in *ir.Instr) string {
	where := ""
	if in != nil {
		where = fmt.Sprintf(" of %s%s", in.Op, at(in.Pos))
	}
	if vb.Type.DType != ve.Type.DType || vb.Type.Rank() != ve.Type.Rank() {
		return fmt.Sprintf("the program traced at %s differs from the one traced at %s: a result%s is %s vs %s", c.sizes(true), c.sizes(false), where, vb.Type, ve.Type)
	}
	ls := make([]int, vb.Type.Rank())
	for d := range ls {
		sb, se := vb.Type.Shape[d].Size, ve.Type.Shape[d].Size
		if sb == se {
			continue
		}
		for k, p := range c.classes {
			if p.Real == se && p.Padded == sb {
				ls[d] = k + 1
			}
		}
		if ls[d] == 0 {
			return fmt.Sprintf("a dimension%s is %d when traced at %s and %d at %s: it is not one of the padded dimensions", where, sb, c.sizes(true), se, c.sizes(false))
		}
	}
	c.labels[vb.ID] = ls
	c.pads[vb.ID] = make([]padVal, len(ls))
	return ""
}

// anyLabel is the first labelled dimension of v, or -1.
func (c *padCheck) anyLabel(v *ir.Value) int {
	for d, l := range c.labels[v.ID] {
		if l != 0 {
			return d
		}
	}
	return -1
}

func attrText(a ir.Attr) string {
	if a == nil {
		return ""
	}
	var b strings.Builder
	for _, f := range a.Fields() {
		b.WriteString(f.Name + "=" + f.Value.String() + ";")
	}
	return b.String()
}

// sameAttrs checks that the two traces' attributes agree: exactly, except
// for attributes that spell a labelled dimension's size.
func (c *padCheck) sameAttrs(ib, ie *ir.Instr) string {
	differs := func(what string) string {
		return fmt.Sprintf("the program traced at %s differs from the one traced at %s%s (%s of %s)", c.sizes(true), c.sizes(false), at(ib.Pos), what, ib.Op)
	}
	switch ab := ib.Attr.(type) {
	case *ir.ConstAttr:
		return c.sameConstant(ib, ab.Value, ie.Attr.(*ir.ConstAttr).Value, differs)
	case *ir.SliceAttr:
		ae := ie.Attr.(*ir.SliceAttr)
		for d, l := range c.labels[ib.Args[0].ID] {
			if l == 0 && (ab.Start[d] != ae.Start[d] || ab.Limit[d] != ae.Limit[d] || nth(ab.Stride, d, 1) != nth(ae.Stride, d, 1)) {
				return differs("the window")
			}
		}
		return ""
	case *ir.PadAttr:
		ae := ie.Attr.(*ir.PadAttr)
		for d := range ab.Low {
			if ab.Low[d] != ae.Low[d] || ab.High[d] != ae.High[d] || nth(ab.Interior, d, 0) != nth(ae.Interior, d, 0) {
				return differs("the padding")
			}
		}
		return ""
	case *ir.SizesAttr:
		ae := ie.Attr.(*ir.SizesAttr)
		for d, l := range c.labels[ib.Args[0].ID] {
			if l == 0 && ab.Sizes[d] != ae.Sizes[d] {
				return differs("the window")
			}
		}
		return ""
	case *ir.DepthAttr:
		r := ib.Results[0]
		if c.labels[r.ID][r.Type.Rank()-1] != 0 {
			return "" // the depth is the labelled size
		}
	}
	if attrText(ib.Attr) != attrText(ie.Attr) {
		return differs("the attributes")
	}
	return ""
}

// sameConstant checks that the exact trace's constant equals the bucket's
// on the real region, and records a splat's padding value.
func (c *padCheck) sameConstant(ib *ir.Instr, lb, le *ir.Literal, differs func(string) string) string {
	r := ib.Results[0]
	if c.anyLabel(r) < 0 {
		if !lb.Equal(le) {
			return differs("the value")
		}
		return ""
	}
	if lb.Len() == 1 {
		for d, l := range c.labels[r.ID] {
			if l != 0 {
				c.pads[r.ID][d] = known(litValue(lb, r.Type.DType))
			}
		}
	}
	dims := r.Type.Dims()
	real := append([]int64(nil), dims...)
	for d, l := range c.labels[r.ID] {
		if l != 0 {
			real[d] = c.classes[l-1].Real
		}
	}
	float := r.Type.DType.IsFloat()
	bad := false
	eachIndex(real, dims, func(e, b int) {
		if float {
			bad = bad || math.Float64bits(lb.Float(b)) != math.Float64bits(le.Float(e))
		} else {
			bad = bad || lb.Int(b) != le.Int(e)
		}
	})
	if bad {
		return differs("the value")
	}
	return ""
}

// eachIndex calls fn with the row-major offset of every index of the shape
// real, in real and in the larger shape full.
func eachIndex(real, full []int64, fn func(inReal, inFull int)) {
	n := int64(1)
	for _, d := range real {
		n *= d
	}
	idx := make([]int64, len(real))
	for e := int64(0); e < n; e++ {
		b := int64(0)
		for d := range real {
			b = b*full[d] + idx[d]
		}
		fn(int(e), int(b))
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < real[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// nth is xs[i], or def when xs is empty (an attribute left at its default).
func nth(xs []int64, i int, def int64) int64 {
	if len(xs) == 0 {
		return def
	}
	return xs[i]
}
