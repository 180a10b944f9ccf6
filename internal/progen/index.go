package progen

import (
	"fmt"
	"math"

	"github.com/tpucc/tpucc/ir"
)

// Indexing ops. Index operands are integers, hence exact; constants for them
// are drawn around the valid range so that clamping and dropping are tested.

// indexShape draws the shape of an index tensor: a scalar or rank 1-2, small.
func (g *gen) indexShape() []int64 {
	switch g.r.IntN(4) {
	case 0:
		return []int64{}
	case 3:
		return []int64{1 + g.r.Int64N(3), 1 + g.r.Int64N(3)}
	}
	return []int64{g.randomDim()}
}

func (g *gen) indices(s []int64) *val {
	return g.get(want{dts: intDTypes}.withShape(s))
}

// scalarIndex draws a start index of dtype dt for a dimension of size n.
func (g *gen) scalarIndex(dt ir.DType, n int64) *val {
	w := want{dts: []ir.DType{dt}}.withShape([]int64{})
	if g.coin(0.5) {
		if x := g.choose(g.matching(w)); x != nil {
			return x
		}
	}
	v := g.r.Int64N(n+4) - 2 // mostly in range, sometimes beyond either end
	if g.coin(0.05) {
		lo, _ := dt.IntRange()
		v = lo
	}
	t := ir.Tensor(dt)
	lit := ir.NewIntLiteral(t, []int64{v})
	y := &val{lo: float64(lit.Ints[0]), hi: float64(lit.Ints[0])}
	return g.emit1(ir.OpConstant, &ir.ConstAttr{Value: lit}, &t, y)
}

func (g *gen) genTake() bool {
	x := g.get(want{minRank: 1})
	if x == nil {
		return false
	}
	axis := g.r.IntN(x.rank())
	is := g.indexShape()
	if x.rank()-1+len(is) > 4 {
		is = []int64{}
	}
	if x.shape()[axis] == 0 && numElements(is) > 0 {
		return false // nothing to clamp into
	}
	out := append(append(append([]int64{}, x.shape()[:axis]...), is...), x.shape()[axis+1:]...)
	if numElements(out) > g.cfg.MaxElements {
		return false
	}
	idx := g.indices(is)
	if idx == nil {
		return false
	}
	y := *x
	return g.emit1(ir.OpTake, &ir.AxisAttr{Axis: int64(axis)}, nil, &y, x, idx) != nil
}

func (g *gen) genScatterAdd() bool {
	x := g.get(want{pred: isNumeric, minRank: 1})
	if x == nil {
		return false
	}
	dt := x.dt()
	axis := g.r.IntN(x.rank())
	is := g.indexShape()
	if x.rank()-1+len(is) > 4 {
		is = []int64{}
	}
	us := append(append(append([]int64{}, x.shape()[:axis]...), is...), x.shape()[axis+1:]...)
	if numElements(us) > g.cfg.MaxElements {
		return false
	}
	idx := g.indices(is)
	if idx == nil {
		return false
	}
	u := g.get(want{dts: []ir.DType{dt}}.withShape(us))
	if u == nil {
		return false
	}
	m := float64(numElements(is)) // at most this many updates land on one element
	y := &val{nan: x.nan || u.nan}
	y.lo, y.hi = fitRange(dt, x.lo+m*math.Min(u.lo, 0), x.hi+m*math.Max(u.hi, 0))
	if dt.IsFloat() {
		y.zs = x.zs || u.zs || (x.has0() && u.has0())
		switch {
		case m == 0:
			*y = *x
		case m == 1 && x.exact() && u.exact() && !x.prod && !u.prod:
			// One update per element: x + u, rounded once on both sides;
			// but XLA moves an add of the result across the scatter,
			// (x+u)+c as (x+c)+u (seed 219 once convolution and the
			// window ops moved the streams), so the sum is one rounding
			// from exact.
			y.ea, y.er = ulp(dt, x.mag()+u.mag()), ulpRel(dt)
		default:
			mx, mu := x.mag(), u.mag()
			y.ea = x.errMax() + m*u.errMax() + 2*unit(dt)*(mx+m*mu) + ulp(dt, mx+m*mu)
			y.er = ulpRel(dt)
		}
		if !g.ok(dt, y) {
			return false
		}
	}
	return g.emit1(ir.OpScatterAdd, &ir.AxisAttr{Axis: int64(axis)}, nil, y, x, idx, u) != nil
}

