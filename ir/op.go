package ir

// Op is an operation kind. The table below is the single source of truth for
// each op's name, operand count, attributes and type rule.
type Op uint16

const (
	OpInvalid Op = iota

	// Unary elementwise.
	OpNeg
	OpAbs
	OpExp
	OpLog
	OpLog1p
	OpExpm1
	OpSqrt
	OpRsqrt
	OpTanh
	OpSigmoid
	OpSin
	OpCos
	OpFloor
	OpCeil
	OpRound
	OpSign
	OpNot
	OpErf
	OpCbrt

	// Binary elementwise.
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpRem
	OpPow
	OpMax
	OpMin
	OpAnd
	OpOr
	OpXor
	OpAtan2

	// Compare and select.
	OpCompare
	OpSelect
	OpClamp

	// Shape.
	OpReshape
	OpConvert
	OpBroadcast
	OpTranspose
	OpSlice
	OpConcat
	OpPad
	OpIota

	// Contraction.
	OpDotGeneral
	OpRaggedDot
	OpRaggedContract
	OpConvolution

	// Reduction.
	OpReduceSum
	OpReduceMax
	OpReduceMin
	OpReduceProd
	OpArgmax
	OpArgmin
	OpCumsum
	OpReduceWindow
	OpSelectAndScatter

	// Indexing.
	OpTake
	OpScatterAdd
	OpDynamicSlice
	OpDynamicUpdateSlice
	OpOneHot
	OpTopK
	OpArgsort

	// Composite: kept whole for pattern passes, decomposed when lowered.
	OpRelu
	OpGelu
	OpSilu
	OpSoftmax
	OpLogSoftmax
	OpLayerNorm
	OpRMSNorm

	// Other.
	OpConstant
	OpCall
	OpReturn
	OpFusion
	OpCopy
	OpShardingConstraint
	OpWhile
	OpCase

	// Complex numbers.
	OpComplex
	OpReal
	OpImag

	// Linear algebra.
	OpTriangularSolve

	// Bit ops and more elementwise ops (StableHLO's).
	OpShiftLeft
	OpShiftRightLogical
	OpShiftRightArithmetic
	OpPopcnt
	OpClz
	OpTan
	OpRoundAFZ
	OpReducePrecision
	OpBitcastConvert

	// Calls of kernels outside the IR.
	OpCustomCall

	// Collectives: values exchanged between the processes of a grid (collective.go).
	OpAllReduce
	OpAllGather
	OpAllToAll
	OpReduceScatter
	OpCollectiveBroadcast
	OpCollectivePermute
	OpCollectiveReduce
	OpReplicaID
	OpPartitionID
	// Spectral.
	OpFFT
	// Sort with a comparator region.
	OpSort
	// Random bits from a counter-based generator's state.
	OpRngBitGenerator

	numOps
)

// Group classifies ops as DESIGN.md's table does.
type Group uint8

const (
	GroupOther Group = iota
	GroupUnary
	GroupBinary
	GroupCompare
	GroupShape
	GroupContraction
	GroupReduction
	GroupIndexing
	GroupComposite
)

// OpInfo describes one op.
type OpInfo struct {
	Name        string
	Group       Group
	Args        int  // operand count; -1 for variadic
	MinArgs     int  // for variadic ops
	NeedsType   bool // the result type must be written: it is not inferable from operands
	Elementwise bool // result element i depends only on operand elements i
	Commutative bool
	SideEffects bool // does more than compute its results: cse and dce keep it
	// Transcendental: elementwise, and each element evaluates a
	// transcendental function (fusion keeps a shared one apart; the
	// lowering computes half types in f32 around it).
	Transcendental bool
	Reduce         ReduceKind
	Fuse           FuseClass
	Cost           CostClass
	Pad            PadRule
	Scratch        ScratchClass // set from opScratch (opscratch.go)
	Doc            string
	// StableHLO is the StableHLO (or CHLO) op a unary or binary
	// elementwise op lowers to one to one.
	StableHLO string

	decode func(*attrReader) Attr
	infer  func(*inferCtx) []Type
}

