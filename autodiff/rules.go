package autodiff

import (
	"github.com/tpucc/tpucc/ir"
)

// vjpFunc returns the cotangent of each operand of in (nil where none flows) given the
// cotangent of each of its results (nil for a result without one).
type vjpFunc func(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value

// rule is an op's entry: a VJP, or why the op passes no gradient back (nondiff), or
// why reaching it with a cotangent is an error (refused).
type rule struct {
	vjp     vjpFunc
	nondiff string
	refused string
	regions bool // while, case: the tape's own VJP through their regions
	// refuseIf, when set, says why this instance of an op with a vjp is not
	// differentiated ("" when it is).
	refuseIf func(in *ir.Instr) string
}

const collectiveRefused = "collectives have no VJP rule yet (their gradients exchange between processes too)"

// Rule describes op's entry for documentation and tests: "vjp", "nondiff: WHY" or
// "refused: WHY", or "" when the op has none.
func Rule(op ir.Op) string {
	r := rules[op]
	switch {
	case r.vjp != nil, r.regions:
		return "vjp"
	case r.nondiff != "":
		return "nondiff: " + r.nondiff
	case r.refused != "":
		return "refused: " + r.refused
	}
	return ""
}

// Refused says why differentiating through in is an error (its op is
// refused, or this instance of it is), "" when it is not.
func Refused(in *ir.Instr) string {
	r := rules[in.Op]
	if r.refuseIf != nil {
		if why := r.refuseIf(in); why != "" {
			return why
		}
	}
	return r.refused
}

const (
	intOnly   = "integer and i1 only"
	intResult = "its result is an integer or i1"
)

var rules = map[ir.Op]rule{
	ir.OpNeg:     unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.neg(g) }),
	ir.OpAbs:     unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.mul(g, e.un(ir.OpSign, x)) }),
	ir.OpExp:     unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.mul(g, y) }),
	ir.OpLog:     unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.div(g, x) }),
	ir.OpLog1p:   unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.div(g, e.add(x, e.like(x, 1))) }),
	ir.OpExpm1:   unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.mul(g, e.add(y, e.like(y, 1))) }),
	ir.OpSqrt:    unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.div(e.scale(g, 0.5), y) }),
	ir.OpRsqrt:   unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.mul(e.scale(g, -0.5), e.div(y, x)) }),
	ir.OpTanh:    unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.mul(g, e.sub(e.like(y, 1), e.mul(y, y))) }),
	ir.OpSigmoid: unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.mul(g, e.mul(y, e.sub(e.like(y, 1), y))) }),
	ir.OpSin:     unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.mul(g, e.un(ir.OpCos, x)) }),
	ir.OpCos:     unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.neg(e.mul(g, e.un(ir.OpSin, x))) }),
	// d cbrt(x) = 1 / (3 cbrt(x)^2).
	ir.OpCbrt: unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.div(e.scale(g, 1.0/3), e.mul(y, y)) }),
	ir.OpErf: unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value {
		return e.mul(e.scale(g, invSqrtPi2), e.un(ir.OpExp, e.neg(e.mul(x, x))))
	}),
	// Piecewise constant: the derivative is 0 wherever it exists, as JAX defines it.
	ir.OpFloor: zeroRule,
	ir.OpCeil:  zeroRule,
	ir.OpRound: zeroRule,
	ir.OpSign:  zeroRule,
	ir.OpNot:   {nondiff: intOnly},

	ir.OpAdd: binaryRule(func(e *emitter, x, y, z, g *ir.Value) (*ir.Value, *ir.Value) { return g, g }),
	ir.OpSub: binaryRule(func(e *emitter, x, y, z, g *ir.Value) (*ir.Value, *ir.Value) { return g, e.neg(g) }),
	ir.OpMul: binaryRule(func(e *emitter, x, y, z, g *ir.Value) (*ir.Value, *ir.Value) { return e.mul(g, y), e.mul(g, x) }),
	ir.OpDiv: binaryRule(func(e *emitter, x, y, z, g *ir.Value) (*ir.Value, *ir.Value) {
		gx := e.div(g, y)
		return gx, e.neg(e.mul(gx, z))
	}),
	ir.OpRem: binaryRule(func(e *emitter, x, y, z, g *ir.Value) (*ir.Value, *ir.Value) {
		// x - y*trunc(x/y): d/dy is -trunc(x/y).
		q := e.div(x, y)
		return g, e.neg(e.mul(g, e.mul(e.un(ir.OpSign, q), e.un(ir.OpFloor, e.un(ir.OpAbs, q)))))
	}),
	ir.OpPow:   binaryRule(powVJP),
	ir.OpMax:   binaryRule(func(e *emitter, x, y, z, g *ir.Value) (*ir.Value, *ir.Value) { return chooser(e, x, y, z, g) }),
	ir.OpMin:   binaryRule(func(e *emitter, x, y, z, g *ir.Value) (*ir.Value, *ir.Value) { return chooser(e, x, y, z, g) }),
	ir.OpAnd:   {nondiff: intOnly},
	ir.OpOr:    {nondiff: intOnly},
	ir.OpXor:   {nondiff: intOnly},
	ir.OpAtan2: binaryRule(atan2VJP),

	ir.OpCompare: {nondiff: intResult},
	ir.OpSelect:  {vjp: selectVJP},
	ir.OpClamp:   {vjp: clampVJP},

	ir.OpReshape: {vjp: func(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
		return []*ir.Value{e.reshape(g[0], in.Args[0].Type)}
	}},
	ir.OpConvert:   {vjp: convertVJP},
	ir.OpCopy:      {vjp: func(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value { return []*ir.Value{g[0]} }},
	ir.OpBroadcast: {vjp: broadcastVJP},
	ir.OpTranspose: {vjp: transposeVJP},
	ir.OpSlice:     {vjp: sliceVJP},
	ir.OpConcat:    {vjp: concatVJP},
	ir.OpPad:       {vjp: padVJP},
	ir.OpIota:      {nondiff: "it has no operands"},

	ir.OpDotGeneral:       {vjp: dotVJP},
	ir.OpRaggedDot:        {vjp: raggedDotVJP},
	ir.OpRaggedContract:   {vjp: raggedContractVJP},
	ir.OpConvolution:      {vjp: convVJP},
	ir.OpReduceWindow:     {vjp: reduceWindowVJP, refuseIf: reduceWindowRefused},
	ir.OpSelectAndScatter: {refused: "max pooling's gradient is not differentiated again (second order)"},

	ir.OpReduceSum:  {vjp: reduceSumVJP},
	ir.OpReduceMax:  {vjp: reduceChooserVJP},
	ir.OpReduceMin:  {vjp: reduceChooserVJP},
	ir.OpReduceProd: {vjp: reduceProdVJP},
	ir.OpArgmax:     {nondiff: intResult},
	ir.OpArgmin:     {nondiff: intResult},
	ir.OpCumsum:     {vjp: cumsumVJP},

	ir.OpTake:               {vjp: takeVJP},
	ir.OpScatterAdd:         {vjp: scatterAddVJP},
	ir.OpDynamicSlice:       {vjp: dynamicSliceVJP},
	ir.OpDynamicUpdateSlice: {vjp: dynamicUpdateSliceVJP},
	ir.OpOneHot:             {nondiff: "its operand is integer indices"},
	ir.OpTopK:               {vjp: topKVJP},
	ir.OpArgsort:            {nondiff: intResult},

	ir.OpRelu:       unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.where(e.cmp(ir.CmpGT, x, e.like(x, 0)), g) }),
	ir.OpGelu:       {vjp: geluVJP},
	ir.OpSilu:       unaryRule(siluVJP),
	ir.OpSoftmax:    {vjp: softmaxVJP},
	ir.OpLogSoftmax: {vjp: logSoftmaxVJP},
	ir.OpLayerNorm:  {vjp: layerNormVJP},
	ir.OpRMSNorm:    {vjp: rmsNormVJP},

	ir.OpConstant: {nondiff: "it has no operands"},
	// The value is its operand's; where it lives is the partitioner's affair,
	// so the cotangent passes through (the partitioner lays it out).
	ir.OpShardingConstraint: {vjp: func(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value { return []*ir.Value{g[0]} }},
	// The tape differentiates them itself (control.go): their regions are re-cloned
	// and differentiated into a backward case or a reverse loop.
	ir.OpWhile:      {regions: true},
	ir.OpCase:       {regions: true},
	ir.OpCall:       {refused: "calls are inlined before differentiation"},
	ir.OpCustomCall: {refused: "its kernel is opaque to tpucc: differentiate its fallback function instead"},
	// Their VJPs are collectives too (all_gather's is reduce_scatter, a
	// permute's the inverse permute), written once programs are traced
	// over a process grid; until then a gradient through one is refused.
	ir.OpAllReduce:           {refused: collectiveRefused},
	ir.OpAllGather:           {refused: collectiveRefused},
	ir.OpAllToAll:            {refused: collectiveRefused},
	ir.OpReduceScatter:       {refused: collectiveRefused},
	ir.OpCollectiveBroadcast: {refused: collectiveRefused},
	ir.OpCollectivePermute:   {refused: collectiveRefused},
	ir.OpCollectiveReduce:    {refused: collectiveRefused},
	ir.OpReplicaID:           {nondiff: "an integer id of the running process"},
	ir.OpPartitionID:         {nondiff: "an integer id of the running process"},
	ir.OpReturn:              {refused: "the transform handles return itself"},
	ir.OpFusion:              {refused: "autodiff runs on unfused IR, before the fuse pass"},
	ir.OpComplex:             {refused: complexRefused},
	ir.OpReal:                {refused: complexRefused},
	ir.OpImag:                {refused: complexRefused},
	ir.OpTriangularSolve:     {vjp: triangularSolveVJP},

	ir.OpShiftLeft:            {nondiff: intOnly},
	ir.OpShiftRightLogical:    {nondiff: intOnly},
	ir.OpShiftRightArithmetic: {nondiff: intOnly},
	ir.OpPopcnt:               {nondiff: intOnly},
	ir.OpClz:                  {nondiff: intOnly},
	// d tan(x) = 1 + tan(x)^2.
	ir.OpTan:             unaryRule(func(e *emitter, x, y, g *ir.Value) *ir.Value { return e.mul(g, e.add(e.like(y, 1), e.mul(y, y))) }),
	ir.OpRoundAFZ:        zeroRule,
	ir.OpBitcastConvert:  {nondiff: "it reinterprets bits"},
	ir.OpSort:            {refused: "sort with a comparator has no VJP rule yet (the cotangents would be scattered back through the comparator's permutation)"},
	ir.OpReducePrecision: {vjp: reducePrecisionVJP},
	ir.OpFFT:             {refused: complexRefused},
	ir.OpRngBitGenerator: {nondiff: "its results are bits of an integer state"},
}