func (g *gen) genDynamicSlice() bool {
	x := g.get(want{})
	if x == nil {
		return false
	}
	s := x.shape()
	sizes := make([]int64, len(s))
	for i, n := range s {
		sizes[i] = g.r.Int64N(n + 1)
		if sizes[i] == 0 && n > 0 && !g.coin(0.1) {
			sizes[i] = n
		}
	}
	dt := pick(g, intDTypes)
	args := []*val{x}
	for _, n := range s {
		i := g.scalarIndex(dt, n)
		if i == nil {
			return false
		}
		args = append(args, i)
	}
	y := *x
	return g.emit1(ir.OpDynamicSlice, &ir.SizesAttr{Sizes: sizes}, nil, &y, args...) != nil
}

func (g *gen) genDynamicUpdateSlice() bool {
	x := g.get(want{})
	if x == nil {
		return false
	}
	s := x.shape()
	us := make([]int64, len(s))
	for i, n := range s {
		us[i] = g.r.Int64N(n + 1)
	}
	u := g.get(want{dts: []ir.DType{x.dt()}}.withShape(us))
	if u == nil {
		return false
	}
	dt := pick(g, intDTypes)
	args := []*val{x, u}
	for _, n := range s {
		i := g.scalarIndex(dt, n)
		if i == nil {
			return false
		}
		args = append(args, i)
	}
	return g.emit1(ir.OpDynamicUpdateSlice, nil, nil, union(x, u), args...) != nil
}

func (g *gen) genOneHot() bool {
	is := g.shapeLike()
	if len(is) > 3 {
		is = is[1:]
	}
	depth := g.r.Int64N(g.cfg.MaxDim + 1)
	out := append(append([]int64{}, is...), depth)
	if numElements(out) > g.cfg.MaxElements {
		return false
	}
	idx := g.indices(is)
	if idx == nil {
		return false
	}
	t := ir.Tensor(g.anyDType(), out...)
	y := &val{lo: 0, hi: 1}
	return g.emit1(ir.OpOneHot, &ir.DepthAttr{Depth: depth}, &t, y, idx) != nil
}

// sortable: the total order of sorts tells -0 from +0 and one NaN from
// another, so their operands are exact, NaN-free and of definite zero sign.
var sortable = want{pred: isNumeric, exact: true, noNaN: true, noZS: true, minRank: 1}

func (g *gen) genTopK() bool {
	x := g.get(sortable)
	if x == nil {
		return false
	}
	last := x.shape()[x.rank()-1]
	k := g.r.Int64N(last + 1)
	in := g.emit(ir.OpTopK, &ir.TopKAttr{K: k}, nil, x)
	if in == nil {
		return false
	}
	vals := *x
	vals.prod = false
	vals.v = in.Results[0]
	g.add(&vals)
	g.add(&val{v: in.Results[1], lo: 0, hi: float64(max(last-1, 0))})
	return true
}

func (g *gen) genArgsort() bool {
	x := g.get(sortable)
	if x == nil {
		return false
	}
	axis := g.r.IntN(x.rank())
	y := &val{lo: 0, hi: float64(max(x.shape()[axis]-1, 0))}
	return g.emit1(ir.OpArgsort, &ir.AxisAttr{Axis: int64(axis)}, nil, y, x) != nil
}

// genCall builds the helper @f1 from 1-2 values of @main, with a few
// elementwise ops of its own, and calls it. Its parameters inherit the
// arguments' analyses, so its results' analyses hold at the call.
func (g *gen) genCall() bool {
	if g.helper || g.fn != g.main {
		return false
	}
	var args []*val
	for k := 1 + g.r.IntN(2); k > 0; k-- {
		x := g.get(want{})
		if x == nil {
			return false
		}
		args = append(args, x)
	}
	names := make([]string, len(args))
	types := make([]ir.Type, len(args))
	for i, a := range args {
		names[i] = fmt.Sprintf("a%d", i)
		types[i] = a.v.Type
	}
	f := g.m.NewFunc("f1", names, types, nil, ir.Pos{})
	g.helper = true
	g.fn = g.newFn(f, true)
	for i, p := range f.Params {
		x := *args[i]
		x.v = p
		g.add(&x)
	}
	target := 1 + g.r.IntN(4)
	for tries := 0; len(f.Body.Instrs) < target && tries < 100; tries++ {
		g.genOp(g.nextOp())
	}
	outs := g.pickOutputs(g.fn)
	if outs == nil {
		outs = []*val{g.fn.pool[0]}
	}
	rets := make([]*ir.Value, len(outs))
	for i, o := range outs {
		rets[i] = o.v
		f.Results = append(f.Results, o.v.Type)
	}
	g.fn.b.Return(rets...)
	g.fn = g.main
	in := g.emit(ir.OpCall, &ir.CallAttr{Callee: f.Name}, f.Results, args...)
	if in == nil {
		panic("progen: the call of a just-built helper was refused")
	}
	for i, r := range in.Results {
		y := *outs[i]
		y.v = r
		g.add(&y)
	}
	return true
}
