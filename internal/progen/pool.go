package progen

import (
	"math"
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// Shapes. Most shapes of an attempt derive from its base shape, so that
// operands often agree and broadcasts have something to broadcast to.

var dimSizes = []int64{1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8}

func (g *gen) randomDim() int64 {
	if g.coin(0.015) {
		return 0
	}
	d := pick(g, dimSizes)
	return min(d, g.cfg.MaxDim)
}

// randomShape draws a shape of rank at most maxRank within the element limit.
func (g *gen) randomShape(maxRank int) []int64 {
	rank := []int{0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4}[g.r.IntN(11)]
	rank = min(rank, maxRank)
	s := make([]int64, rank)
	for i := range s {
		s[i] = g.randomDim()
	}
	for numElements(s) > g.cfg.MaxElements {
		s[g.r.IntN(len(s))] = 1
	}
	return s
}

// shapeLike draws a shape related to the base: the base itself, the base
// with some dimensions 1 (broadcastable to it), a suffix of it, a scalar, or
// something unrelated.
func (g *gen) shapeLike() []int64 {
	b := slices.Clone(g.base)
	switch k := g.r.IntN(20); {
	case k < 9:
		return b
	case k < 12:
		for i := range b {
			if g.coin(0.5) {
				b[i] = 1
			}
		}
		return b
	case k < 15:
		return b[g.r.IntN(len(b)+1):]
	case k < 17:
		return []int64{}
	default:
		return g.randomShape(4)
	}
}

func numElements(s []int64) int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}

// want describes an operand an op needs.
type want struct {
	dts     []ir.DType // allowed dtypes; nil means any
	shape   []int64    // the exact shape when fixed
	fixed   bool
	minRank int
	exact   bool
	finite  bool // no NaN, no infinity
	noZS    bool // no zero of ambiguous sign
	noNaN   bool
	maxMag  float64         // |x| <= maxMag when > 0
	pred    func(*val) bool // any further condition
}

func (w want) match(x *val) bool {
	switch {
	case w.dts != nil && !slices.Contains(w.dts, x.dt()):
		return false
	case w.fixed && !slices.Equal(w.shape, x.shape()):
		return false
	case x.rank() < w.minRank:
		return false
	case w.exact && !x.exact():
		return false
	case w.finite && !x.finite():
		return false
	case w.noNaN && x.nan:
		return false
	case w.noZS && x.zs:
		return false
	case w.maxMag > 0 && !(x.mag() <= w.maxMag):
		return false
	case w.pred != nil && !w.pred(x):
		return false
	}
	return true
}

func (w want) withShape(s []int64) want {
	w.shape, w.fixed = slices.Clone(s), true
	return w
}

func (w want) withDType(dt ir.DType) want {
	w.dts = []ir.DType{dt}
	return w
}

// matching lists the pool's values that satisfy w.
func (g *gen) matching(w want) []*val {
	var out []*val
	for _, x := range g.fn.pool {
		if w.match(x) {
			out = append(out, x)
		}
	}
	return out
}

// choose picks one of xs, favouring recent values so that programs chain.
func (g *gen) choose(xs []*val) *val {
	if len(xs) == 0 {
		return nil
	}
	if g.coin(0.5) {
		return xs[len(xs)-1-g.r.IntN(min(3, len(xs)))]
	}
	return pick(g, xs)
}

// get returns a value satisfying w: one from the pool, one derived from the
// pool by broadcast, convert or reshape, or a new constant. It returns nil
// only when w cannot be met at all.
func (g *gen) get(w want) *val {
	cands := g.matching(w)
	if len(cands) > 0 && g.coin(0.75) {
		return g.choose(cands)
	}
	if g.coin(0.85) {
		if x := g.derive(w); x != nil {
			return x
		}
	}
	if len(cands) > 0 && g.coin(0.7) {
		return g.choose(cands)
	}
	return g.constant(w)
}

