package passes

import (
	"fmt"
	"math"

	"github.com/tpucc/tpucc/ir"
)

// maxFoldElements caps the elements of a folded result. A constant is written
// out in full in the program, the dumps and the StableHLO, so folding a large
// tensor trades one cheap instruction for a large literal. Splats are exempt:
// they are written as one number whatever their size.
const maxFoldElements = 1024

// maxFoldInputElements caps the elements of each operand handed to the
// evaluator, which expands a splat operand to its full type: a reduction of a
// splat f32[1000000000] must not make the compiler allocate 8 GB.
const maxFoldInputElements = 1 << 16

// movementOps only move elements, so on a splat they give a splat of the same
// value: fold-constants does those without an evaluator.
var movementOps = map[ir.Op]bool{
	ir.OpReshape: true, ir.OpBroadcast: true, ir.OpTranspose: true, ir.OpSlice: true,
}

// foldConstants replaces instructions whose operands are all constants by
// constants, in one sweep (a folded instruction's users come after it, so
// they see constant operands in the same sweep). Three cases, tried in order:
//
//   - splat-movement: reshape, broadcast, transpose or slice of a splat is a
//     splat of the result type, any size, no evaluator needed;
//   - splat-elementwise: an elementwise op on splats is a splat, any size; the
//     evaluator computes one element on a scalar copy of the instruction;
//   - evaluate: anything else with results of at most maxFoldElements in all
//     and operands of at most maxFoldInputElements each, by the evaluator.
//
// It never folds call (a call is kept for the callee's own pipeline and
// lowering), constant, return, or ops without operands (iota is as cheap as a
// constant and much shorter to print). With c.Eval nil only splat-movement
// runs. An evaluator error (an op the executor does not implement yet) leaves
// the instruction alone and is counted as skip-eval-error.
func foldConstants(f *ir.Func, c *Context) (bool, error) {
	changed := false
	s := newSweep(f)
	defer s.done()
	for _, in := range s.instrs {
		folded, err := foldOne(s, in, c)
		if err != nil {
			return changed, err
		}
		changed = changed || folded
		s.place(in)
	}
	return changed, nil
}

// foldOne folds in if it can, reporting whether it did.
func foldOne(s *sweep, in *ir.Instr, c *Context) (bool, error) {
	args, ok := constantArgs(in)
	if !ok || !staticResults(in) {
		return false, nil
	}
	res, rule, err := fold(in, args, c.Eval)
	if err != nil {
		c.Count("skip-eval-error")
		return false, nil
	}
	if res == nil {
		return false, nil
	}
	if err := replaceByConstants(s, in, res); err != nil {
		return false, err
	}
	c.Count(rule)
	return true, nil
}

// constantArgs returns the literals of in's operands when in is a candidate:
// not call, custom_call (its kernel is not ours to run), constant or return, no regions, at least one operand, all constants.
// A sharding_constraint is kept: it says where its value lives, which a
// constant in its place would forget.
func constantArgs(in *ir.Instr) ([]*ir.Literal, bool) {
	switch in.Op {
	case ir.OpCall, ir.OpConstant, ir.OpReturn, ir.OpShardingConstraint, ir.OpCustomCall:
		return nil, false
	}
	// A collective's result depends on the other processes: never folded.
	if len(in.Args) == 0 || len(in.Regions) > 0 || ir.IsCollective(in.Op) {
		return nil, false
	}
	lits := make([]*ir.Literal, len(in.Args))
	for i, a := range in.Args {
		l, ok := literal(a)
		if !ok {
			return nil, false
		}
		lits[i] = l
	}
	return lits, true
}

// staticResults reports whether in has results and each has a static type
// with at least one element (a constant needs a static type; an empty tensor
// gains nothing from folding).
func staticResults(in *ir.Instr) bool {
	for _, r := range in.Results {
		if n, ok := r.Type.NumElements(); !ok || n == 0 {
			return false
		}
	}
	return len(in.Results) > 0
}

// fold picks the case for in and returns one literal per result, or nil when
// in is not folded.
func fold(in *ir.Instr, args []*ir.Literal, eval Evaluator) ([]*ir.Literal, string, error) {
	if movementOps[in.Op] {
		if l, ok := splatLiteral(in.Args[0]); ok {
			return []*ir.Literal{firstElement(l)}, "splat-movement", nil
		}
	}
	if eval == nil {
		return nil, "", nil
	}
	if in.Op.Info().Elementwise && allSplats(in.Args) {
		res, err := foldScalar(in, args, eval)
		return res, "splat-elementwise", err
	}
	total := int64(0)
	for _, r := range in.Results {
		n, _ := r.Type.NumElements()
		total += n
	}
	if total > maxFoldElements {
		return nil, "", nil
	}
	for _, a := range in.Args {
		if n, ok := a.Type.NumElements(); !ok || n > maxFoldInputElements {
			return nil, "", nil
		}
	}
	res, err := eval.Fold(in, args)
	return res, "evaluate", err
}