var zeroRule = rule{vjp: func(*emitter, *ir.Instr, []*ir.Value) []*ir.Value { return nil }}

func unaryRule(f func(e *emitter, x, y, g *ir.Value) *ir.Value) rule {
	return rule{vjp: func(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
		return []*ir.Value{f(e, in.Args[0], in.Results[0], g[0])}
	}}
}

func binaryRule(f func(e *emitter, x, y, z, g *ir.Value) (*ir.Value, *ir.Value)) rule {
	return rule{vjp: func(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
		gx, gy := f(e, in.Args[0], in.Args[1], in.Results[0], g[0])
		return []*ir.Value{gx, gy}
	}}
}

// chooser is max's and min's rule as JAX writes it: the operand equal to the result
// gets g; when both are, each gets g/2.
func chooser(e *emitter, x, y, z, g *ir.Value) (*ir.Value, *ir.Value) {
	one, half, zero := e.like(g, 1), e.like(g, 0.5), e.like(g, 0)
	xEq, yEq := e.cmp(ir.CmpEQ, x, z), e.cmp(ir.CmpEQ, y, z)
	wx := e.sel(xEq, e.sel(yEq, half, one), zero)
	wy := e.sel(yEq, e.sel(xEq, half, one), zero)
	return e.mul(g, wx), e.mul(g, wy)
}