// derive makes a value for w out of one in the pool: a broadcast of a
// smaller value of the dtype, a convert of a value of the shape, or a
// reshape of one with as many elements.
func (g *gen) derive(w want) *val {
	if !w.fixed {
		w = w.withShape(g.shapeLike())
		if len(w.shape) < w.minRank {
			return nil
		}
	}
	kinds := []int{0, 1, 2}
	g.r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	for _, k := range kinds {
		var x *val
		switch k {
		case 0:
			x = g.deriveBroadcast(w)
		case 1:
			x = g.deriveConvert(w)
		case 2:
			x = g.deriveReshape(w)
		}
		if x != nil {
			return x
		}
	}
	return nil
}

// broadcastDims maps src's dimensions onto dst right-aligned, numpy style;
// ok is false if a dimension is neither 1 nor equal.
func broadcastDims(src, dst []int64) ([]int64, bool) {
	if len(src) > len(dst) {
		return nil, false
	}
	off := len(dst) - len(src)
	dims := make([]int64, len(src))
	for i, d := range src {
		if d != 1 && d != dst[off+i] {
			return nil, false
		}
		dims[i] = int64(off + i)
	}
	return dims, true
}

func (g *gen) deriveBroadcast(w want) *val {
	base := w
	base.fixed, base.shape = false, nil
	base.minRank = 0
	var cands []*val
	for _, x := range g.matching(base) {
		if _, ok := broadcastDims(x.shape(), w.shape); ok && !slices.Equal(x.shape(), w.shape) &&
			w.match(retyped(x, ir.Tensor(x.dt(), w.shape...))) {
			cands = append(cands, x)
		}
	}
	x := g.choose(cands)
	if x == nil {
		return nil
	}
	return g.broadcastTo(x, w.shape)
}

// retyped is x's analysis for a value of type t, to test a want against
// before the value exists.
func retyped(x *val, t ir.Type) *val {
	y := *x
	y.v = &ir.Value{Type: t}
	return &y
}

// broadcastTo emits a right-aligned broadcast of x to shape s.
func (g *gen) broadcastTo(x *val, s []int64) *val {
	dims, ok := broadcastDims(x.shape(), s)
	if !ok {
		return nil
	}
	t := ir.Tensor(x.dt(), s...)
	y := *x
	return g.emit1(ir.OpBroadcast, &ir.DimsAttr{Dims: dims}, &t, &y, x)
}

func (g *gen) deriveConvert(w want) *val {
	dts := w.dts
	if dts == nil {
		dts = g.cfg.DTypes
	}
	type option struct {
		x  *val
		dt ir.DType
		y  *val
	}
	var opts []option
	for _, x := range g.fn.pool {
		if !slices.Equal(x.shape(), w.shape) {
			continue
		}
		for _, dt := range dts {
			if dt == x.dt() {
				continue
			}
			y := convertInfo(x, dt)
			if y == nil || !g.ok(dt, y) {
				continue
			}
			if w.match(retyped(y, ir.Tensor(dt, w.shape...))) {
				opts = append(opts, option{x, dt, y})
			}
		}
	}
	if len(opts) == 0 {
		return nil
	}
	o := pick(g, opts)
	t := ir.Tensor(o.dt, w.shape...)
	return g.emit1(ir.OpConvert, nil, &t, o.y, o.x)
}

func (g *gen) deriveReshape(w want) *val {
	base := w
	base.fixed, base.shape, base.minRank = false, nil, 0
	var cands []*val
	n := numElements(w.shape)
	for _, x := range g.matching(base) {
		if x.elements() == n && !slices.Equal(x.shape(), w.shape) &&
			w.match(retyped(x, ir.Tensor(x.dt(), w.shape...))) {
			cands = append(cands, x)
		}
	}
	x := g.choose(cands)
	if x == nil {
		return nil
	}
	t := ir.Tensor(x.dt(), w.shape...)
	y := *x
	return g.emit1(ir.OpReshape, nil, &t, &y, x)
}

