package progen

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// Contractions, reductions and composites: approximate on floats (the sides
// sum in different orders and precisions), exact on integers.

// accumulated is the drift of a sum of n terms of magnitude at most m whose
// own drifts are x's: the terms' drifts add up, and so does the rounding of
// the partial sums (in f32 for f16, bf16 and f32; in f64 for f64).
func accumulated(x *val, dt ir.DType, n, m float64) (ea, er float64) {
	oneSigned := x.lo >= 0 || x.hi <= 0
	if oneSigned {
		// No cancellation: relative drifts stay relative.
		return n * x.ea, x.er + 2*n*unit(dt) + ulpRel(dt)
	}
	ea = n*x.errMax() + 2*unit(dt)*n*m
	if x.prod {
		ea += n * ulp(dt, m) / 2 // an FMA into the accumulator
	}
	return ea, ulpRel(dt)
}

func (g *gen) genDot() bool {
	a := g.get(want{pred: func(x *val) bool { return x.dt().IsNumeric() && x.rank() >= 1 && x.rank() <= 3 }})
	if a == nil {
		return false
	}
	attr := &ir.DotAttr{LhsBatch: []int64{}, RhsBatch: []int64{}, LhsContract: []int64{}, RhsContract: []int64{}}
	batch, contract, free := g.dotLhsRoles(a.shape(), attr)
	rs, rfree := g.dotRhsShape(batch, contract, attr)
	out := append(append(append([]int64{}, batch...), free...), rfree...)
	if len(out) > 4 || numElements(out) > g.cfg.MaxElements || len(rs) > 4 {
		return false
	}
	b := g.get(want{dts: []ir.DType{a.dt()}}.withShape(rs))
	if b == nil {
		return false
	}
	dt := a.dt()
	outDT := g.dotOutDType(dt)
	k := float64(numElements(contract))
	y := &val{nan: a.nan || b.nan}
	if !dt.IsFloat() {
		y.lo, y.hi = fullRange(outDT)
	} else {
		s := k * a.mag() * b.mag()
		if math.IsNaN(s) {
			s = math.Inf(1)
		}
		y.lo, y.hi = fitRange(outDT, -s, s)
		y.nan = y.nan || math.IsInf(s, 0)
		if k > 0 {
			// Each product's drift, then the partial sums' rounding.
			y.ea = k*(b.mag()*a.errMax()+a.mag()*b.errMax()) + 2*unit(dt)*s
			y.er = ulpRel(outDT)
			if !g.ok(outDT, y) {
				return false
			}
		}
	}
	var hint []ir.Type
	if outDT != dt {
		hint = []ir.Type{ir.Tensor(outDT, out...)}
	}
	in := g.emit(ir.OpDotGeneral, attr, hint, a, b)
	if in == nil {
		return false
	}
	y.v = in.Result()
	g.add(y)
	return true
}

// dotLhsRoles gives each lhs dimension (sizes as) a role: batch (at most
// one), contracting or free; it records the first two in attr and returns
// the sizes of each role.
func (g *gen) dotLhsRoles(as []int64, attr *ir.DotAttr) (batch, contract, free []int64) {
	for i, d := range as {
		switch k := g.r.IntN(10); {
		case k < 2 && len(batch) < 1:
			attr.LhsBatch = append(attr.LhsBatch, int64(i))
			batch = append(batch, d)
		case k < 7:
			attr.LhsContract = append(attr.LhsContract, int64(i))
			contract = append(contract, d)
		default:
			free = append(free, d)
		}
	}
	return batch, contract, free
}

// dotRhsShape is the rhs's shape: the batch and contracting dimensions
// plus 0-2 free ones, in a random order (recorded in attr); rfree are the
// free ones' sizes.
func (g *gen) dotRhsShape(batch, contract []int64, attr *ir.DotAttr) (rs, rfree []int64) {
	roles := []int{}
	for range batch {
		roles = append(roles, 0)
	}
	for range contract {
		roles = append(roles, 1)
	}
	nfree := g.r.IntN(3)
	for k := 0; k < nfree; k++ {
		roles = append(roles, 2)
	}
	g.r.Shuffle(len(roles), func(i, j int) { roles[i], roles[j] = roles[j], roles[i] })
	bi, ci := 0, 0
	for _, role := range roles {
		switch role {
		case 0:
			rs = append(rs, batch[bi])
			bi++
		case 1:
			rs = append(rs, contract[ci])
			ci++
		default:
			d := g.randomDim()
			rs = append(rs, d)
			rfree = append(rfree, d)
		}
	}
	attr.RhsBatch = positions(roles, 0)
	attr.RhsContract = positions(roles, 1)
	return rs, rfree
}

// dotOutDType is the product's dtype: a quarter of the time wider than
// its operands' where a wider one exists.
func (g *gen) dotOutDType(dt ir.DType) ir.DType {
	if !g.coin(0.25) {
		return dt
	}
	switch dt {
	case ir.BF16, ir.F16:
		return ir.F32
	case ir.F32:
		return ir.F64
	case ir.I8, ir.I16:
		return ir.I32
	case ir.U8:
		return ir.U32
	}
	return dt
}

