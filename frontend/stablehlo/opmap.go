package stablehlo

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// boolOps are StableHLO's meanings of arithmetic on i1: add and maximum
// are or, multiply and minimum are and.
var boolOps = map[ir.Op]ir.Op{ir.OpAdd: ir.OpOr, ir.OpMax: ir.OpOr, ir.OpMul: ir.OpAnd, ir.OpMin: ir.OpAnd}

var cmpDirs = map[string]ir.CmpDir{"EQ": ir.CmpEQ, "NE": ir.CmpNE, "LT": ir.CmpLT, "LE": ir.CmpLE, "GT": ir.CmpGT, "GE": ir.CmpGE}

// op maps one op (not a return) to ir and binds its results.
func (bd *builder) op(o *op) {
	if o.inQ != nil {
		bd.quantOp(o)
		return
	}
	if o.name == "stablehlo.tuple" || o.name == "stablehlo.get_tuple_element" {
		bd.tupleOp(o)
		return
	}
	if code, ok := elementwise[o.name]; ok {
		args := bd.args(o)
		if (code == ir.OpReal || code == ir.OpImag) && len(args) == 1 && args[0].Type.DType.IsFloat() {
			bd.results(o, bd.realPart(o, code, args[0]))
			return
		}
		if b, ok := boolOps[code]; ok && len(args) == 2 && args[0].Type.DType == ir.I1 {
			code = b
		}
		if (code == ir.OpMax || code == ir.OpMin) && len(args) == 2 && args[0].Type.DType.IsComplex() && args[1].Type.Equal(args[0].Type) {
			bd.results(o, bd.complexMaxMin(o, code, args[0], args[1]))
			return
		}
		bd.results(o, bd.emit(o, code, nil, nil, args...))
		return
	}
	args := bd.args(o)
	if code, ok := collectiveOps[o.name]; ok {
		bd.collective(o, code, args)
		return
	}
	switch o.name {
	case "stablehlo.constant":
		a := bd.attr(o, "value")
		if a.kind != attrDense {
			bd.s.failf(a.pos, "unsupported constant value %s", a.describe())
		}
		t := a.dense.typ
		bd.results(o, bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: a.dense.literal(bd.s)}, []ir.Type{t}))
	case "stablehlo.compare":
		bd.results(o, bd.compare(o, args))
	case "stablehlo.select":
		bd.results(o, bd.emit(o, ir.OpSelect, nil, nil, args...))
	case "stablehlo.clamp":
		bd.results(o, bd.emit(o, ir.OpClamp, nil, nil, args...))
	case "stablehlo.convert":
		bd.results(o, bd.emit(o, ir.OpConvert, nil, []ir.Type{bd.result(o)}, args...))
	case "stablehlo.reshape":
		bd.results(o, bd.emit(o, ir.OpReshape, nil, []ir.Type{bd.result(o)}, args...))
	case "stablehlo.broadcast_in_dim":
		dims := bd.ints(o, "dims", "broadcast_dimensions")
		bd.results(o, bd.emit(o, ir.OpBroadcast, &ir.DimsAttr{Dims: dims}, []ir.Type{bd.result(o)}, args...))
	case "stablehlo.transpose":
		perm := bd.ints(o, "dims", "permutation")
		bd.results(o, bd.emit(o, ir.OpTranspose, &ir.PermAttr{Perm: perm}, nil, args...))
	case "stablehlo.slice":
		a := &ir.SliceAttr{Start: bd.ints(o, "start_indices"), Limit: bd.ints(o, "limit_indices"), Stride: bd.ints(o, "strides")}
		bd.results(o, bd.emit(o, ir.OpSlice, a, nil, args...))
	case "stablehlo.concatenate":
		axis := bd.attr(o, "dim", "dimension").int(bd.s, "dimension")
		bd.results(o, bd.emit(o, ir.OpConcat, &ir.AxisAttr{Axis: axis}, nil, args...))
	case "stablehlo.pad":
		a := &ir.PadAttr{Low: bd.ints(o, "low", "edge_padding_low"), High: bd.ints(o, "high", "edge_padding_high"),
			Interior: bd.ints(o, "interior", "interior_padding")}
		bd.results(o, bd.emit(o, ir.OpPad, a, nil, args...))
	case "stablehlo.iota":
		axis := bd.attr(o, "dim", "iota_dimension").int(bd.s, "iota_dimension")
		bd.results(o, bd.emit(o, ir.OpIota, &ir.AxisAttr{Axis: axis}, []ir.Type{bd.result(o)}))
	case "stablehlo.dot_general", "stablehlo.dot":
		bd.results(o, bd.dot(o, args))
	case "stablehlo.convolution", "stablehlo.dynamic_conv":
		bd.results(o, bd.conv(o, args))
	case "stablehlo.dynamic_slice":
		sizes := bd.ints(o, "sizes", "slice_sizes")
		bd.results(o, bd.emit(o, ir.OpDynamicSlice, &ir.SizesAttr{Sizes: sizes}, nil, args...))
	case "stablehlo.dynamic_update_slice":
		bd.results(o, bd.emit(o, ir.OpDynamicUpdateSlice, nil, nil, args...))
	default:
		bd.otherOp(o, args)
	}
}

