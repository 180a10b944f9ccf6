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
// a parameter; the experts' weights of a ragged_dot; a convolution's kernel) gets 2/sqrt(K), K the number
// of products each output sums, as a network's weights are initialised; its outputs
// then keep the size of its other operand instead of growing by sqrt(K) per layer.
// Every other parameter gets 2.
// Without it, the transformer block of examples/ computes values near 1e4.
func InputLimits(f *ir.Func) []float64 {
	lims := make([]float64, len(f.Params))
	for i := range lims {
		lims[i] = drawLimit
	}
	f.Body.Walk(func(in *ir.Instr) {
		if p, k := weightOf(f, in); p != nil && k > 1 {
			lims[p.Index] = math.Min(lims[p.Index], drawLimit/math.Sqrt(float64(k)))
		}
	})
	return lims
}

// weightOf returns the parameter of f that is in's weight and the length K of the
// sums it enters: for dot_general the rhs, or the lhs when the rhs is not a
// parameter, and the product of its contracting dimensions; for ragged_dot the rhs
// [g,k,n] and k; for convolution the kernel and its input features times its window. It returns nil for other instructions or when K is not static.
func weightOf(f *ir.Func, in *ir.Instr) (*ir.Value, int64) {
	var side int
	var contract []int64
	switch a, ok := in.Attr.(*ir.DotAttr); {
	case in.Op == ir.OpDotGeneral && ok && len(in.Args) == 2:
		side, contract = 1, a.RhsContract
		if weightParam(f, in.Args[1]) == nil {
			side, contract = 0, a.LhsContract
		}
	case in.Op == ir.OpRaggedDot && len(in.Args) == 3:
		side, contract = 1, []int64{1}
	case in.Op == ir.OpConvolution && len(in.Args) == 2:
		side, contract = 1, in.Attr.(*ir.ConvAttr).RhsDims[1:]
	default:
		return nil, 0
	}
	p := weightParam(f, in.Args[side])
	shape := in.Args[side].Type.Shape
	k := int64(1)
	for _, d := range contract {
		if p == nil || d < 0 || int(d) >= len(shape) || shape[d].Symbolic() {
			return nil, 0
		}
		k *= shape[d].Size
	}
	return p, k
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
