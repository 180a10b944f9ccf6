package progen

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// genCase builds a case in @main on an exact i32[] index taken from the
// program (so random inputs pick the branch, indices outside [0, N)
// included) with 2 or 3 branches. Each branch is a small body of
// elementwise ops over the operands, as a helper function's, and returns a
// value of the first operand's type; the case's result is analysed as any
// branch's could be.
func (g *gen) genCase() bool {
	if g.fn != g.main {
		return false // no case inside a branch or a helper
	}
	k := g.get(want{dts: []ir.DType{ir.I32}, fixed: true, shape: []int64{}, exact: true})
	if k == nil || k.v.Type.Rank() != 0 || k.dt() != ir.I32 {
		return false
	}
	var args []*val
	for n := 1 + g.r.IntN(2); n > 0; n-- {
		x := g.get(want{})
		if x == nil {
			return false
		}
		args = append(args, x)
	}
	types := make([]ir.Type, len(args))
	for i, a := range args {
		types[i] = a.v.Type
	}
	res := args[0].v.Type
	in := g.emit(ir.OpCase, nil, []ir.Type{res}, append([]*val{k}, args...)...)
	if in == nil {
		return false
	}
	var outs []*val
	for n := 2 + g.r.IntN(2); n > 0; n-- {
		outs = append(outs, g.branch(in, args, types, res))
	}
	y := mergeVals(outs)
	y.v = in.Result()
	g.add(y)
	return true
}

// branch fills one new region of in: parameters standing for args, a few
// elementwise ops, and a return of a value of type res (a parameter when
// nothing computed has it).
func (g *gen) branch(in *ir.Instr, args []*val, types []ir.Type, res ir.Type) *val {
	outer := g.fn
	r := outer.f.NewRegion(in, types)
	g.fn = g.newFn(outer.f.RegionFunc(r), true)
	defer func() { g.fn = outer }()
	for i, p := range r.Params {
		x := *args[i]
		x.v = p
		g.add(&x)
	}
	target := 1 + g.r.IntN(3)
	for tries := 0; len(r.Instrs) < target && tries < 50; tries++ {
		g.genOp(g.nextOp())
	}
	var out *val
	for _, x := range g.fn.pool {
		if x.v.Type.Equal(res) && (out == nil || x.v.Def != nil) {
			out = x
		}
	}
	g.fn.b.Return(out.v)
	return out
}

// mergeVals is the analysis of a value that is one of xs: the union of
// their ranges and hazards, the largest drift.
func mergeVals(xs []*val) *val {
	y := *xs[0]
	for _, x := range xs[1:] {
		y.lo, y.hi = math.Min(y.lo, x.lo), math.Max(y.hi, x.hi)
		y.nan = y.nan || x.nan
		y.ea, y.er = math.Max(y.ea, x.ea), math.Max(y.er, x.er)
		y.zs = y.zs || x.zs
		y.prod = y.prod || x.prod
		y.narrowed = y.narrowed || x.narrowed
	}
	return &y
}

// genWhile builds a while in @main whose trip count comes from the data:
// an exact i32[] value of the program clamped into [0, 3] is carried with a
// counter and one value x. The do region applies a few elementwise ops to
// x; their result replaces x only when the analysis of one iteration holds
// for every iteration: exact, and within x's own range and hazards (else do
// carries x unchanged, and the loop still runs its data-dependent count).
func (g *gen) genWhile() bool {
	if g.fn != g.main {
		return false
	}
	k := g.get(want{dts: []ir.DType{ir.I32}, fixed: true, shape: []int64{}, exact: true})
	x := g.get(want{})
	if k == nil || x == nil || k.v.Type.Rank() != 0 || k.dt() != ir.I32 {
		return false
	}
	b := g.fn.b
	i32 := ir.Scalar(ir.I32)
	lim := b.Op1(ir.OpClamp, nil, b.Const(i32, 0), k.v, b.Const(i32, 3))
	in, err := b.Emit(ir.OpWhile, nil, nil, b.Const(i32, 0), lim, x.v)
	if err != nil {
		return false
	}
	carried := []ir.Type{i32, i32, x.v.Type}
	cond := g.fn.f.NewRegion(in, carried)
	cb := ir.NewBuilder(g.fn.f.RegionFunc(cond))
	cb.Return(cb.Op1(ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLT}, cond.Params[0], cond.Params[1]))
	body := g.fn.f.NewRegion(in, carried)
	next := g.loopBody(body, x)
	y := mergeVals([]*val{x, next})
	y.v = in.Results[2]
	for len(g.fn.info) < g.fn.f.NumValues() {
		g.fn.info = append(g.fn.info, nil) // the counter and limit have no analysis
	}
	g.add(y)
	return true
}

// loopBody fills a while's do region (counter, limit, x) and returns the
// analysis of the x it carries on.
func (g *gen) loopBody(r *ir.Block, x *val) *val {
	outer := g.fn
	g.fn = g.newFn(outer.f.RegionFunc(r), true)
	defer func() { g.fn = outer }()
	px := *x
	px.v = r.Params[2]
	g.add(&px)
	target := 1 + g.r.IntN(3)
	for tries := 0; len(r.Instrs) < target && tries < 50; tries++ {
		g.genOp(g.nextOp())
	}
	out := &px
	for _, y := range g.fn.pool {
		if y.v.Def != nil && y.v.Type.Equal(x.v.Type) && staysWithin(y, x) {
			out = y
		}
	}
	b := g.fn.b
	i1 := b.Op1(ir.OpAdd, nil, r.Params[0], b.Const(ir.Scalar(ir.I32), 1))
	b.Return(i1, r.Params[1], out.v)
	return out
}

// staysWithin: y, computed from x in one iteration, may stand for x in the
// next: exact, in x's range, and with no hazard x lacks.
func staysWithin(y, x *val) bool {
	return y.exact() && y.lo >= x.lo && y.hi <= x.hi &&
		(!y.nan || x.nan) && (!y.zs || x.zs) && (!y.prod || x.prod) && (!y.narrowed || x.narrowed)
}