// positions lists the rhs dimensions that have role, in order: the i-th
// pairs with the i-th lhs dimension of that role, whose size it was given.
func positions(roles []int, role int) []int64 {
	out := []int64{}
	for i, r := range roles {
		if r == role {
			out = append(out, int64(i))
		}
	}
	return out
}

// reduceAxes draws the axes a reduction folds (sometimes none).
func (g *gen) reduceAxes(rank int) []int64 {
	axes := []int64{}
	for i := 0; i < rank; i++ {
		if g.coin(0.5) {
			axes = append(axes, int64(i))
		}
	}
	if len(axes) == 0 && rank > 0 && g.coin(0.8) {
		axes = append(axes, int64(g.r.IntN(rank)))
	}
	return axes
}

func (g *gen) genReduce(op ir.Op) bool {
	x := g.get(want{pred: isNumeric})
	if x == nil {
		return false
	}
	dt := x.dt()
	axes := g.reduceAxes(x.rank())
	nn := int64(1)
	for _, a := range axes {
		nn *= x.shape()[a]
	}
	n := float64(nn)
	y := &val{nan: x.nan}
	switch {
	case !dt.IsFloat():
		y.lo, y.hi = x.lo, x.hi
		switch op {
		case ir.OpReduceSum:
			y.lo, y.hi = fitRange(dt, math.Min(0, n*x.lo), math.Max(0, n*x.hi))
		case ir.OpReduceProd:
			y.lo, y.hi = fullRange(dt)
		}
		if nn == 0 {
			y.lo, y.hi = fullRange(dt) // the identity: 0, 1, or the dtype's extreme
		}
	case nn == 0:
		// Only the identity: exactly 0, 1, -inf or +inf.
		y.lo, y.hi, y.nan = math.Inf(-1), math.Inf(1), false
	case op == ir.OpReduceMax || op == ir.OpReduceMin:
		*y = *x
		y.prod = false
		y.zs = x.zs || x.has0() // max(-0, +0)
	case nn == 1:
		// One element: x itself, or x+0 / x*1.
		*y = *x
		y.prod = false
		y.zs = x.zs || x.has0()
	case op == ir.OpReduceSum:
		y.lo, y.hi = fitRange(dt, n*x.lo, n*x.hi)
		y.zs = x.zs || x.has0()
		y.ea, y.er = accumulated(x, dt, n, x.mag())
	case op == ir.OpReduceProd:
		if nn > 8 {
			return false
		}
		m := math.Pow(x.mag(), n)
		lo := -m
		if x.lo >= 0 {
			lo = math.Pow(x.lo, n)
		}
		y.lo, y.hi = fitRange(dt, lo, m)
		y.zs = x.zs || x.has0()
		y.ea = n * x.errMax() * math.Pow(x.mag(), n-1)
		y.er = 2*n*unit(dt) + ulpRel(dt)
		if x.er > 0 && x.minAbs() > 0 {
			y.ea, y.er = 0, n*(x.er+x.ea/x.minAbs())+y.er
		}
	}
	if !g.ok(dt, y) {
		return false
	}
	return g.emit1(op, &ir.AxesAttr{Axes: axes, KeepDims: g.coin(0.3)}, nil, y, x) != nil
}

func (g *gen) genArg(op ir.Op) bool {
	x := g.get(want{pred: func(x *val) bool { return isNumeric(x) && nonEmptyDim(x) >= 0 }, exact: true})
	if x == nil {
		return false
	}
	axis := nonEmptyDim(x)
	for _, i := range g.r.Perm(x.rank()) {
		if x.shape()[i] > 0 {
			axis = i
		}
	}
	y := &val{lo: 0, hi: float64(x.shape()[axis] - 1)}
	return g.emit1(op, &ir.AxisAttr{Axis: int64(axis)}, nil, y, x) != nil
}

// nonEmptyDim returns a dimension of x of nonzero size, or -1.
func nonEmptyDim(x *val) int {
	for i, d := range x.shape() {
		if d > 0 {
			return i
		}
	}
	return -1
}

func (g *gen) genCumsum() bool {
	x := g.get(want{pred: isNumeric, minRank: 1})
	if x == nil {
		return false
	}
	dt := x.dt()
	axis := g.r.IntN(x.rank())
	n := float64(x.shape()[axis])
	y := &val{nan: x.nan}
	switch {
	case !dt.IsFloat():
		y.lo, y.hi = fitRange(dt, math.Min(0, n*x.lo), math.Max(0, n*x.hi))
	case n <= 1:
		*y = *x
		y.prod = false
		y.zs = x.zs || x.has0()
	default:
		y.lo, y.hi = fitRange(dt, math.Min(x.lo, n*x.lo), math.Max(x.hi, n*x.hi))
		y.zs = x.zs || x.has0()
		y.ea, y.er = accumulated(x, dt, n, x.mag())
	}
	if !g.ok(dt, y) {
		return false
	}
	return g.emit1(ir.OpCumsum, &ir.AxisAttr{Axis: int64(axis)}, nil, y, x) != nil
}