var opTable = [numOps]OpInfo{
	OpInvalid: {Name: "invalid"},

	OpNeg:     unary("neg", "stablehlo.negate", CostElementwise, numCplxT, "-x; wraps for integers"),
	OpAbs:     withInfer(unary("abs", "stablehlo.abs", CostElementwise, numCplxT, "|x|; identity for unsigned; the modulus, a float of the part type, for complex"), inferAbs),
	OpExp:     unary("exp", "stablehlo.exponential", CostTranscendental, floatCplxT, "e^x"),
	OpLog:     unary("log", "stablehlo.log", CostTranscendental, floatCplxT, "natural logarithm"),
	OpLog1p:   unary("log1p", "stablehlo.log_plus_one", CostTranscendental, floatCplxT, "log(1+x), accurate near 0"),
	OpExpm1:   unary("expm1", "stablehlo.exponential_minus_one", CostTranscendental, floatCplxT, "e^x-1, accurate near 0"),
	OpSqrt:    unary("sqrt", "stablehlo.sqrt", CostTranscendental, floatCplxT, "square root (the principal one for complex)"),
	OpRsqrt:   unary("rsqrt", "stablehlo.rsqrt", CostTranscendental, floatCplxT, "1/sqrt(x)"),
	OpTanh:    unary("tanh", "stablehlo.tanh", CostTranscendental, floatCplxT, "hyperbolic tangent"),
	OpSigmoid: unary("sigmoid", "stablehlo.logistic", CostTranscendental, floatCplxT, "1/(1+e^-x)"),
	OpSin:     unary("sin", "stablehlo.sine", CostTranscendental, floatCplxT, "sine"),
	OpCos:     unary("cos", "stablehlo.cosine", CostTranscendental, floatCplxT, "cosine"),
	OpFloor:   unary("floor", "stablehlo.floor", CostElementwise, floatT, "round toward -inf"),
	OpCeil:    unary("ceil", "stablehlo.ceil", CostElementwise, floatT, "round toward +inf"),
	OpRound:   unary("round", "stablehlo.round_nearest_even", CostElementwise, floatT, "round half to even (as numpy and torch)"),
	OpSign:    unary("sign", "stablehlo.sign", CostElementwise, numCplxT, "-1, 0 or 1 (NaN stays NaN, -0 stays -0); x/|x| for complex (0 stays 0, NaN parts give NaN)"),
	OpNot:     unary("not", "stablehlo.not", CostElementwise, bitsT, "logical not for i1, bitwise not for integers"),
	OpErf:     unary("erf", "chlo.erf", CostTranscendental, floatT, "error function"),
	OpCbrt:    unary("cbrt", "stablehlo.cbrt", CostTranscendental, floatCplxT, "cube root; cbrt(-x) = -cbrt(x); the principal root for complex"),

	OpAdd:   binary("add", "stablehlo.add", CostElementwise, numCplxT, true, "x+y; integers wrap"),
	OpSub:   binary("sub", "stablehlo.subtract", CostElementwise, numCplxT, false, "x-y; integers wrap"),
	OpMul:   binary("mul", "stablehlo.multiply", CostElementwise, numCplxT, true, "x*y; integers wrap"),
	OpDiv:   binary("div", "stablehlo.divide", CostElementwise, numCplxT, false, "x/y; integers round toward zero, x/0 = -1 (all bits set for unsigned)"),
	OpRem:   binary("rem", "stablehlo.remainder", CostElementwise, numericT, false, "remainder with the sign of x (C fmod); integer x%0 = x"),
	OpPow:   binary("pow", "stablehlo.power", CostTranscendental, numCplxT, false, "x^y (the principal value for complex)"),
	OpMax:   binary("max", "stablehlo.maximum", CostElementwise, numericT, true, "maximum; NaN if either is NaN"),
	OpMin:   binary("min", "stablehlo.minimum", CostElementwise, numericT, true, "minimum; NaN if either is NaN"),
	OpAnd:   binary("and", "stablehlo.and", CostElementwise, bitsT, true, "logical and for i1, bitwise for integers"),
	OpOr:    binary("or", "stablehlo.or", CostElementwise, bitsT, true, "logical or for i1, bitwise for integers"),
	OpXor:   binary("xor", "stablehlo.xor", CostElementwise, bitsT, true, "logical xor for i1, bitwise for integers"),
	OpAtan2: binary("atan2", "stablehlo.atan2", CostTranscendental, floatCplxT, false, "atan(x/y) in the right quadrant; for complex -i*log((y+i*x)/sqrt(y^2+x^2))"),

	OpCompare: {Name: "compare", Fuse: FuseLoop, Cost: CostElementwise, Pad: PadElementwise,
		Group: GroupCompare, Args: 2, Elementwise: true,
		Doc:    "elementwise comparison {dir=eq|ne|lt|le|gt|ge}; result i1; NaN compares unequal to everything",
		decode: func(r *attrReader) Attr { return &CompareAttr{Dir: r.cmpDir("dir")} }, infer: inferCompare},
	OpSelect: {Name: "select", Fuse: FuseLoop, Cost: CostElementwise, Pad: PadElementwise,
		Group: GroupCompare, Args: 3, Elementwise: true,
		Doc: "select %pred, %a, %b: a where pred else b; pred is i1 of a's shape or i1[]", infer: inferSelect},
	OpClamp: {Name: "clamp", Fuse: FuseLoop, Cost: CostComposite, Pad: PadElementwise,
		Group: GroupCompare, Args: 3, Elementwise: true,
		Doc: "clamp %lo, %x, %hi: min(max(x, lo), hi); lo and hi have x's shape or are scalars", infer: inferClamp},

	OpReshape: {Name: "reshape", Fuse: FuseLayout, Cost: CostNone, Pad: PadReshape,
		Group: GroupShape, Args: 1, NeedsType: true,
		Doc: "same elements in row-major order, new shape (the result type)", infer: inferReshape},
	OpConvert: {Name: "convert", Fuse: FuseLoop, Cost: CostElementwise, Pad: PadElementwise,
		Group: GroupShape, Args: 1, NeedsType: true, Elementwise: true,
		Doc: "to the result dtype: floats to integers truncate toward zero, to i1 means != 0", infer: inferConvert},
	OpBroadcast: {Name: "broadcast", Fuse: FuseLoop, Cost: CostNone, Pad: PadBroadcast,
		Group: GroupShape, Args: 1, NeedsType: true,
		Doc:    "broadcast {dims=[...]}: operand dim i maps to result dim dims[i] (size 1 or equal); StableHLO broadcast_in_dim",
		decode: func(r *attrReader) Attr { return &DimsAttr{Dims: r.ints("dims", true)} }, infer: inferBroadcast},
	OpTranspose: {Name: "transpose", Fuse: FuseLayout, Cost: CostNone, Pad: PadTranspose,
		Group: GroupShape, Args: 1,
		Doc:    "transpose {perm=[...]}: result dim i is operand dim perm[i]",
		decode: func(r *attrReader) Attr { return &PermAttr{Perm: r.ints("perm", true)} }, infer: inferTranspose},
	OpSlice: {Name: "slice", Fuse: FuseLoop, Cost: CostNone, Pad: PadSlice,
		Group: GroupShape, Args: 1,
		Doc: "slice {start=[...], limit=[...], stride=[...]}: static strided window; stride defaults to 1",
		decode: func(r *attrReader) Attr {
			return &SliceAttr{Start: r.ints("start", true), Limit: r.ints("limit", true), Stride: r.ints("stride", false)}
		}, infer: inferSlice},
	OpConcat: {Name: "concat", Fuse: FuseLoop, Cost: CostNone, Pad: PadConcat,
		Group: GroupShape, Args: -1, MinArgs: 1,
		Doc:    "concat {axis=N}: joins operands along axis",
		decode: decodeAxis, infer: inferConcat},
	OpPad: {Name: "pad", Fuse: FuseLoop, Cost: CostNone, Pad: PadPad,
		Group: GroupShape, Args: 2,
		Doc: "pad %x, %value {low=[...], high=[...], interior=[...]}: edge padding (may be negative) and interior padding",
		decode: func(r *attrReader) Attr {
			return &PadAttr{Low: r.ints("low", true), High: r.ints("high", true), Interior: r.ints("interior", false)}
		}, infer: inferPad},
	OpIota: {Name: "iota", Fuse: FuseLoop, Cost: CostNone, Pad: PadNone,
		Group: GroupShape, Args: 0, NeedsType: true,
		Doc: "iota {axis=N}: element = its index along axis", decode: decodeAxis, infer: inferIota},

	OpDotGeneral: {Name: "dot_general", Fuse: FuseDot, Cost: CostDot, Pad: PadDot,
		Group: GroupContraction, Args: 2,
		Doc: "dot_general {lhs_batch, rhs_batch, lhs_contract, rhs_contract[, algorithm=[lhs,rhs,acc,1,1,1,imprecise]]}: result dims are batch, lhs free, rhs free; " +
			"algorithm, when written, is the StableHLO algorithm the program named, one the product computes exactly (the operands' own type, accumulated in f32 for f32/f16/bf16, f64 for f64); the lowering writes it back",
		decode: func(r *attrReader) Attr {
			return &DotAttr{LhsBatch: r.ints("lhs_batch", false), RhsBatch: r.ints("rhs_batch", false),
				LhsContract: r.ints("lhs_contract", false), RhsContract: r.ints("rhs_contract", false), Algorithm: r.dotAlgorithm()}
		}, infer: inferDot},
	OpRaggedDot: {Name: "ragged_dot", Fuse: FuseNever, Cost: CostRaggedDot, Pad: PadRefuse,
		Group: GroupContraction, Args: 3,
		Doc: "ragged_dot %lhs, %rhs, %group_sizes: grouped matmul (jax.lax.ragged_dot); lhs [m,k], rhs [g,k,n], i32 group_sizes [g] -> [m,n]; " +
			"row r is multiplied by rhs[i] when end[i-1] <= r < end[i], end being the running sum of the sizes with negative sizes taken as 0: rows past the groups are 0, groups past m are cut",
		infer: inferRaggedDot},
	OpRaggedContract: {Name: "ragged_contract", Fuse: FuseNever, Cost: CostRaggedDot, Pad: PadRefuse,
		Group: GroupContraction, Args: 3,
		Doc: "ragged_contract %lhs, %rhs, %group_sizes: per-group product over rows (ragged_dot's weight gradient, jax.lax.ragged_dot_general with the ragged dimension contracted); " +
			"lhs [m,k], rhs [m,n], i32 group_sizes [g] -> [g,k,n]; result[i] = lhs[rows of group i]ᵀ · rhs[rows of group i], the groups' rows as ragged_dot's: rows past the groups add nothing, a group with no rows is 0",
		infer: inferRaggedContract},
	OpConvolution: {Name: "convolution", Fuse: FuseNever, Cost: CostConv, Pad: PadRefuse,
		Group: GroupContraction, Args: 2,
		Doc: "convolution %lhs, %rhs {lhs_dims, rhs_dims, out_dims, stride, pad_low, pad_high, lhs_dilation, rhs_dilation, feature_groups, batch_groups}: " +
			"lax.conv_general_dilated; dims list [batch, feature, spatial...] (rhs: [out feature, in feature, spatial...])",
		decode: decodeConv, infer: inferConv},

	OpReduceSum:  reduction("reduce_sum", ReduceSum, "sum over axes"),
	OpReduceMax:  reduction("reduce_max", ReduceMax, "maximum over axes (-inf, or the dtype's minimum, when empty)"),
	OpReduceMin:  reduction("reduce_min", ReduceMin, "minimum over axes"),
	OpReduceProd: reduction("reduce_prod", ReduceProd, "product over axes"),
	OpArgmax: {Name: "argmax", Fuse: FuseNever, Cost: CostArgReduce, Pad: PadArgReduce,
		Group: GroupReduction, Args: 1,
		Doc: "argmax {axis=N}: i32 index of the first maximum; NaN counts as the maximum", decode: decodeAxis, infer: inferArg},
	OpArgmin: {Name: "argmin", Fuse: FuseNever, Cost: CostArgReduce, Pad: PadArgReduce,
		Group: GroupReduction, Args: 1,
		Doc: "argmin {axis=N}: i32 index of the first minimum; NaN counts as the minimum", decode: decodeAxis, infer: inferArg},
	OpCumsum: {Name: "cumsum", Fuse: FuseNever, Cost: CostScan, Pad: PadScan,
		Group: GroupReduction, Args: 1,
		Doc: "cumsum {axis=N}: inclusive prefix sum", decode: decodeAxis, infer: inferSameNumericAxis},
	OpReduceWindow: {Name: "reduce_window", Fuse: FuseNever, Cost: CostWindow, Pad: PadRefuse,
		Group: GroupReduction, Args: 2,
		Doc: "reduce_window %x, %init {kind=sum|max|min|prod, window, stride, base_dilation, window_dilation, pad_low, pad_high}: " +
			"each window of x (dilated, padded; holes and padding hold init) reduced, starting from init (pooling)",
		decode: decodeReduceWindow, infer: inferReduceWindow},
	OpSelectAndScatter: {Name: "select_and_scatter", Fuse: FuseNever, Cost: CostWindow, Pad: PadRefuse,
		Group: GroupReduction, Args: 3,
		Doc: "select_and_scatter %x, %source, %init {select=ge|gt|le|lt, window, stride, pad_low, pad_high}: " +
			"init everywhere, plus source[i] added at the element window i selects (the first kept by select among its elements inside x): max pooling's gradient",
		decode: decodeSelectScatter, infer: inferSelectScatter},

	OpTake: {Name: "take", Fuse: FuseNever, Cost: CostNone, Pad: PadTake,
		Group: GroupIndexing, Args: 2,
		Doc:    "take %x, %idx {axis=N}: as jnp.take; result x.shape[:axis]+idx.shape+x.shape[axis+1:]; indices are clamped into range",
		decode: decodeAxis, infer: inferTake},
	OpScatterAdd: {Name: "scatter_add", Fuse: FuseNever, Cost: CostScatter, Pad: PadScatter,
		Group: GroupIndexing, Args: 3,
		Doc:    "scatter_add %x, %idx, %upd {axis=N}: x with upd added at the rows idx along axis (the transpose of take); out-of-range rows are dropped",
		decode: decodeAxis, infer: inferScatterAdd},
	OpDynamicSlice: {Name: "dynamic_slice", Fuse: FuseNever, Cost: CostNone, Pad: PadDynamicSlice,
		Group: GroupIndexing, Args: -1, MinArgs: 1,
		Doc:    "dynamic_slice %x, %i0, ... {sizes=[...]}: window at runtime scalar starts, clamped so it fits",
		decode: func(r *attrReader) Attr { return &SizesAttr{Sizes: r.ints("sizes", true)} }, infer: inferDynamicSlice},
	OpDynamicUpdateSlice: {Name: "dynamic_update_slice", Fuse: FuseNever, Cost: CostNone, Pad: PadDynamicUpdateSlice,
		Group: GroupIndexing, Args: -1, MinArgs: 2,
		Doc: "dynamic_update_slice %x, %upd, %i0, ...: x with upd written at runtime scalar starts, clamped so it fits", infer: inferDynamicUpdateSlice},
	OpOneHot: {Name: "one_hot", Fuse: FuseNever, Cost: CostElementwise, Pad: PadNone,
		Group: GroupIndexing, Args: 1, NeedsType: true,
		Doc:    "one_hot %idx {depth=N}: result idx.shape+[N] of the result dtype, 1 where idx equals the position",
		decode: func(r *attrReader) Attr { return &DepthAttr{Depth: r.int("depth")} }, infer: inferOneHot},
	OpTopK: {Name: "top_k", Fuse: FuseNever, Cost: CostSort, Pad: PadSort,
		Group: GroupIndexing, Args: 1,
		Doc:    "top_k %x {k=N}: the k largest along the last axis, descending, and their i32 indices (ties: lower index first)",
		decode: func(r *attrReader) Attr { return &TopKAttr{K: r.int("k")} }, infer: inferTopK},
	OpArgsort: {Name: "argsort", Fuse: FuseNever, Cost: CostSort, Pad: PadSort,
		Group: GroupIndexing, Args: 1,
		Doc: "argsort {axis=N}: i32 indices that sort x ascending along axis, stable", decode: decodeAxis, infer: inferArgsort},

	OpRelu: {Name: "relu", Fuse: FuseLoop, Cost: CostElementwise, Pad: PadElementwise,
		Group: GroupComposite, Args: 1, Elementwise: true, Doc: "max(x, 0)",
		infer: func(c *inferCtx) []Type { return c.same(numericT) }},
	OpGelu: {Name: "gelu", Fuse: FuseLoop, Cost: CostComposite, Pad: PadElementwise,
		Group: GroupComposite, Args: 1, Elementwise: true, Transcendental: true,
		Doc:    "gelu {approximate=BOOL}: x*Phi(x), exact with erf or the tanh approximation",
		decode: func(r *attrReader) Attr { return &GeluAttr{Approximate: r.bool("approximate")} },
		infer:  func(c *inferCtx) []Type { return c.same(floatT) }},
	OpSilu: {Name: "silu", Fuse: FuseLoop, Cost: CostComposite, Pad: PadElementwise,
		Group: GroupComposite, Args: 1, Elementwise: true, Transcendental: true, Doc: "x*sigmoid(x)",
		infer: func(c *inferCtx) []Type { return c.same(floatT) }},
	OpSoftmax: {Name: "softmax", Fuse: FuseNorm, Cost: CostComposite, Pad: PadSoftmax,
		Group: GroupComposite, Args: 1,
		Doc: "softmax {axis=N}: exp(x-max)/sum, numerically stable", decode: decodeAxis, infer: inferSameFloatAxis},
	OpLogSoftmax: {Name: "log_softmax", Fuse: FuseNorm, Cost: CostComposite, Pad: PadSoftmax,
		Group: GroupComposite, Args: 1,
		Doc: "log_softmax {axis=N}: x-max-log(sum(exp(x-max)))", decode: decodeAxis, infer: inferSameFloatAxis},
	OpLayerNorm: {Name: "layer_norm", Fuse: FuseNorm, Cost: CostComposite, Pad: PadNorm,
		Group: GroupComposite, Args: 3,
		Doc:    "layer_norm %x, %scale, %bias {eps=F}: over the last axis, (x-mean)/sqrt(var+eps)*scale+bias",
		decode: func(r *attrReader) Attr { return &EpsAttr{Eps: r.float("eps")} }, infer: inferNorm},
	OpRMSNorm: {Name: "rms_norm", Fuse: FuseNorm, Cost: CostComposite, Pad: PadNorm,
		Group: GroupComposite, Args: 2,
		Doc:    "rms_norm %x, %scale {eps=F}: over the last axis, x/sqrt(mean(x^2)+eps)*scale",
		decode: func(r *attrReader) Attr { return &EpsAttr{Eps: r.float("eps")} }, infer: inferNorm},

	OpConstant: {Name: "constant", Fuse: FuseConst, Cost: CostNone, Pad: PadNone,
		Group: GroupOther, Args: 0, NeedsType: true,
		Doc: "a literal: scalar, splat over the result type, or nested list", infer: inferConstant},
	OpCall: {Name: "call", Fuse: FuseNever, Cost: CostRegion, Pad: PadRefuse,
		Group: GroupOther, Args: -1,
		Doc: "call @f(%a, ...): the results of function f", infer: inferCall},
	OpReturn: {Name: "return", Fuse: FuseNever, Cost: CostNone, Pad: PadRefuse,
		Group: GroupOther, Args: -1,
		Doc: "return %a, ...: ends a function body", infer: func(*inferCtx) []Type { return nil }},
	OpFusion: {Name: "fusion", Fuse: FuseNever, Cost: CostRegion, Pad: PadRefuse,
		Group: GroupOther, Args: -1, NeedsType: true,
		Doc:    "fusion %a, ... {kind=loop|input|output} : T, ... (%p: T, ...) { body; return %r, ... }: runs its region (parameters bound to the operands, no outer values captured) as one kernel",
		decode: decodeFusion, infer: inferFusion},
	OpCopy: {Name: "copy", Fuse: FuseLoop, Cost: CostNone, Pad: PadElementwise,
		Group: GroupShape, Args: 1, NeedsType: true, Elementwise: true,
		Doc: "copy %x : T{layout}: the same values in another physical layout", infer: inferCopy},
	OpShardingConstraint: {Name: "sharding_constraint", Fuse: FuseNever, Cost: CostNone, Pad: PadElementwise,
		Group: GroupOther, Args: 1,
		Doc:    "sharding_constraint %x {sharding=<@mesh, [{\"dp\"}, {}]>}: x, laid out over the mesh's devices as the sharding says (Shardy's sdy.sharding_constraint)",
		decode: func(r *attrReader) Attr { return &ShardingAttr{Sharding: r.sharding("sharding")} },
		infer:  func(c *inferCtx) []Type { return c.same(anyT) }},
	OpWhile: {Name: "while", Fuse: FuseNever, Cost: CostRegion, Pad: PadRefuse,
		Group: GroupOther, Args: -1, MinArgs: 1,
		Doc: "while %a, ... : T, ... cond (%p: T, ...) { ...; return %go } do (%p: T, ...) { ...; return %r, ... }: " +
			"carries its operands, runs do while cond (i1[]) is true, returns the last carried values; regions capture nothing",
		infer: inferWhile},
	OpCase: {Name: "case", Fuse: FuseNever, Cost: CostRegion, Pad: PadRefuse,
		Group: GroupOther, Args: -1, MinArgs: 1, NeedsType: true,
		Doc: "case %k, %a, ... : R, ... (%p: T, ...) { ...; return %r, ... } ...: runs branch k (i32[]) on the operands after k; " +
			"k outside [0, N) runs the last branch; regions capture nothing",
		infer: inferCase},

	OpComplex: withInfer(binary("complex", "stablehlo.complex", CostElementwise, floatT, false,
		"complex %re, %im: the complex number re+im*i of two f32 (c64) or f64 (c128) operands"), inferComplex),
	OpReal: withInfer(unary("real", "stablehlo.real", CostElementwise, complexT,
		"real part of a c64 or c128, as f32 or f64"), inferPart),
	OpImag: withInfer(unary("imag", "stablehlo.imag", CostElementwise, complexT,
		"imaginary part of a c64 or c128, as f32 or f64"), inferPart),

	OpTriangularSolve: {Name: "triangular_solve", Fuse: FuseNever, Cost: CostComposite, Pad: PadRefuse,
		Group: GroupContraction, Args: 2,
		Doc: "triangular_solve %a, %b {left_side, lower, transpose_a, unit_diagonal}: x with op(a)·x = b (left_side) or x·op(a) = b, " +
			"op(a) = a or its transpose (not conjugated for complex a); a [..., m, m] is read only in its lower (or upper) triangle, and its diagonal as ones when unit_diagonal",
		decode: decodeTriangularSolve, infer: inferTriangularSolve},

	OpShiftLeft: binary("shift_left", "stablehlo.shift_left", CostElementwise, intT, false,
		"x << y; y is read as unsigned, and y >= the bit width gives 0"),
	OpShiftRightLogical: binary("shift_right_logical", "stablehlo.shift_right_logical", CostElementwise, intT, false,
		"x >> y shifting in zeros; y is read as unsigned, and y >= the bit width gives 0"),
	OpShiftRightArithmetic: binary("shift_right_arithmetic", "stablehlo.shift_right_arithmetic", CostElementwise, intT, false,
		"x >> y shifting in copies of the top bit (for unsigned types too); y is read as unsigned, and y >= the bit width shifts by width-1"),
	OpPopcnt:   unary("popcnt", "stablehlo.popcnt", CostElementwise, intT, "the number of set bits of x"),
	OpClz:      unary("clz", "stablehlo.count_leading_zeros", CostElementwise, intT, "the number of leading zero bits of x; the bit width for 0"),
	OpTan:      unary("tan", "stablehlo.tan", CostTranscendental, floatT, "tangent"),
	OpRoundAFZ: unary("round_afz", "stablehlo.round_nearest_afz", CostElementwise, floatT, "round half away from zero (C round)"),
	OpReducePrecision: {Name: "reduce_precision", Fuse: FuseNever, Cost: CostElementwise, Pad: PadRefuse,
		Group: GroupOther, Args: 1,
		Doc: "reduce_precision {exponent_bits=E, mantissa_bits=M}: x rounded (to nearest, ties to even) to M mantissa bits, then to ±inf above " +
			"and ±0 below the range of E exponent bits (no subnormals), on x's own bit layout; NaN stays NaN while M > 0",
		decode: decodeReducePrecision, infer: inferReducePrecision},
	OpBitcastConvert: {Name: "bitcast_convert", Fuse: FuseNever, Cost: CostNone, Pad: PadRefuse,
		Group: GroupOther, Args: 1, NeedsType: true,
		Doc: "bitcast_convert %x : T: x's bits read as T's dtype, little-endian; a wider operand element becomes a new last dimension of " +
			"result elements, a narrower one is gathered from the operand's last dimension; not for i1",
		infer: inferBitcastConvert},

	OpCustomCall: {Name: "custom_call", Fuse: FuseNever, Cost: CostCustom, Pad: PadRefuse,
		Group: GroupOther, Args: -1, NeedsType: true,
		Doc: "custom_call @target(%a, ...) {backend_config=\"...\", has_side_effect, api_version, operand_layouts, result_layouts, fallback=@f, cost=N} : T, ...: " +
			"a kernel outside the IR (XLA's custom call; a Pallas kernel is @tpu_custom_call), passed through to the backend as written; " +
			"where it cannot run, function f (the call's signature) runs instead; cost is its flops for the cost model",
		decode: decodeCustomCall, infer: inferCustomCall},

	OpAllReduce: collective("all_reduce", CostNone, -1, false,
		"all_reduce %a, ... {kind=sum|max|min|prod, groups=[[0,1],...], channel=N, global_ids}: each result is its operand combined over the "+
			"processes of the group, in the group's order", decodeAllReduce, inferAllReduce),
	OpAllGather: collective("all_gather", CostNone, -1, true,
		"all_gather %a, ... {dim=N, groups, channel, global_ids} : T, ...: the group's operands concatenated along dim, in the group's order",
		decodeAllGather, inferAllGather),
	OpAllToAll: collective("all_to_all", CostNone, -1, false,
		"all_to_all %a, ... {split_dim, concat_dim, split_count, groups, channel}: each operand split in split_count parts along split_dim, "+
			"part i sent to the group's process i, the parts received concatenated along concat_dim", decodeAllToAll, inferAllToAll),
	OpReduceScatter: collective("reduce_scatter", CostNone, 1, true,
		"reduce_scatter %a {kind, dim=N, groups, channel, global_ids} : T: all_reduce, then the group's process i keeps part i of the result split along dim",
		decodeReduceScatter, inferReduceScatter),
	OpCollectiveBroadcast: collective("collective_broadcast", CostNone, -1, false,
		"collective_broadcast %a, ... {groups, channel, dynamic_root}: the operands of the group's first process (with dynamic_root, of the group's "+
			"process roots[j] for result j, roots being an i32[N] last operand); zeros in a process outside every group",
		decodeCollective, inferCollectiveBroadcast),
	OpCollectivePermute: collective("collective_permute", CostNone, 1, false,
		"collective_permute %a {pairs=[[source, target], ...], channel}: the source's operand; zeros in a process that is no pair's target",
		decodePermute, inferPermute),
	OpCollectiveReduce: collective("collective_reduce", CostNone, -1, false,
		"collective_reduce %a, ... {kind, groups, channel}: in the group's first process, the operands combined over the group (in its order); zeros elsewhere",
		decodeAllReduce, inferAllReduce),
	OpReplicaID: collective("replica_id", CostNone, 0, false,
		"replica_id : u32[]: the replica of the running process (0 in a program run alone)", nil, inferProcessID),
	OpPartitionID: collective("partition_id", CostNone, 0, false,
		"partition_id : u32[]: the partition of the running process (0 in a program run alone)", nil, inferProcessID),
	OpFFT: {Name: "fft", Fuse: FuseNever, Cost: CostComposite, Pad: PadRefuse,
		Group: GroupOther, Args: 1,
		Doc: "fft %x {type=fft|ifft|rfft|irfft, length=[...]}: the discrete Fourier transform over x's last len(length) axes (1 to 3): " +
			"fft sums x[j]·e^{-2πi jk/n}, ifft x[j]·e^{2πi jk/n}/n per axis; rfft is fft of a real f32/f64 x keeping the first n/2+1 elements " +
			"of the last axis, irfft its inverse (the missing half taken as the conjugate of the given one; the imaginary parts of the first " +
			"and, for even n, the last element ignored)",
		decode: decodeFFT, infer: inferFFT},
	OpSort: {Name: "sort", Fuse: FuseNever, Cost: CostSort, Pad: PadSort,
		Group: GroupIndexing, Args: -1, MinArgs: 1,
		Doc: "sort %a, ... {dimension=N, stable=BOOL} (%a0: A, %a1: A, ...) { ...; return %lt }: the operands (one shape) permuted alike along " +
			"dimension N into the order the comparator region gives (i1[]: true when operand scalars a0, ... go before a1, ...; " +
			"operand i's pair are parameters 2i and 2i+1); stable keeps equal elements in order (tpucc's sort always does); the region captures nothing",
		decode: decodeSort, infer: inferSort},

	OpRngBitGenerator: {Name: "rng_bit_generator", Fuse: FuseNever, Cost: CostComposite, Pad: PadRefuse,
		Group: GroupOther, Args: 1, NeedsType: true,
		Doc: "rng_bit_generator %s {algorithm=default|three_fry|philox} : u64[n], T: the new state and random bits of type T from state s " +
			"(u64[2]: key, counter; philox also u64[3]: key, 128-bit counter), computed as XLA does: three_fry is Threefry-2x32 (20 rounds), " +
			"philox Philox-4x32 (10 rounds) of successive counters, default is philox; 8- and 16-bit elements keep a 32-bit word's low bits",
		decode: decodeRng, infer: inferRng},
}