// expansions are the elementwise ops read as a composition of ir ops, the
// CHLO ones as CHLO's legalisation expands them for XLA.
var expansions = map[string]func(*builder, *op, []*ir.Value) *ir.Value{
	"stablehlo.is_finite": (*builder).isFinite, "chlo.erf_inv": (*builder).erfInv,
	"chlo.lgamma": (*builder).lgamma, "chlo.next_after": (*builder).nextAfter, "chlo.digamma": (*builder).digamma,
}

// otherOp maps calls and the ops read as a composition of ir ops.
func (bd *builder) otherOp(o *op, args []*ir.Value) {
	if expand, ok := expansions[o.name]; ok {
		bd.results(o, expand(bd, o, args))
		return
	}
	switch o.name {
	case "sdy.sharding_constraint":
		bd.shardingConstraint(o)
	case probeOp: // a function body's probes, and a while's there, are read before they get here
		bd.s.failf(o.pos, "unsupported %s inside a region other than the do region of a while in the function body", o.name)
	case "call", "func.call":
		bd.call(o, args)
	case "stablehlo.composite":
		o.attrs["callee"] = bd.attr(o, "decomposition")
		bd.call(o, args)
	case "stablehlo.dynamic_pad":
		bd.results(o, bd.dynamicPad(o, args))
	case "stablehlo.optimization_barrier":
		// The values pass through; tpucc's passes do not reorder float arithmetic.
		bd.results(o, args...)
	case "stablehlo.reverse":
		bd.results(o, bd.reverse(o, args))
	case "stablehlo.get_dimension_size":
		bd.results(o, bd.dimensionSize(o, args))
	case "stablehlo.dynamic_iota", "stablehlo.dynamic_reshape", "stablehlo.dynamic_broadcast_in_dim":
		bd.results(o, bd.dynamicShape(o, args))
	case "stablehlo.map":
		bd.results(o, bd.mapOp(o, args))
	case "stablehlo.bitcast_convert":
		bd.results(o, bd.bitcastConvert(o, args))
	case "stablehlo.reduce_precision":
		bd.results(o, bd.reducePrecision(o, args))
	case "stablehlo.custom_call":
		bd.results(o, bd.customCall(o, args)...)
	case "stablehlo.triangular_solve":
		bd.results(o, bd.triangularSolve(o, args))
	case "stablehlo.fft":
		bd.results(o, bd.fft(o, args))
	case "stablehlo.rng_bit_generator":
		bd.results(o, bd.rngBitGenerator(o, args)...)
	case "chlo.top_k":
		// Both sort the last axis descending in total order, ties by lower index.
		k := bd.attr(o, "k").int(bd.s, "k")
		in, err := bd.b.Emit(ir.OpTopK, &ir.TopKAttr{K: k}, nil, args...)
		if err != nil {
			bd.s.failf(o.pos, "%s: %v", o.name, err)
		}
		bd.results(o, in.Results...)
	default:
		bd.regionOp(o, args)
	}
}

func (bd *builder) compare(o *op, args []*ir.Value) *ir.Value {
	d := bd.attr(o, "comparison_direction")
	dir, ok := cmpDirs[d.text]
	if d.kind != attrWord || !ok {
		bd.s.failf(d.pos, "unsupported comparison direction %s", d.describe())
	}
	t := bd.optAttr(o, "compare_type")
	if t != nil && t.text == "TOTALORDER" && len(args) == 2 && args[0].Type.DType.IsFloat() {
		args = []*ir.Value{bd.totalOrderKey(o, args[0]), bd.totalOrderKey(o, args[1])}
	} else if t != nil && t.text != "FLOAT" && t.text != "SIGNED" && t.text != "UNSIGNED" && t.text != "TOTALORDER" {
		bd.s.failf(t.pos, "unsupported compare type %s", t.text)
	}
	return bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: dir}, nil, args...)
}

// totalOrderKey maps floats to signed integers of their width that compare
// as the floats do in IEEE total order (-NaN < -inf < ... < -0 < +0 < ...
// < inf < +NaN): the bits as a signed integer, with all but the sign bit
// flipped where the sign is set, since a larger magnitude is then smaller.
func (bd *builder) totalOrderKey(o *op, x *ir.Value) *ir.Value {
	it := map[int]ir.DType{16: ir.I16, 32: ir.I32, 64: ir.I64}[x.Type.DType.Bits()]
	if it == ir.Invalid {
		bd.s.failf(o.pos, "unsupported compare type TOTALORDER of %s", x.Type.DType)
	}
	t := x.Type.WithDType(it)
	bits := bd.emit(o, ir.OpBitcastConvert, nil, []ir.Type{t}, x)
	w := int64(x.Type.DType.Bits())
	shift := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Ints: []int64{w - 1}}}, []ir.Type{t})
	sign := bd.emit(o, ir.OpShiftRightArithmetic, nil, nil, bits, shift)
	low := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Ints: []int64{1<<(w-1) - 1}}}, []ir.Type{t})
	return bd.emit(o, ir.OpXor, nil, nil, bits, bd.emit(o, ir.OpAnd, nil, nil, sign, low))
}