// Composites.

func (g *gen) genRelu() bool {
	x := g.get(want{pred: isNumeric})
	if x == nil {
		return false
	}
	y := *x
	y.prod = false
	y.lo, y.hi = math.Max(x.lo, 0), math.Max(x.hi, 0)
	if x.dt().IsFloat() {
		y.zs = x.zs || x.has0()
	}
	return g.emit1(ir.OpRelu, nil, nil, &y, x) != nil
}

func (g *gen) genGeluSilu(op ir.Op) bool {
	x := g.get(want{dts: floatDTypes, finite: true, maxMag: 64})
	if x == nil {
		return false
	}
	dt := x.dt()
	y := &val{nan: x.nan, zs: x.zs}
	minimum := -0.17 // gelu's minimum, near x = -0.75
	if op == ir.OpSilu {
		minimum = -0.28
	}
	lo := minimum
	if x.lo >= 0 {
		lo = 0
	}
	y.lo, y.hi = fitRange(dt, lo, math.Max(x.hi, 0))
	// |f'| <= 1.13 for both; for very negative x, 1+erf(x) cancels, an
	// absolute error of a few units at |x|.
	y.ea = 1.2*x.errMax() + 4*unit(dt)*x.mag()
	y.er = rounding(dt, 8)
	if !g.ok(dt, y) {
		return false
	}
	var attr ir.Attr
	if op == ir.OpGelu {
		attr = &ir.GeluAttr{Approximate: g.coin(0.5)}
	}
	return g.emit1(op, attr, nil, y, x) != nil
}

func (g *gen) genSoftmax(op ir.Op) bool {
	x := g.get(want{dts: floatDTypes, finite: true, maxMag: 40, minRank: 1})
	if x == nil {
		return false
	}
	dt := x.dt()
	axis := g.r.IntN(x.rank())
	n := float64(x.shape()[axis])
	y := &val{}
	d := 2 * x.errMax() // x - max drifts by at most twice x's drift
	if op == ir.OpSoftmax {
		y.lo, y.hi = 0, 1
		y.er = 1.01*d + 2*n*unit(dt) + rounding(dt, 8)
	} else {
		y.lo, y.hi = fitRange(dt, x.lo-x.hi-math.Log(math.Max(n, 1)), 0)
		y.ea = d + 4*unit(dt)*(2*x.mag()+math.Log(math.Max(n, 1))) + 2*n*unit(dt)
		y.er = ulpRel(dt)
	}
	if !g.ok(dt, y) {
		return false
	}
	return g.emit1(op, &ir.AxisAttr{Axis: int64(axis)}, nil, y, x) != nil
}

var epsChoices = []float64{1e-5, 1e-3, 0.1, 1}

func (g *gen) genNorm(op ir.Op) bool {
	x := g.get(want{dts: floatDTypes, finite: true, maxMag: 64, minRank: 1})
	if x == nil {
		return false
	}
	dt := x.dt()
	n := x.shape()[x.rank()-1]
	pw := want{dts: []ir.DType{dt}, finite: true, maxMag: 16}.withShape([]int64{n})
	scale := g.get(pw)
	if scale == nil {
		return false
	}
	args := []*val{x, scale}
	var bias *val
	if op == ir.OpLayerNorm {
		if bias = g.get(pw); bias == nil {
			return false
		}
		args = append(args, bias)
	}
	eps := pick(g, epsChoices)
	s := math.Sqrt(eps)
	// z = the normalized x: |z| <= sqrt(n) (and <= 2|x|/sqrt(eps)); its
	// drift: x's drift over sqrt(eps) at worst, and f32's error in x - mean
	// over sqrt(eps) for nearly constant rows.
	mz := math.Min(math.Sqrt(float64(n)), 2*x.mag()/s)
	var zea, zer float64
	if op == ir.OpLayerNorm {
		zea = (2*x.errMax() + 2*unit(dt)*x.mag()) / s
		zer = 4 * float64(n) * unit(dt)
	} else {
		// rms_norm has no subtraction: x's relative drift stays relative.
		zea = 2 * x.ea / s
		zer = x.er + 4*float64(n)*unit(dt)
	}
	ms := scale.mag()
	y := &val{}
	y.ea = ms*zea + mz*scale.errMax() + 2*unit(dt)*mz*ms
	y.er = zer + scale.er + rounding(dt, 4)
	m := mz * ms
	if bias != nil {
		y.ea += bias.errMax() + 2*unit(dt)*bias.mag()
		y.er = rounding(dt, 4)
		y.ea += (zer + scale.er) * m // relative drift does not survive adding the bias
		m += bias.mag()
	}
	y.lo, y.hi = fitRange(dt, -m, m)
	if !g.ok(dt, y) {
		return false
	}
	return g.emit1(op, &ir.EpsAttr{Eps: eps}, nil, y, args...) != nil
}