// withInfer replaces a unary or binary op's type rule by one whose result
// dtype differs from the operands'.
func withInfer(info OpInfo, infer func(*inferCtx) []Type) OpInfo {
	info.infer = infer
	return info
}

func unary(name, hlo string, cost CostClass, ok dtypeClass, doc string) OpInfo {
	return OpInfo{Name: name, Group: GroupUnary, Args: 1, Elementwise: true, Doc: doc, StableHLO: hlo,
		Fuse: FuseLoop, Cost: cost, Pad: PadElementwise, Transcendental: cost == CostTranscendental,
		infer: func(c *inferCtx) []Type { return c.same(ok) }}
}

func binary(name, hlo string, cost CostClass, ok dtypeClass, comm bool, doc string) OpInfo {
	return OpInfo{Name: name, Group: GroupBinary, Args: 2, Elementwise: true, Commutative: comm, Doc: doc, StableHLO: hlo,
		Fuse: FuseLoop, Cost: cost, Pad: PadElementwise, Transcendental: cost == CostTranscendental,
		infer: func(c *inferCtx) []Type { return c.same(ok) }}
}

func reduction(name string, kind ReduceKind, doc string) OpInfo {
	return OpInfo{Name: name, Group: GroupReduction, Args: 1, Reduce: kind,
		Fuse: FuseReduce, Cost: CostReduce, Pad: PadReduce,
		Doc: name + " {axes=[...], keepdims=BOOL}: " + doc,
		decode: func(r *attrReader) Attr {
			return &AxesAttr{Axes: r.ints("axes", true), KeepDims: r.bool("keepdims")}
		}, infer: inferReduce}
}

