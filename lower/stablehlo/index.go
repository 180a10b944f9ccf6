package stablehlo

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// indexing lowers take, scatter_add, dynamic_slice, dynamic_update_slice,
// one_hot, top_k and argsort.
func (e *emitter) indexing(in *ir.Instr, args []hv) ([]hv, error) {
	t := in.Results[0].Type
	switch in.Op {
	case ir.OpSort:
		return e.sort(in, args)
	case ir.OpTake:
		r, err := e.take(args[0], args[1], in.Attr.(*ir.AxisAttr).Axis, t)
		return []hv{r}, err
	case ir.OpScatterAdd:
		return []hv{e.scatterAdd(args[0], args[1], args[2], in.Attr.(*ir.AxisAttr).Axis)}, nil
	case ir.OpDynamicSlice:
		x := args[0]
		if x.t.Rank() == 0 {
			return []hv{x}, nil
		}
		args = append(args[:1], e.signedStarts(args[1:])...)
		return []hv{e.def(t, "stablehlo.dynamic_slice ", refs(args), ", sizes = ", ints(in.Attr.(*ir.SizesAttr).Sizes),
			" : ", funcType(args, []ir.Type{t}))}, nil
	case ir.OpDynamicUpdateSlice:
		if args[0].t.Rank() == 0 {
			return []hv{args[1]}, nil
		}
		args = append(args[:2], e.signedStarts(args[2:])...)
		return []hv{e.def(t, "stablehlo.dynamic_update_slice ", refs(args), " : ", funcType(args, []ir.Type{t}))}, nil
	case ir.OpOneHot:
		return []hv{e.oneHot(args[0], in.Attr.(*ir.DepthAttr).Depth, t)}, nil
	case ir.OpTopK:
		x := args[0]
		axis := int64(x.t.Rank() - 1)
		vals, idx := e.sortWithIndex(x, axis, "GT")
		vals = e.convert(vals, x.t.DType)
		k := in.Attr.(*ir.TopKAttr).K
		if k == x.t.Shape[axis].Size {
			return []hv{vals, idx}, nil
		}
		start := make([]int64, x.t.Rank())
		limit := x.t.Dims()
		stride := make([]int64, x.t.Rank())
		for i := range stride {
			stride[i] = 1
		}
		limit[axis] = k
		return []hv{e.slice(vals, start, limit, stride), e.slice(idx, start, limit, stride)}, nil
	case ir.OpArgsort:
		_, idx := e.sortWithIndex(args[0], in.Attr.(*ir.AxisAttr).Axis, "LT")
		return []hv{idx}, nil
	}
	panic("stablehlo: indexing called for " + in.Op.String())
}

// signedStarts converts unsigned start indices to i64, which holds every u8
// and u32 value. StableHLO clamps unsigned starts as unsigned, and XLA:CPU does
// at run time, but its simplifier turns a dynamic_slice with constant starts
// (and a gather of one constant scalar index) into a slice reading them as
// signed: a u32 start of 4294967295 (or a u8 255) becomes -1 and is clamped to
// 0 instead of dim - size (checked). take, scatter_add, dynamic_slice and
// dynamic_update_slice all go through here, so no unsigned index reaches XLA.
// A u64 start is first capped at 2^63-1, which i64 holds and which is past
// any dimension, as the u64 it stands for is.
func (e *emitter) signedStarts(starts []hv) []hv {
	out := make([]hv, len(starts))
	for i, s := range starts {
		out[i] = s
		if s.t.DType == ir.U64 {
			s = e.op2("stablehlo.minimum", s, e.iconst(s.t, math.MaxInt64))
		}
		if s.t.DType.IsUnsigned() {
			out[i] = e.convert(s, ir.I64)
		}
	}
	return out
}

// windowDims are the output dimensions of a take (or the update dimensions of a
// scatter_add) that come from x itself: x's dimensions other than axis, placed
// around the q index dimensions.
func windowDims(rank int, axis int64, q int) []int64 {
	out := []int64{}
	for i := 0; i < rank; i++ {
		switch {
		case int64(i) < axis:
			out = append(out, int64(i))
		case int64(i) > axis:
			out = append(out, int64(i+q-1))
		}
	}
	return out
}

// dimNumbers spells a #stablehlo.gather<...> or #stablehlo.scatter<...>
// attribute as the printer does: empty lists and a zero index_vector_dim left out.
func dimNumbers(kind string, names []string, lists [][]int64, indexVectorDim int) string {
	var parts []string
	for i, n := range names {
		if len(lists[i]) > 0 {
			parts = append(parts, n+" = "+ints(lists[i]))
		}
	}
	if indexVectorDim != 0 {
		parts = append(parts, "index_vector_dim = "+strconv.Itoa(indexVectorDim))
	}
	return "#stablehlo." + kind + "<" + strings.Join(parts, ", ") + ">"
}

