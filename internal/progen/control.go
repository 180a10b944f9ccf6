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