func allSplats(vs []*ir.Value) bool {
	for _, v := range vs {
		if _, ok := splatLiteral(v); !ok {
			return false
		}
	}
	return true
}

func firstElement(l *ir.Literal) *ir.Literal {
	if l.Complex != nil {
		return &ir.Literal{Complex: []complex128{l.Complex[0]}}
	}
	if l.Floats != nil {
		return &ir.Literal{Floats: []float64{l.Floats[0]}}
	}
	return &ir.Literal{Ints: []int64{l.Ints[0]}}
}

// foldScalar evaluates an elementwise in on splats through a detached copy of
// in whose operands and result are scalars of the same dtypes: the splat
// result is that one element.
func foldScalar(in *ir.Instr, args []*ir.Literal, eval Evaluator) ([]*ir.Literal, error) {
	probe := &ir.Instr{ID: -1, Op: in.Op, Attr: in.Attr, Pos: in.Pos}
	one := make([]*ir.Literal, len(args))
	for i, a := range in.Args {
		probe.Args = append(probe.Args, &ir.Value{ID: -1, Type: ir.Scalar(a.Type.DType), Pos: a.Pos})
		one[i] = firstElement(args[i])
	}
	r := in.Result()
	probe.Results = []*ir.Value{{ID: -1, Type: ir.Scalar(r.Type.DType), Def: probe, Pos: r.Pos}}
	return eval.Fold(probe, one)
}

// replaceByConstants checks what the evaluator returned, builds one constant
// per result just before in and redirects in's uses to them. A constant takes
// over the source name of the value it replaces.
func replaceByConstants(s *sweep, in *ir.Instr, res []*ir.Literal) error {
	if len(res) != len(in.Results) {
		return fmt.Errorf("fold-constants: the evaluator returned %d literals for %s, which has %d results", len(res), in.Op, len(in.Results))
	}
	b := s.builder(in)
	for i, old := range in.Results {
		t := old.Type
		lit, err := normalize(t, res[i])
		if err != nil {
			return fmt.Errorf("fold-constants: the evaluator's result %d for %s: %w", i, in.Op, err)
		}
		v := b.Typed(ir.OpConstant, &ir.ConstAttr{Value: lit}, &t)
		v.Name, old.Name = old.Name, ""
		s.replace(old, v)
	}
	return nil
}

// normalize copies l into a fresh literal of type t, rounded (floats) or
// wrapped (integers) into t's dtype, and stored as a one-element splat when
// every element is the same. It rejects a literal of the wrong kind or length.
func normalize(t ir.Type, l *ir.Literal) (*ir.Literal, error) {
	n, _ := t.NumElements()
	if l == nil || (l.Len() != 1 && int64(l.Len()) != n) {
		got := 0
		if l != nil {
			got = l.Len()
		}
		return nil, fmt.Errorf("%d elements for %s", got, t)
	}
	if (l.Floats != nil) != t.DType.IsFloat() || (l.Complex != nil) != t.DType.IsComplex() || (l.Floats != nil && l.Ints != nil) {
		return nil, fmt.Errorf("elements of the wrong kind for %s", t)
	}
	if t.DType.IsComplex() {
		return normalizeComplex(t.DType, l.Complex), nil
	}
	if t.DType.IsFloat() {
		fs := make([]float64, len(l.Floats))
		splat := true
		for i, x := range l.Floats {
			fs[i] = t.DType.RoundFloat(x)
			splat = splat && math.Float64bits(fs[i]) == math.Float64bits(fs[0])
		}
		if splat {
			fs = fs[:1]
		}
		return &ir.Literal{Floats: fs}, nil
	}
	is := make([]int64, len(l.Ints))
	splat := true
	for i, x := range l.Ints {
		is[i] = t.DType.WrapInt(x)
		splat = splat && is[i] == is[0]
	}
	if splat {
		is = is[:1]
	}
	return &ir.Literal{Ints: is}, nil
}

// normalizeComplex rounds both parts into dt's part type and keeps one
// element when all are the same bit for bit.
func normalizeComplex(dt ir.DType, l []complex128) *ir.Literal {
	cs := make([]complex128, len(l))
	splat := true
	for i, x := range l {
		cs[i] = dt.RoundComplex(x)
		splat = splat && sameComplexBits(cs[i], cs[0])
	}
	if splat {
		cs = cs[:1]
	}
	return &ir.Literal{Complex: cs}
}

func sameComplexBits(x, y complex128) bool {
	return math.Float64bits(real(x)) == math.Float64bits(real(y)) && math.Float64bits(imag(x)) == math.Float64bits(imag(y))
}