// take lowers jnp.take as a gather of one row per index. The indices keep
// their shape and dtype: index_vector_dim = rank(idx) makes each index a
// one-element start vector. Gather clamps every start so the row fits, which is
// exactly "indices are clamped into [0, n-1]"; XLA:CPU was checked to do so for
// negative and too-large indices of i8, i32, i64, u8 and u32. Unsigned indices
// are widened to i64 first (see signedStarts).
func (e *emitter) take(x, idx hv, axis int64, t ir.Type) (hv, error) {
	if x.t.Shape[axis].Size == 0 {
		if n, _ := t.NumElements(); n == 0 {
			return e.constant(t, &ir.Literal{}), nil
		}
		return hv{}, fmt.Errorf("take from an empty axis: axis %d of %s has no rows to clamp indices into", axis, x.t)
	}
	q := idx.t.Rank()
	if x.t.Shape[axis].Size == 1 {
		// Every index clamps to row 0: the result is x broadcast over the index
		// dimensions. This also keeps XLA:CPU from a crash: a gather from a
		// one-element constant, converted and fed to a reduce_window, fails a
		// check in its simplifier (hlo_casting_utils.h: "reshape.1 ... cannot
		// be downcasted to HloConstantInstruction").
		row := e.reshape(x, x.t.WithShape(dropDims(x.t.Shape, []int64{axis})))
		return e.broadcast(row, t, windowDims(x.t.Rank(), axis, q)), nil
	}
	idx = e.signedStarts([]hv{idx})[0]
	sizes := x.t.Dims()
	sizes[axis] = 1
	dn := dimNumbers("gather", []string{"offset_dims", "collapsed_slice_dims", "start_index_map"},
		[][]int64{windowDims(x.t.Rank(), axis, q), {axis}, {axis}}, q)
	return e.def(t, `"stablehlo.gather"(`, x.ref, ", ", idx.ref, ") <{dimension_numbers = ", dn,
		", slice_sizes = ", denseArray(sizes), "}> : ", funcType([]hv{x, idx}, []ir.Type{t})), nil
}

// scatterAdd lowers scatter_add as the transpose of take: a scatter whose
// update windows are the rows. XLA drops an update whose window would fall
// outside x (checked for negative and too-large indices, signed and unsigned),
// which is the contract; duplicate indices accumulate. Half types accumulate in
// f32 and round once.
func (e *emitter) scatterAdd(x, idx, upd hv, axis int64) hv {
	if n, _ := x.t.NumElements(); n == 0 {
		return x
	}
	d := x.t.DType
	if isHalf(d) {
		x, upd = e.convert(x, ir.F32), e.convert(upd, ir.F32)
	}
	idx = e.signedStarts([]hv{idx})[0]
	q := idx.t.Rank()
	dn := dimNumbers("scatter", []string{"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims"},
		[][]int64{windowDims(x.t.Rank(), axis, q), {axis}, {axis}}, q)
	r := e.def(x.t, `"stablehlo.scatter"(`, x.ref, ", ", idx.ref, ", ", upd.ref, ") <{scatter_dimension_numbers = ", dn, "}> ({")
	e.binaryBody("stablehlo.add", x.t.DType)
	e.line("}) : ", funcType([]hv{x, idx, upd}, []ir.Type{x.t}))
	return e.convert(r, d)
}

// oneHot compares an iota along the new last dimension with the broadcast
// indices, so an index outside [0, depth) matches nothing and gives a row of
// zeros. The comparison runs in the index dtype when depth-1 fits in it, else
// in i64 (a u8 index against depth 300 must not see a wrapped iota).
func (e *emitter) oneHot(idx hv, depth int64, t ir.Type) hv {
	_, hi := idx.t.DType.IntRange()
	if depth-1 > hi && idx.t.DType != ir.U64 { // u64's hi is 2^64-1, spelled -1
		idx = e.convert(idx, ir.I64)
	}
	q := idx.t.Rank()
	wide := t.WithDType(idx.t.DType)
	pos := e.iota(wide, int64(q))
	dims := make([]int64, q)
	for i := range dims {
		dims[i] = int64(i)
	}
	hot := e.compare("EQ", e.broadcast(idx, wide, dims), pos)
	return e.convertOp(hot, t)
}

// sortWithIndex sorts x along axis together with an i32 iota and returns both
// sorted. The sort is stable and compares floats in IEEE total order
// (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN), so equal keys keep index
// order: with dir GT that is "descending, ties lower index first".
//
// Sub-byte keys sort in eight bits (exactByte; XLA:CPU's sort, like its
// variadic reduce, wants operands of one layout): the sorted values come back in that
// dtype (byteWide), for the caller to convert if it keeps them.
func (e *emitter) sortWithIndex(x hv, axis int64, dir string) (hv, hv) {
	x = e.exactByte(x)
	it := x.t.WithDType(ir.I32)
	idx := e.iota(it, axis)
	res := e.defN([]ir.Type{x.t, it}, `"stablehlo.sort"(`, x.ref, ", ", idx.ref, ") <{dimension = ",
		strconv.FormatInt(axis, 10), " : i64, is_stable = true}> ({")
	s, si := ir.Scalar(x.t.DType), ir.Scalar(ir.I32)
	args := e.regionArgs([]ir.Type{s, s, si, si})
	e.blockHeader(args)
	e.push()
	kind := compareType(x.t.DType)
	if x.t.DType.IsFloat() {
		kind = "TOTALORDER"
	}
	e.ret(e.compareAs(dir, kind, args[0], args[1]))
	e.pop()
	e.line("}) : ", funcType([]hv{x, idx}, []ir.Type{x.t, it}))
	return res[0], res[1]
}
