package stablehlo

import (
	"math"
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// gather reads StableHLO's general gather (several indexed dimensions,
// windows, batching dimensions) as a take of the flattened operand at the
// row-major position of every result element: for each operand dimension
// its coordinate is the batch coordinate (a batching dimension), or the
// start index the index vector gives, clamped so the window fits, plus the
// window coordinate. Only static, well-formed dimension numbers are read;
// anything else is refused by name.
func (bd *builder) gather(o *op, args []*ir.Value) *ir.Value {
	f := bd.indexForm(o, "dimension_numbers", [5]string{"offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims", "start_indices_batching_dims"})
	dn := bd.attr(o, "dimension_numbers").dict
	ints := func(k string) []int64 {
		if v := dn[k]; v != nil {
			return v.ints(bd.s, k)
		}
		return nil
	}
	g := gatherDims{offset: f.window, collapsed: f.collapsed, startMap: f.toOperand,
		opBatch: ints("operand_batching_dims"), idxBatch: ints("start_indices_batching_dims"),
		sizes: bd.ints(o, "slice_sizes"), ivd: f.ivd}
	x, idx := args[0], args[1]
	if len(o.outs) != 1 || !g.valid(x.Type, idx.Type, o.outs[0]) {
		bd.s.failf(o.pos, "unsupported form of %s: the dimension numbers, slice sizes and result type do not agree (or a shape is not static)", o.name)
	}
	out := o.outs[0].WithDType(ir.I32)
	var lin *ir.Value
	stride := int64(1)
	xd := x.Type.Dims()
	for d := len(xd) - 1; d >= 0; d-- {
		c := bd.gatherCoord(o, g, idx, int64(d), xd[d], out, nil)
		term := bd.emit(o, ir.OpMul, nil, nil, c, bd.splat(o, out, stride))
		if lin == nil {
			lin = term
		} else {
			lin = bd.emit(o, ir.OpAdd, nil, nil, lin, term)
		}
		stride *= xd[d]
	}
	n, _ := x.Type.NumElements()
	flat := bd.emit(o, ir.OpReshape, nil, []ir.Type{x.Type.WithShape([]ir.Dim{ir.D(n)})}, x)
	return bd.emit(o, ir.OpTake, &ir.AxisAttr{Axis: 0}, nil, flat, lin)
}

type gatherDims struct {
	offset, collapsed, startMap, opBatch, idxBatch, sizes []int64
	ivd                                                   int64
}

// batchAxes are the result axes that are not window axes, in order: one
// per indices dimension other than index_vector_dim.
func (g gatherDims) batchAxes(rank int) []int64 {
	var b []int64
	for a := 0; a < rank; a++ {
		if !slices.Contains(g.offset, int64(a)) {
			b = append(b, int64(a))
		}
	}
	return b
}

// valid checks the dimension numbers against the operand, indices and
// result types: static shapes, and the result shape they imply.
func (g gatherDims) valid(x, idx, res ir.Type) bool {
	xr, q := int64(x.Rank()), int64(idx.Rank())
	n, _ := x.NumElements()
	if !x.IsStatic() || !idx.IsStatic() || !res.IsStatic() || n > math.MaxInt32 || !idx.DType.IsInt() ||
		int64(len(g.sizes)) != xr || len(g.opBatch) != len(g.idxBatch) || g.ivd < 0 || g.ivd > q {
		return false
	}
	vec := int64(1)
	if g.ivd < q {
		vec = idx.Dims()[g.ivd]
	}
	if int64(len(g.startMap)) != vec {
		return false
	}
	inRange := func(ds []int64, n int64) bool {
		for _, d := range ds {
			if d < 0 || d >= n {
				return false
			}
		}
		return true
	}
	if !inRange(g.collapsed, xr) || !inRange(g.startMap, xr) || !inRange(g.opBatch, xr) || !inRange(g.idxBatch, q) ||
		slices.Contains(g.idxBatch, g.ivd) {
		return false
	}
	var window []int64
	for d := int64(0); d < xr; d++ {
		if g.sizes[d] < 0 || g.sizes[d] > x.Dims()[d] {
			return false
		}
		if slices.Contains(g.collapsed, d) || slices.Contains(g.opBatch, d) {
			if g.sizes[d] != 1 {
				return false
			}
			continue
		}
		window = append(window, g.sizes[d])
	}
	var batch []int64
	for a := int64(0); a < q; a++ {
		if a != g.ivd {
			batch = append(batch, idx.Dims()[a])
		}
	}
	if len(window) != len(g.offset) || len(batch)+len(window) != res.Rank() || !slices.IsSorted(g.offset) {
		return false
	}
	for i, a := range g.batchAxes(res.Rank()) {
		if res.Dims()[a] != batch[i] {
			return false
		}
	}
	for i, a := range g.offset {
		if a < 0 || a >= int64(res.Rank()) || res.Dims()[a] != window[i] {
			return false
		}
	}
	return true
}

// gatherCoord is, for every result element, its operand coordinate along
// dimension d (of size n), as i32 of the result's shape. With valid (a
// scatter's), starts are not clamped: whether each window fits is and-ed
// into *valid instead.
func (bd *builder) gatherCoord(o *op, g gatherDims, idx *ir.Value, d, n int64, out ir.Type, valid **ir.Value) *ir.Value {
	batchAxes := g.batchAxes(out.Rank())
	if j := slices.Index(g.opBatch, d); j >= 0 {
		p := g.idxBatch[j]
		if p > g.ivd {
			p--
		}
		return bd.emit(o, ir.OpIota, &ir.AxisAttr{Axis: batchAxes[p]}, []ir.Type{out})
	}
	var c *ir.Value
	if k := slices.Index(g.startMap, d); k >= 0 {
		c = bd.startIndex(o, g, idx, int64(k), n-g.sizes[d], out, batchAxes, valid)
	}
	if !slices.Contains(g.collapsed, d) {
		w := 0 // d's place among the window dimensions
		for e := int64(0); e < d; e++ {
			if !slices.Contains(g.collapsed, e) && !slices.Contains(g.opBatch, e) {
				w++
			}
		}
		win := bd.emit(o, ir.OpIota, &ir.AxisAttr{Axis: g.offset[w]}, []ir.Type{out})
		if c == nil {
			return win
		}
		return bd.emit(o, ir.OpAdd, nil, nil, c, win)
	}
	if c == nil {
		return bd.splat(o, out, 0)
	}
	return c
}

// startIndex is component k of each index vector, clamped to [0, hi] (so
// the window fits, as StableHLO clamps), as i32 broadcast over the result;
// with valid, not clamped, and whether it lies in [0, hi] and-ed into it.
func (bd *builder) startIndex(o *op, g gatherDims, idx *ir.Value, k, hi int64, out ir.Type, batchAxes []int64, valid **ir.Value) *ir.Value {
	v := idx
	if q := int64(idx.Type.Rank()); g.ivd < q {
		dims := idx.Type.Dims()
		start, limit := make([]int64, q), slices.Clone(dims)
		start[g.ivd], limit[g.ivd] = k, k+1
		v = bd.emit(o, ir.OpSlice, &ir.SliceAttr{Start: start, Limit: limit}, nil, v)
		v = bd.emit(o, ir.OpReshape, nil, []ir.Type{ir.Tensor(idx.Type.DType, slices.Delete(dims, int(g.ivd), int(g.ivd)+1)...)}, v)
	}
	lo, up := bd.splat(o, v.Type, 0), bd.splat(o, v.Type, hi)
	if valid == nil {
		v = bd.emit(o, ir.OpClamp, nil, nil, lo, v, up)
	} else {
		in := bd.emit(o, ir.OpAnd, nil, nil, bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpGE}, nil, v, lo),
			bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLE}, nil, v, up))
		in = bd.emit(o, ir.OpBroadcast, &ir.DimsAttr{Dims: batchAxes}, []ir.Type{out.WithDType(ir.I1)}, in)
		if *valid != nil {
			in = bd.emit(o, ir.OpAnd, nil, nil, *valid, in)
		}
		*valid = in
	}
	v = bd.emit(o, ir.OpConvert, nil, []ir.Type{v.Type.WithDType(ir.I32)}, v)
	return bd.emit(o, ir.OpBroadcast, &ir.DimsAttr{Dims: batchAxes}, []ir.Type{out}, v)
}

// splat is an integer constant of type t, every element v.
func (bd *builder) splat(o *op, t ir.Type, v int64) *ir.Value {
	return bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Ints: []int64{v}}}, []ir.Type{t})
}