// collective is a row of a collective op: it synchronises with the other
// processes of its group (so cse, dce, licm and folding leave it alone).
// The cost model counts its bytes only: the combines of a reducing
// collective depend on the group's size, known when the program runs.
func collective(name string, cost CostClass, args int, needsType bool, doc string,
	decode func(*attrReader) Attr, infer func(*inferCtx) []Type) OpInfo {
	return OpInfo{Name: name, Group: GroupOther, Args: args, MinArgs: 1, NeedsType: needsType, SideEffects: true,
		Fuse: FuseNever, Cost: cost, Pad: PadRefuse, Doc: doc, decode: decode, infer: infer}
}

func decodeAxis(r *attrReader) Attr { return &AxisAttr{Axis: r.int("axis")} }

// Info returns the op's table entry.
func (o Op) Info() *OpInfo {
	if o >= numOps {
		return &opTable[OpInvalid]
	}
	return &opTable[o]
}

func (o Op) String() string { return o.Info().Name }

// Ops lists every op, in table order, without OpInvalid.
func Ops() []Op {
	out := make([]Op, 0, numOps-1)
	for o := OpInvalid + 1; o < numOps; o++ {
		out = append(out, o)
	}
	return out
}

// LookupOp returns the op spelled name in .tir.
func LookupOp(name string) (Op, bool) {
	for o := OpInvalid + 1; o < numOps; o++ {
		if opTable[o].Name == name {
			return o, true
		}
	}
	return OpInvalid, false
}
