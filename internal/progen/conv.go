package progen

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// genConv draws a 1-D or 2-D convolution on a rank-3 or rank-4 value, with
// its dimension numbers in any order and every window option (strides,
// padding that may be negative, both dilations, feature or batch groups).
// Each result element sums at most k = input features × window products,
// so its bounds are those of a dot_general contracting k.
func (g *gen) genConv() bool {
	a := g.get(want{pred: func(x *val) bool { return x.dt().IsNumeric() && (x.rank() == 3 || x.rank() == 4) }})
	if a == nil {
		return false
	}
	rank := a.rank()
	s := rank - 2
	perm := func() []int64 {
		p := make([]int64, rank)
		for i, v := range g.r.Perm(rank) {
			p[i] = int64(v)
		}
		return p
	}
	attr := &ir.ConvAttr{LhsDims: perm(), RhsDims: perm(), OutDims: perm(), FeatureGroups: 1, BatchGroups: 1}
	ld := a.shape()
	batch, feat := ld[attr.LhsDims[0]], ld[attr.LhsDims[1]]
	switch {
	case g.r.IntN(4) == 0 && feat%2 == 0 && feat > 0:
		attr.FeatureGroups = 2
	case g.r.IntN(4) == 0 && batch%2 == 0 && batch > 0:
		attr.BatchGroups = 2
	}
	groups := attr.FeatureGroups * attr.BatchGroups
	rd := make([]int64, rank)
	rd[attr.RhsDims[0]] = groups * (1 + int64(g.r.IntN(3)))
	rd[attr.RhsDims[1]] = feat / attr.FeatureGroups
	k := rd[attr.RhsDims[1]]
	for i := 0; i < s; i++ {
		w := 1 + int64(g.r.IntN(3))
		rd[attr.RhsDims[i+2]] = w
		k *= w
		attr.Stride = append(attr.Stride, 1+int64(g.r.IntN(2)))
		attr.PadLow = append(attr.PadLow, int64(g.r.IntN(4))-1)
		attr.PadHigh = append(attr.PadHigh, int64(g.r.IntN(4))-1)
		attr.LhsDilation = append(attr.LhsDilation, 1+int64(g.r.IntN(2)))
		attr.RhsDilation = append(attr.RhsDilation, 1+int64(g.r.IntN(2)))
	}
	if numElements(rd) > g.cfg.MaxElements {
		return false
	}
	rt := ir.Tensor(a.dt(), rd...)
	if res, err := ir.Infer(ir.OpConvolution, []ir.Type{a.v.Type, rt}, attr, nil); err != nil || !g.fits(res[0].Dims()) {
		return false
	}
	b := g.get(want{dts: []ir.DType{a.dt()}}.withShape(rd))
	if b == nil {
		return false
	}
	y := &val{nan: a.nan || b.nan}
	dt := a.dt()
	if !dt.IsFloat() {
		y.lo, y.hi = fullRange(dt)
	} else {
		m := float64(k) * a.mag() * b.mag()
		if math.IsNaN(m) {
			m = math.Inf(1)
		}
		y.lo, y.hi = fitRange(dt, -m, m)
		y.nan = y.nan || math.IsInf(m, 0)
		if k > 0 {
			y.ea = float64(k)*(b.mag()*a.errMax()+a.mag()*b.errMax()) + 2*unit(dt)*m
			y.er = ulpRel(dt)
			if !g.ok(dt, y) {
				return false
			}
		}
	}
	in := g.emit(ir.OpConvolution, attr, nil, a, b)
	if in == nil {
		return false
	}
	y.v = in.Result()
	g.add(y)
	return true
}