// isFinite is |x| < inf: false for NaN and both infinities.
func (bd *builder) isFinite(o *op, args []*ir.Value) *ir.Value {
	if len(args) != 1 || !args[0].Type.DType.IsFloat() {
		bd.s.failf(o.pos, "%s needs one float operand", o.name)
	}
	abs := bd.emit(o, ir.OpAbs, nil, nil, args[0])
	inf := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Floats: []float64{math.Inf(1)}}}, []ir.Type{args[0].Type})
	return bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLT}, nil, abs, inf)
}

func (bd *builder) call(o *op, args []*ir.Value) {
	name := bd.attr(o, "callee").text
	f := bd.funcs[name]
	if f == nil {
		bd.s.failf(o.pos, "call to undefined function @%s", name)
	}
	if len(args) != len(f.Params) {
		bd.s.failf(o.pos, "call passes %d values, @%s takes %d", len(args), name, len(f.Params))
	}
	for i, a := range args {
		if !a.Type.Equal(f.Params[i].Type) {
			bd.s.failf(o.args[i].pos, "argument %d is %s, @%s takes %s", i, mlirType(a.Type), name, mlirType(f.Params[i].Type))
		}
	}
	in, err := bd.b.Emit(ir.OpCall, &ir.CallAttr{Callee: name}, append([]ir.Type{}, f.Results...), args...)
	if err != nil {
		bd.s.failf(o.pos, "%s: %v", o.name, err)
	}
	bd.results(o, in.Results...)
}

// dot maps dot_general (and the older dot). A result dtype wider than the
// operands' (bf16 x bf16 -> f32, i8 x i8 -> i32) converts the operands
// first, which computes the same products exactly; a narrower one is refused.
func (bd *builder) dot(o *op, args []*ir.Value) *ir.Value {
	if len(args) != 2 {
		bd.s.failf(o.pos, "%s needs 2 operands", o.name)
	}
	a := bd.dotDims(o, args)
	if alg := bd.optAttr(o, "algorithm"); alg != nil {
		a.Algorithm = bd.dotAlgorithm(alg, args[0].Type.DType)
	}
	res := bd.result(o)
	want := res.DType
	if acc, _ := ir.DotAccumulation(args[0].Type.DType); a.Algorithm != nil && want == acc {
		// Half operands accumulated in the f32 result as the algorithm
		// names them: ir's dot_general takes them as they are.
		return bd.emit(o, ir.OpDotGeneral, a, []ir.Type{res}, args...)
	}
	for i, x := range args {
		dt := x.Type.DType
		if dt == want {
			continue
		}
		if dt.IsFloat() != want.IsFloat() || dt.Bits() >= want.Bits() {
			bd.s.failf(o.pos, "unsupported %s from %s operands to a %s result", o.name, dt, want)
		}
		t := x.Type.WithDType(want)
		args[i] = bd.emit(o, ir.OpConvert, nil, []ir.Type{t}, x)
	}
	return bd.emit(o, ir.OpDotGeneral, a, nil, args...)
}

func (bd *builder) dotDims(o *op, args []*ir.Value) *ir.DotAttr {
	if o.name == "stablehlo.dot" {
		return &ir.DotAttr{LhsContract: []int64{int64(args[0].Type.Rank() - 1)}, RhsContract: []int64{0}}
	}
	a := &ir.DotAttr{}
	if d := bd.optAttr(o, "dot_dimension_numbers"); d != nil {
		if d.kind != attrDict {
			bd.s.failf(d.pos, "unsupported dot_dimension_numbers %s", d.describe())
		}
		get := func(k string) []int64 {
			if v := d.dict[k]; v != nil {
				return v.ints(bd.s, k)
			}
			return nil
		}
		a.LhsBatch, a.RhsBatch = get("lhs_batching_dimensions"), get("rhs_batching_dimensions")
		a.LhsContract, a.RhsContract = get("lhs_contracting_dimensions"), get("rhs_contracting_dimensions")
		return a
	}
	if p := bd.optAttr(o, "batching_dims_pair"); p != nil {
		a.LhsBatch, a.RhsBatch = p.list[0].ints(bd.s, "batching_dims"), p.list[1].ints(bd.s, "batching_dims")
	}
	if p := bd.optAttr(o, "contracting_dims_pair"); p != nil {
		a.LhsContract, a.RhsContract = p.list[0].ints(bd.s, "contracting_dims"), p.list[1].ints(bd.s, "contracting_dims")
	}
	return a
}

// realPart is StableHLO's real and imag of a float operand, which ir's ops
// take only complex: real(x) is x, imag(x) is zeros of x's type.
func (bd *builder) realPart(o *op, code ir.Op, x *ir.Value) *ir.Value {
	if code == ir.OpReal {
		return x
	}
	return bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: ir.NewLiteral(x.Type, []float64{0})}, []ir.Type{x.Type})
}
