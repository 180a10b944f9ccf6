package cpu

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// drawLimit is the half-width of the interval a float parameter is drawn from when
// nothing narrower is called for: [-2, 2).
const drawLimit = 2

// InputLimits returns, per parameter of f, the half-width lim of the interval
// [-lim, lim) that RandomInputsWithin draws its float values from, chosen so that a
// model run on random inputs computes numbers of a plausible size. A parameter that
// is a matmul's weight (an operand of a dot_general in f, directly or through
// reshape, transpose, broadcast or convert: the rhs, or the lhs when the rhs is not
// a parameter) gets 2/sqrt(K), K the number of elements each output sums over, as
// a network's weights are initialised; its outputs then keep the size of its other
// operand instead of growing by sqrt(K) per layer. Every other parameter gets 2.
// Without it, the transformer block of examples/ computes values near 1e4.
func InputLimits(f *ir.Func) []float64 {
	lims := make([]float64, len(f.Params))
	for i := range lims {
		lims[i] = drawLimit
	}
	f.Body.Walk(func(in *ir.Instr) {
		a, ok := in.Attr.(*ir.DotAttr)
		if in.Op != ir.OpDotGeneral || !ok || len(in.Args) != 2 {
			return
		}
		side, contract := 1, a.RhsContract
		p := weightParam(f, in.Args[1])
		if p == nil {
			side, contract = 0, a.LhsContract
			p = weightParam(f, in.Args[0])
		}
		if p == nil {
			return
		}
		k := 1.0
		for _, d := range contract {
			shape := in.Args[side].Type.Shape
			if d < 0 || int(d) >= len(shape) || shape[d].Symbolic() {
				return
			}
			k *= float64(shape[d].Size)
		}
		if k > 1 {
			lims[p.Index] = math.Min(lims[p.Index], drawLimit/math.Sqrt(k))
		}
	})
	return lims
}

// weightParam is the parameter of f that v is, or is made from by ops that only move,
// repeat or convert its elements; nil if there is none.
func weightParam(f *ir.Func, v *ir.Value) *ir.Value {
	for v.Def != nil {
		switch v.Def.Op {
		case ir.OpReshape, ir.OpTranspose, ir.OpBroadcast, ir.OpConvert:
			v = v.Def.Args[0]
		default:
			return nil
		}
	}
	if v.Index < len(f.Params) && f.Params[v.Index] == v {
		return v
	}
	return nil
}
