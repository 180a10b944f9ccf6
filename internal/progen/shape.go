package progen

import (
	"math"
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// Shape ops move elements without computing, so a result's analysis is its
// operand's (or the union of its operands').

// union merges the analyses of values whose elements end up side by side.
func union(xs ...*val) *val {
	y := &val{lo: math.Inf(1), hi: math.Inf(-1)}
	for _, x := range xs {
		y.lo, y.hi = math.Min(y.lo, x.lo), math.Max(y.hi, x.hi)
		y.nan = y.nan || x.nan
		y.ea, y.er = math.Max(y.ea, x.ea), math.Max(y.er, x.er)
		y.zs = y.zs || x.zs
		y.prod = y.prod || x.prod
	}
	return y
}

func (g *gen) genReshape() bool {
	x := g.get(want{})
	if x == nil {
		return false
	}
	s := g.reshapeTarget(x.shape())
	if s == nil {
		return false
	}
	t := ir.Tensor(x.dt(), s...)
	y := *x
	return g.emit1(ir.OpReshape, nil, &t, &y, x) != nil
}

// reshapeTarget draws another shape with as many elements: a regrouping of
// the prime factors, with 1s inserted or dropped.
func (g *gen) reshapeTarget(s []int64) []int64 {
	n := numElements(s)
	for try := 0; try < 10; try++ {
		var out []int64
		if n == 0 {
			out = g.randomShape(4)
			if len(out) == 0 {
				out = []int64{0}
			}
			out[g.r.IntN(len(out))] = 0
		} else {
			var factors []int64
			m := n
			for p := int64(2); p <= m; p++ {
				for m%p == 0 {
					factors = append(factors, p)
					m /= p
				}
			}
			g.r.Shuffle(len(factors), func(i, j int) { factors[i], factors[j] = factors[j], factors[i] })
			rank := 1 + g.r.IntN(4)
			if len(factors) == 0 && g.coin(0.3) {
				rank = 0
			}
			out = make([]int64, rank)
			for i := range out {
				out[i] = 1
			}
			for _, f := range factors {
				if rank == 0 {
					break
				}
				out[g.r.IntN(rank)] *= f
			}
		}
		ok := len(out) <= 4
		for _, d := range out {
			ok = ok && d <= g.cfg.MaxDim
		}
		if ok && numElements(out) == n && !slices.Equal(out, s) {
			return out
		}
	}
	return nil
}

func (g *gen) genBroadcast() bool {
	x := g.get(want{})
	if x == nil {
		return false
	}
	src := x.shape()
	// Keep x's dimensions in order (or, sometimes, permuted) among 0-2 new
	// ones, and grow some of its size-1 dimensions.
	rank := len(src) + g.r.IntN(3)
	if rank > 4 {
		rank = 4
	}
	if rank < len(src) {
		return false
	}
	pos := g.r.Perm(rank)[:len(src)]
	if !g.coin(0.2) {
		slices.Sort(pos)
	}
	out := make([]int64, rank)
	used := make([]bool, rank)
	dims := make([]int64, len(src))
	for i, p := range pos {
		dims[i] = int64(p)
		used[p] = true
		out[p] = src[i]
		if src[i] == 1 && g.coin(0.5) {
			out[p] = g.randomDim()
		}
	}
	for i := range out {
		if !used[i] {
			out[i] = g.randomDim()
		}
	}
	if numElements(out) > g.cfg.MaxElements {
		return false
	}
	t := ir.Tensor(x.dt(), out...)
	y := *x
	return g.emit1(ir.OpBroadcast, &ir.DimsAttr{Dims: dims}, &t, &y, x) != nil
}

func (g *gen) genTranspose() bool {
	x := g.get(want{minRank: 1})
	if x == nil {
		return false
	}
	perm := make([]int64, x.rank())
	for i, p := range g.r.Perm(x.rank()) {
		perm[i] = int64(p)
	}
	y := *x
	return g.emit1(ir.OpTranspose, &ir.PermAttr{Perm: perm}, nil, &y, x) != nil
}

// genCopy copies a value into the column-major layout: the same values, so
// the executor and the lowering (which ignore layouts) must pass them through.
func (g *gen) genCopy() bool {
	x := g.get(want{minRank: 2})
	if x == nil {
		return false
	}
	t := ir.Tensor(x.dt(), x.shape()...)
	m2m := make([]int, t.Rank())
	for i := range m2m {
		m2m[i] = i
	}
	t.Layout = &ir.Layout{MinorToMajor: m2m}
	y := *x
	return g.emit1(ir.OpCopy, nil, &t, &y, x) != nil
}

func (g *gen) genSlice() bool {
	x := g.get(want{})
	if x == nil {
		return false
	}
	s := x.shape()
	a := &ir.SliceAttr{Start: make([]int64, len(s)), Limit: make([]int64, len(s)), Stride: make([]int64, len(s))}
	for i, n := range s {
		a.Start[i] = g.r.Int64N(n/2 + 1)
		a.Limit[i] = a.Start[i] + g.r.Int64N(n-a.Start[i]+1)
		if a.Limit[i] == a.Start[i] && n > 0 && !g.coin(0.1) {
			a.Limit[i] = n // an empty slice only now and then
		}
		a.Stride[i] = 1
		if g.coin(0.25) {
			a.Stride[i] = 1 + g.r.Int64N(3)
		}
	}
	y := *x
	return g.emit1(ir.OpSlice, a, nil, &y, x) != nil
}

func (g *gen) genConcat() bool {
	x := g.get(want{minRank: 1})
	if x == nil {
		return false
	}
	axis := g.r.IntN(x.rank())
	args := []*val{x}
	total := x.shape()[axis]
	for k := g.r.IntN(3); k > 0; k-- {
		s := x.shape()
		s[axis] = int64(g.r.IntN(4))
		if total+s[axis] > g.cfg.MaxDim || numElements(s) > g.cfg.MaxElements {
			break
		}
		w := want{dts: []ir.DType{x.dt()}}.withShape(s)
		z := g.get(w)
		if z == nil {
			return false
		}
		total += s[axis]
		args = append(args, z)
	}
	s := x.shape()
	s[axis] = total
	if numElements(s) > g.cfg.MaxElements {
		return false
	}
	return g.emit1(ir.OpConcat, &ir.AxisAttr{Axis: int64(axis)}, nil, union(args...), args...) != nil
}

func (g *gen) genPad() bool {
	x := g.get(want{})
	if x == nil {
		return false
	}
	s := x.shape()
	a := &ir.PadAttr{Low: make([]int64, len(s)), High: make([]int64, len(s)), Interior: make([]int64, len(s))}
	out := make([]int64, len(s))
	for i, n := range s {
		a.Low[i] = int64(g.r.IntN(4)) - 1
		a.High[i] = int64(g.r.IntN(4)) - 1
		if g.coin(0.25) {
			a.Interior[i] = int64(1 + g.r.IntN(2))
		}
		out[i] = a.Low[i] + a.High[i] + n + max(n-1, 0)*a.Interior[i]
		for out[i] > g.cfg.MaxDim && a.Interior[i] > 0 {
			a.Interior[i]--
			out[i] -= max(n-1, 0)
		}
		for out[i] > g.cfg.MaxDim {
			a.High[i]--
			out[i]--
		}
		for out[i] < 0 {
			a.Low[i]++
			out[i]++
		}
	}
	if numElements(out) > g.cfg.MaxElements {
		return false
	}
	v := g.get(want{dts: []ir.DType{x.dt()}}.withShape([]int64{}))
	if v == nil {
		return false
	}
	return g.emit1(ir.OpPad, a, nil, union(x, v), x, v) != nil
}

func (g *gen) genIota() bool {
	s := g.shapeLike()
	if len(s) == 0 {
		s = []int64{1 + g.r.Int64N(g.cfg.MaxDim)}
	}
	dt := g.numericDType()
	axis := g.r.IntN(len(s))
	t := ir.Tensor(dt, s...)
	y := &val{lo: 0, hi: float64(max(s[axis]-1, 0))}
	y.lo, y.hi = fitRange(dt, y.lo, y.hi)
	return g.emit1(ir.OpIota, &ir.AxisAttr{Axis: int64(axis)}, &t, y) != nil
}

// genShardingConstraint pins a value over a one-device mesh, which the
// module then declares, so the programs still run on one device.
func (g *gen) genShardingConstraint() bool {
	x := g.get(want{})
	if x == nil {
		return false
	}
	if g.m.Mesh("progen") == nil {
		g.m.Meshes = append(g.m.Meshes, &ir.Mesh{Name: "progen", Axes: []ir.MeshAxis{{Name: "x", Size: 1}}})
	}
	s := ir.Replicated("progen", len(x.shape()))
	if len(s.Dims) > 0 {
		s.Dims[g.r.IntN(len(s.Dims))] = []string{"x"}
	}
	y := *x
	return g.emit1(ir.OpShardingConstraint, &ir.ShardingAttr{Sharding: s}, nil, &y, x) != nil
}