// powVJP follows JAX: d/dx is y*x^(y-1), taken as 0 where y is 0; d/dy is log(x)*x^y
// with log(0) taken as 0.
func powVJP(e *emitter, x, y, z, g *ir.Value) (*ir.Value, *ir.Value) {
	yZero := e.cmp(ir.CmpEQ, y, e.like(y, 0))
	dx := e.sel(yZero, e.like(y, 0), e.mul(y, e.b.Op1(ir.OpPow, nil, x, e.sub(y, e.like(y, 1)))))
	xZero := e.cmp(ir.CmpEQ, x, e.like(x, 0))
	logx := e.un(ir.OpLog, e.sel(xZero, e.like(x, 1), x))
	return e.mul(g, dx), e.mul(g, e.mul(logx, z))
}

// atan2VJP: atan2(x, y) is the angle of (y, x), so d/dx = y/(x²+y²), d/dy = -x/(x²+y²).
func atan2VJP(e *emitter, x, y, z, g *ir.Value) (*ir.Value, *ir.Value) {
	r := e.div(g, e.add(e.mul(x, x), e.mul(y, y)))
	return e.mul(r, y), e.neg(e.mul(r, x))
}

func selectVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	p, gz := in.Args[0], g[0]
	zero := e.like(gz, 0)
	return []*ir.Value{nil, e.sel(p, gz, zero), e.sel(p, zero, gz)}
}

// clampVJP differentiates clamp as what it computes, min(max(x, lo), hi), with max's
// and min's rule: away from ties x gets g strictly inside (lo, hi), lo below it and hi
// above it, as JAX's clamp rule gives; at a tie the two equal operands split g, so
// that lo = hi (where the result is that bound) passes all of g on. Scalar bounds sum
// their share.
func clampVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	lo, x, hi := in.Args[0], in.Args[1], in.Args[2]
	full := func(b *ir.Value) *ir.Value { return e.broadcast(b, x.Type, nil) }
	lob, hib := full(lo), full(hi)
	m := e.b.Op1(ir.OpMax, nil, x, lob)
	gm, ghi := chooser(e, m, hib, in.Results[0], g[0])
	gx, glo := chooser(e, x, lob, m, gm)
	back := func(b, gb *ir.Value) *ir.Value {
		if b.Type.Rank() == 0 {
			return e.sum(gb, iotaDims(x.Type.Rank()), false)
		}
		return gb
	}
	return []*ir.Value{back(lo, glo), gx, back(hi, ghi)}
}

func convertVJP(e *emitter, in *ir.Instr, g []*ir.Value) []*ir.Value {
	x := in.Args[0]
	if !x.Type.DType.IsFloat() {
		return nil
	}
	return []*ir.Value{e.convert(g[0], x.Type.DType)}
}