// Constants.

var floatPalette = []float64{0, 1, -1, 0.5, -0.5, 2, -2, 3, 0.25, 1.5, -0.75, 4, -3, 0.1, 1.25}

// constant emits a constant meeting w, or returns nil if none can.
func (g *gen) constant(w want) *val {
	dts := w.dts
	if dts == nil {
		dts = g.cfg.DTypes
	}
	dt := pick(g, dts)
	s := w.shape
	if !w.fixed {
		s = g.shapeLike()
		for len(s) < w.minRank {
			s = append(s, 1+g.r.Int64N(3))
		}
	}
	if len(s) < w.minRank {
		return nil
	}
	t := ir.Tensor(dt, s...)
	n := numElements(s)
	for try := 0; try < 8; try++ {
		k := 1
		if n > 1 && n <= 64 && g.coin(0.5) {
			k = int(n)
		}
		var lit *ir.Literal
		if dt.IsFloat() {
			vals := make([]float64, k)
			cw := w
			// A splat is never NaN: XLA:CPU's code for a transcendental
			// of a NaN it knows at compile time is garbage (exp(x + NaN)
			// gave 0, exp(max(x, NaN)) 9.4e21: oracle seed 40102), where
			// a NaN from the data, or an element of an array constant,
			// gives NaN.
			cw.noNaN = cw.noNaN || k == 1
			for i := range vals {
				vals[i] = g.floatConst(dt, cw)
			}
			lit = ir.NewLiteral(t, vals)
		} else {
			vals := make([]int64, k)
			for i := range vals {
				vals[i] = g.intConst(dt)
			}
			lit = ir.NewIntLiteral(t, vals)
		}
		x := &val{}
		x.lo, x.hi = math.Inf(1), math.Inf(-1)
		for i := 0; i < lit.Len(); i++ {
			v := lit.Float(i)
			if dt == ir.U64 { // the element is a bit pattern
				v = float64(uint64(lit.Int(i)))
			}
			if math.IsNaN(v) {
				x.nan = true
				continue
			}
			x.lo, x.hi = math.Min(x.lo, v), math.Max(x.hi, v)
		}
		if x.lo > x.hi {
			x.lo, x.hi = 0, 0
		}
		if !w.match(retyped(x, t)) {
			continue
		}
		return g.emit1(ir.OpConstant, &ir.ConstAttr{Value: lit}, &t, x)
	}
	return nil
}

// floatConst draws one element: mostly small values from a palette or of a
// few binary digits, sometimes an arbitrary value (which tests that constants
// are printed with enough digits), rarely a special value.
func (g *gen) floatConst(dt ir.DType, w want) float64 {
	bound := g.cfg.FloatInputs
	if w.maxMag > 0 {
		bound = math.Min(bound, w.maxMag)
	}
	switch k := g.r.IntN(40); {
	case k == 0 && !w.finite && !w.noNaN:
		return math.NaN()
	case k == 1 && !w.finite:
		return math.Inf(1 - 2*g.r.IntN(2))
	case k == 2:
		return math.Copysign(0, -1)
	case k == 3 && w.maxMag == 0:
		return maxFinite(dt) * (1 - 2*g.r.Float64()) / 2
	case k < 20:
		return pick(g, floatPalette)
	case k < 30:
		return math.Round((2*g.r.Float64()-1)*bound*16) / 16
	default:
		return (2*g.r.Float64() - 1) * bound
	}
}

// intConst draws one integer element (NewIntLiteral wraps it into range).
func (g *gen) intConst(dt ir.DType) int64 {
	lo, hi := dt.IntRange()
	switch k := g.r.IntN(20); {
	case k == 0:
		return lo
	case k == 1:
		return hi
	case k < 14:
		return int64(g.r.IntN(9) - 4)
	default:
		return int64(g.r.IntN(200) - 100)
	}
}
