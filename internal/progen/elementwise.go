package progen

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// A transcendental's analysis: which operands it may take, the image of a
// range, and how an operand's drift carries into the result (prop, used only
// for approximate operands, which dom keeps where it is finite).
type transcendental struct {
	dom   func(x *val) bool
	image func(lo, hi float64) (float64, float64, bool) // range and whether NaN may appear
	prop  func(x *val) (ea, er float64)
	k     float64 // XLA's error, in units of the compute precision at the result
}

func monotone(f func(float64) float64) func(lo, hi float64) (float64, float64, bool) {
	return func(lo, hi float64) (float64, float64, bool) {
		a, b := span(f(lo), f(hi))
		return a, b, false
	}
}

// lipschitz carries drift through f with |f'| <= l and |x f'(x)| <= lx.
func lipschitz(l, lx float64) func(x *val) (float64, float64) {
	return func(x *val) (float64, float64) { return l*x.ea + lx*x.er, 0 }
}

// expLimit keeps exp's results finite and away from denormals, which XLA:CPU
// flushes to zero: f16 overflows above 11, the other dtypes far later.
func expLimit(dt ir.DType) (lo, hi float64) {
	switch dt {
	case ir.F16:
		return -60, 10
	case ir.F64:
		return -600, 40
	}
	return -80, 40
}

func inExpLimit(x *val) bool { lo, hi := expLimit(x.dt()); return x.lo >= lo && x.hi <= hi }

var transcendentals = map[ir.Op]transcendental{
	// exp: dy = y dx, a relative drift.
	ir.OpExp: {dom: inExpLimit, image: monotone(math.Exp), k: 4,
		prop: func(x *val) (float64, float64) { return 0, 1.01 * x.errMax() }},
	// expm1: dy = (y+1) dx.
	ir.OpExpm1: {dom: inExpLimit, image: monotone(math.Expm1), k: 4,
		prop: func(x *val) (float64, float64) { d := 1.01 * x.errMax(); return d, d }},
	// log: dy = dx/x, so a relative drift of x becomes an absolute one.
	ir.OpLog: {dom: func(x *val) bool { return x.exact() || x.lo >= 0.01 }, k: 4,
		image: func(lo, hi float64) (float64, float64, bool) {
			return math.Log(math.Max(lo, 0)), math.Log(math.Max(hi, 0)), lo < 0
		},
		prop: func(x *val) (float64, float64) { return x.ea/x.lo + x.er, 0 }},
	ir.OpLog1p: {dom: func(x *val) bool { return x.exact() || x.lo >= -0.9 }, k: 4,
		image: func(lo, hi float64) (float64, float64, bool) {
			return math.Log1p(math.Max(lo, -1)), math.Log1p(math.Max(hi, -1)), lo < -1
		},
		prop: func(x *val) (float64, float64) { return x.errMax() / (1 + x.lo), 0 }},
	// sqrt and rsqrt: dy/y = ∓dx/(2x).
	ir.OpSqrt: {dom: func(x *val) bool { return x.exact() || x.lo >= 0.01 }, k: 2,
		image: func(lo, hi float64) (float64, float64, bool) {
			return math.Sqrt(math.Max(lo, 0)), math.Sqrt(math.Max(hi, 0)), lo < 0
		},
		prop: func(x *val) (float64, float64) { return 0, x.er/2 + x.ea/(2*x.lo) }},
	ir.OpRsqrt: {dom: func(x *val) bool { return (x.exact() && !x.zs) || x.lo >= 0.05 }, k: 4,
		image: func(lo, hi float64) (float64, float64, bool) {
			a, b := 1/math.Sqrt(math.Max(hi, 0)), 1/math.Sqrt(math.Max(lo, 0))
			if lo <= 0 {
				a = math.Inf(-1) // rsqrt(-0) = -inf
			}
			return a, b, lo < 0
		},
		prop: func(x *val) (float64, float64) { return 0, x.er/2 + x.ea/(2*x.lo) }},
	ir.OpTanh:    {dom: func(*val) bool { return true }, image: monotone(math.Tanh), prop: lipschitz(1, 0.45), k: 4},
	ir.OpSigmoid: {dom: func(*val) bool { return true }, image: monotone(sigmoid), prop: lipschitz(0.25, 0.23), k: 4},
	ir.OpErf:     {dom: func(*val) bool { return true }, image: monotone(math.Erf), prop: lipschitz(1.13, 0.49), k: 4},
	// cbrt: dy/y = dx/(3x), so operands that may drift stay away from 0.
	ir.OpCbrt: {dom: func(x *val) bool { return x.exact() || x.lo >= 0.05 || x.hi <= -0.05 }, k: 4,
		image: monotone(math.Cbrt),
		prop: func(x *val) (float64, float64) {
			return 0, x.er/3 + x.ea/(3*math.Min(math.Abs(x.lo), math.Abs(x.hi)))
		}},
	// tan on |x| <= 1.2, away from its poles: |f'| = 1+tan² <= 7.6.
	ir.OpTan: {dom: func(x *val) bool { return x.mag() <= 1.2 }, image: monotone(math.Tan), prop: lipschitz(7.6, 9.2), k: 4},
	ir.OpSin: {dom: func(x *val) bool { return x.mag() <= 100 }, k: 4,
		image: func(lo, hi float64) (float64, float64, bool) { return -1, 1, false },
		prop:  func(x *val) (float64, float64) { return x.errMax(), 0 }},
	ir.OpCos: {dom: func(x *val) bool { return x.mag() <= 100 }, k: 4,
		image: func(lo, hi float64) (float64, float64, bool) { return -1, 1, false },
		prop:  func(x *val) (float64, float64) { return x.errMax(), 0 }},
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func (g *gen) genTranscendental(op ir.Op) bool {
	tr := transcendentals[op]
	x := g.get(want{dts: floatDTypes, pred: tr.dom})
	if x == nil {
		return false
	}
	lo, hi, nan := tr.image(x.lo, x.hi)
	y := &val{nan: x.nan || nan, zs: x.zs && (op == ir.OpTanh || op == ir.OpErf || op == ir.OpSqrt || op == ir.OpExpm1 || op == ir.OpCbrt || op == ir.OpTan)}
	y.lo, y.hi = fitRange(x.dt(), lo, hi)
	if !x.exact() {
		y.ea, y.er = tr.prop(x)
	}
	y.er += rounding(x.dt(), tr.k)
	if !g.ok(x.dt(), y) {
		return false
	}
	return g.emit1(op, nil, nil, y, x) != nil
}

// genRounding: floor, ceil, round and sign, discontinuous, on exact values.
func (g *gen) genRounding(op ir.Op) bool {
	dts := floatDTypes
	if op == ir.OpSign {
		dts = nil
	}
	x := g.get(want{dts: dts, pred: isNumeric, exact: true})
	if x == nil {
		return false
	}
	y := *x
	y.prod = false
	switch op {
	case ir.OpFloor:
		y.lo, y.hi = math.Floor(x.lo), math.Floor(x.hi)
	case ir.OpCeil:
		y.lo, y.hi = math.Ceil(x.lo), math.Ceil(x.hi)
	case ir.OpRound:
		y.lo, y.hi = math.RoundToEven(x.lo), math.RoundToEven(x.hi)
	case ir.OpRoundAFZ:
		y.lo, y.hi = math.Round(x.lo), math.Round(x.hi)
	case ir.OpSign:
		y.lo, y.hi = sign(x.lo), sign(x.hi)
	}
	return g.emit1(op, nil, nil, &y, x) != nil
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func isNumeric(x *val) bool { return x.dt().IsNumeric() }
func isBits(x *val) bool    { return x.dt().IsInt() || x.dt() == ir.I1 }

func (g *gen) genNegAbs(op ir.Op) bool {
	x := g.get(want{pred: isNumeric})
	if x == nil {
		return false
	}
	y := *x
	dt := x.dt()
	if op == ir.OpNeg {
		y.lo, y.hi = fitRange(dt, -x.hi, -x.lo)
		if dt.IsUnsigned() && x.hi > 0 {
			y.lo, y.hi = fullRange(dt)
		}
	} else {
		y.prod, y.zs = false, false
		switch {
		case dt.IsUnsigned():
		case x.has0():
			y.lo, y.hi = fitRange(dt, 0, x.mag())
		default:
			y.lo, y.hi = fitRange(dt, x.minAbs(), x.mag())
		}
	}
	return g.emit1(op, nil, nil, &y, x) != nil
}

func (g *gen) genNot() bool {
	x := g.get(want{pred: isBits})
	if x == nil {
		return false
	}
	y := &val{}
	dt := x.dt()
	switch {
	case dt == ir.I1:
		y.lo, y.hi = 0, 1
	case dt.IsUnsigned():
		_, m := intBounds(dt)
		y.lo, y.hi = m-x.hi, m-x.lo
	default:
		y.lo, y.hi = -x.hi-1, -x.lo-1
	}
	return g.emit1(ir.OpNot, nil, nil, y, x) != nil
}

// Binary ops.

// operands gets a first operand satisfying w and a second of its type
// satisfying w2 (whose dtype and shape are filled in).
func (g *gen) operands(w, w2 want) (*val, *val) {
	a := g.get(w)
	if a == nil {
		return nil, nil
	}
	b := g.get(w2.withDType(a.dt()).withShape(a.shape()))
	if b == nil {
		return nil, nil
	}
	if g.coin(0.5) && w.match(b) && w2.match(a) {
		a, b = b, a
	}
	return a, b
}

func (g *gen) genArith(op ir.Op) bool {
	a, b := g.operands(want{pred: isNumeric}, want{})
	if a == nil {
		return false
	}
	y := arithInfo(op, a, b)
	if y == nil || !g.ok(a.dt(), y) {
		return false
	}
	return g.emit1(op, nil, nil, y, a, b) != nil
}

// arithInfo analyses add, sub, mul, max and min.
func arithInfo(op ir.Op, a, b *val) *val {
	dt := a.dt()
	y := &val{nan: a.nan || b.nan}
	var lo, hi float64
	switch op {
	case ir.OpAdd:
		lo, hi = a.lo+b.lo, a.hi+b.hi
	case ir.OpSub:
		lo, hi = a.lo-b.hi, a.hi-b.lo
	case ir.OpMul:
		var nan bool
		lo, hi, nan = mulRange(a, b)
		y.nan = y.nan || nan
	case ir.OpMax:
		lo, hi = math.Max(a.lo, b.lo), math.Max(a.hi, b.hi)
	case ir.OpMin:
		lo, hi = math.Min(a.lo, b.lo), math.Min(a.hi, b.hi)
	}
	if math.IsNaN(lo) || math.IsNaN(hi) { // inf - inf
		lo, hi, y.nan = math.Inf(-1), math.Inf(1), true
	}
	y.lo, y.hi = fitRange(dt, lo, hi)
	if !dt.IsFloat() {
		return y
	}
	y.zs = a.zs || b.zs
	switch op {
	case ir.OpAdd, ir.OpSub:
		// x+0 may be simplified to x, which keeps a -0 that IEEE would make +0.
		y.zs = y.zs || (a.has0() && b.has0())
		fma := 0.0
		for _, x := range []*val{a, b} {
			if x.prod {
				fma += ulp(dt, x.mag()) / 2
			}
		}
		if a.exact() && b.exact() && fma == 0 {
			break
		}
		// Relative drift survives when the terms cannot cancel.
		same := (a.lo >= 0 && b.lo >= 0) || (a.hi <= 0 && b.hi <= 0)
		if op == ir.OpSub {
			same = (a.lo >= 0 && b.hi <= 0) || (a.hi <= 0 && b.lo >= 0)
		}
		if same {
			y.ea, y.er = a.ea+b.ea+fma, math.Max(a.er, b.er)
		} else {
			y.ea = a.errMax() + b.errMax() + fma
		}
		y.er += ulpRel(dt)
	case ir.OpMul:
		y.prod = dt == ir.F32 || dt == ir.F64
		if a.exact() && b.exact() {
			break
		}
		y.ea = b.mag()*a.ea + a.mag()*b.ea + a.ea*b.ea
		y.er = a.er + b.er + a.er*b.er + ulpRel(dt)
	case ir.OpMax, ir.OpMin:
		y.zs = y.zs || (a.has0() && b.has0())
		y.ea, y.er = math.Max(a.ea, b.ea), math.Max(a.er, b.er)
	}
	return y
}

func (g *gen) genDiv() bool {
	isDenom := func(x *val) bool {
		if !x.dt().IsFloat() {
			return true
		}
		if x.exact() {
			return !x.zs
		}
		return x.minAbs() >= 0.25
	}
	a, b := g.operands(want{pred: isNumeric}, want{pred: isDenom})
	if a == nil {
		return false
	}
	dt := a.dt()
	y := &val{}
	if !dt.IsFloat() {
		// x/0 = -1 and INT_MIN/-1 = INT_MIN: anything in range.
		y.lo, y.hi = fullRange(dt)
		return g.emit1(ir.OpDiv, nil, nil, y, a, b) != nil
	}
	y.nan = a.nan || b.nan
	y.zs = a.zs || b.zs
	if b.has0() {
		// Exact operands only (isDenom): x/±0 is the same infinity on both sides.
		y.lo, y.hi = math.Inf(-1), math.Inf(1)
		y.nan = y.nan || a.has0() || math.IsInf(a.mag(), 0)
	} else {
		mb := b.minAbs()
		m := a.mag() / mb
		y.lo, y.hi = fitRange(dt, -m, m)
		if a.lo >= 0 && b.lo > 0 || a.hi <= 0 && b.hi < 0 {
			y.lo = 0
		}
		if a.hi <= 0 && b.lo > 0 || a.lo >= 0 && b.hi < 0 {
			y.hi = 0
		}
		y.nan = y.nan || (math.IsInf(a.mag(), 0) && math.IsInf(b.mag(), 0))
		// d(a/b) = da/b - a db/b^2.
		y.ea = a.ea/mb + a.mag()*b.ea/(mb*mb)
		y.er = a.er + b.er
	}
	// XLA may rewrite x/c as x*(1/c), which rounds twice.
	y.er += 2 * rounding(dt, 1)
	if !g.ok(dt, y) {
		return false
	}
	return g.emit1(ir.OpDiv, nil, nil, y, a, b) != nil
}

// genRem: C fmod for floats, exact but discontinuous, so on exact values only.
func (g *gen) genRem() bool {
	a, b := g.operands(want{pred: isNumeric, exact: true}, want{exact: true})
	if a == nil {
		return false
	}
	dt := a.dt()
	y := &val{nan: a.nan || b.nan || (dt.IsFloat() && (b.has0() || math.IsInf(a.mag(), 0))), zs: a.zs}
	m := math.Min(a.mag(), b.mag())
	if !dt.IsFloat() {
		m = math.Max(a.mag(), b.mag()) // x % 0 = x; INT_MIN % -1 = 0
	}
	lo, hi := -m, m
	if a.lo >= 0 {
		lo = 0
	}
	if a.hi <= 0 {
		hi = 0
	}
	y.lo, y.hi = fitRange(dt, lo, hi)
	return g.emit1(ir.OpRem, nil, nil, y, a, b) != nil
}

func (g *gen) genPow() bool {
	a := g.get(want{pred: isNumeric})
	if a == nil {
		return false
	}
	dt := a.dt()
	if !dt.IsFloat() {
		b := g.get(want{dts: []ir.DType{dt}, shape: a.shape(), fixed: true})
		if b == nil {
			return false
		}
		y := &val{}
		y.lo, y.hi = fullRange(dt)
		return g.emit1(ir.OpPow, nil, nil, y, a, b) != nil
	}
	// Bases in [-8, 8] (positive and away from 0 unless exact), exponents in [-4, 4].
	base := want{dts: []ir.DType{dt}, shape: a.shape(), fixed: true, pred: func(x *val) bool {
		if x.exact() {
			return !x.zs && x.mag() <= 8
		}
		return x.lo >= 0.25 && x.hi <= 8
	}}
	if !base.match(a) {
		if a = g.get(base); a == nil {
			return false
		}
	}
	b := g.get(want{dts: []ir.DType{dt}, shape: a.shape(), fixed: true, pred: func(x *val) bool {
		return x.mag() <= 4 && (x.exact() || a.lo >= 0.25)
	}})
	if b == nil {
		return false
	}
	y := &val{nan: a.nan || b.nan || a.lo < 0, zs: a.has0()}
	var corners []float64
	for _, p := range []float64{a.lo, a.hi, a.minAbs(), 1} {
		for _, q := range []float64{b.lo, b.hi, 0} {
			corners = append(corners, math.Pow(math.Abs(p), q))
		}
	}
	_, m := span(corners...)
	if a.has0() && b.lo < 0 {
		m = math.Inf(1)
	}
	lo := -m
	if a.lo >= 0 {
		lo = 0
	}
	y.lo, y.hi = fitRange(dt, lo, m)
	// dy/y = b da/a + ln(a) db; XLA computes exp(b log a), whose error
	// grows with |b log a|.
	lnA := math.Max(math.Abs(math.Log(math.Max(a.minAbs(), 1e-300))), math.Abs(math.Log(math.Max(a.mag(), 1e-300))))
	if !a.exact() {
		y.er += b.mag() * (a.ea/a.minAbs() + a.er)
	}
	if !b.exact() {
		y.er += lnA * b.errMax()
	}
	y.er += rounding(dt, 4*(1+b.mag()*math.Min(lnA, 10)))
	if !g.ok(dt, y) {
		return false
	}
	return g.emit1(ir.OpPow, nil, nil, y, a, b) != nil
}

// genBitwise: and, or, xor. XLA:CPU (jax 0.10.2) segfaults compiling and
// or or of a signed integer convert of a parameter to a narrower signed type
// (jnp.bitwise_and(a, b.astype(jnp.int32)) with b int64), an XLA bug that
// no lowering can avoid, so and/or never take a value that may simplify to one.
func (g *gen) genBitwise(op ir.Op) bool {
	a, b := g.operands(want{pred: isBits}, want{})
	if a == nil {
		return false
	}
	if op != ir.OpXor && (a.narrowed || b.narrowed) {
		return false
	}
	dt := a.dt()
	y := &val{}
	switch {
	case dt == ir.I1:
		y.lo, y.hi = 0, 1
	case op == ir.OpAnd && a.lo >= 0 && b.lo >= 0:
		y.lo, y.hi = 0, math.Min(a.hi, b.hi)
	default:
		y.lo, y.hi = fullRange(dt)
	}
	return g.emit1(op, nil, nil, y, a, b) != nil
}

// genAtan2: atan2(a, b) jumps by 2*pi where b < 0 and a crosses 0, so an
// approximate operand needs a or b bounded away from that cut.
func (g *gen) genAtan2() bool {
	a, b := g.operands(want{dts: floatDTypes}, want{})
	if a == nil {
		return false
	}
	dt := a.dt()
	y := &val{lo: -math.Pi, hi: math.Pi, nan: a.nan || b.nan}
	if a.exact() && b.exact() {
		// XLA:CPU's vectorised atan2 (inside a fusion) gives NaN for
		// atan2(0, 0), where IEEE and the executor give 0.
		if a.zs || b.zs || a.lo <= 0 && a.hi >= 0 && b.lo <= 0 && b.hi >= 0 {
			return false
		}
	} else {
		r := math.Max(a.minAbs(), b.minAbs())
		if b.lo < 0.1 && a.minAbs() < 0.1 || r < 0.1 {
			return false
		}
		// |d atan2(a, b)| <= (|da| + |db|) / sqrt(a^2 + b^2).
		y.ea = (a.errMax() + b.errMax()) / r
	}
	y.er = rounding(dt, 4)
	y.lo, y.hi = fitRange(dt, y.lo, y.hi)
	if !g.ok(dt, y) {
		return false
	}
	return g.emit1(ir.OpAtan2, nil, nil, y, a, b) != nil
}

// Compare, select, clamp.

func (g *gen) genCompare() bool {
	a, b := g.operands(want{exact: true}, want{exact: true})
	if a == nil {
		return false
	}
	y := &val{lo: 0, hi: 1}
	return g.emit1(ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpDir(g.r.IntN(6))}, nil, y, a, b) != nil
}

func (g *gen) genSelect() bool {
	a, b := g.operands(want{}, want{})
	if a == nil {
		return false
	}
	pw := want{dts: []ir.DType{ir.I1}}.withShape(a.shape())
	if g.coin(0.2) {
		pw = pw.withShape(nil)
	}
	p := g.get(pw)
	if p == nil {
		return false
	}
	y := &val{nan: a.nan || b.nan, ea: math.Max(a.ea, b.ea), er: math.Max(a.er, b.er), zs: a.zs || b.zs}
	y.lo, y.hi = math.Min(a.lo, b.lo), math.Max(a.hi, b.hi)
	return g.emit1(ir.OpSelect, nil, nil, y, p, a, b) != nil
}

func (g *gen) genClamp() bool {
	x := g.get(want{pred: isNumeric})
	if x == nil {
		return false
	}
	bound := func() *val {
		w := want{dts: []ir.DType{x.dt()}}.withShape(x.shape())
		if g.coin(0.6) {
			w = w.withShape(nil)
		}
		return g.get(w)
	}
	lo, hi := bound(), bound()
	if lo == nil || hi == nil {
		return false
	}
	y := &val{nan: x.nan || lo.nan || hi.nan}
	for _, z := range []*val{lo, x, hi} {
		y.ea, y.er = math.Max(y.ea, z.ea), math.Max(y.er, z.er)
	}
	y.lo = math.Min(math.Max(x.lo, lo.lo), hi.lo)
	y.hi = math.Min(math.Max(x.hi, lo.hi), hi.hi)
	y.lo, y.hi = span(y.lo, y.hi)
	if x.dt().IsFloat() {
		y.zs = x.zs || lo.zs || hi.zs || (x.has0() && (lo.has0() || hi.has0()))
	}
	return g.emit1(ir.OpClamp, nil, nil, y, lo, x, hi) != nil
}

// convertInfo analyses convert(x) to dt; nil if it is not allowed (a float
// to an integer or i1 is discontinuous, so only from exact values).
func convertInfo(x *val, dt ir.DType) *val {
	src := x.dt()
	y := &val{}
	switch {
	case src.IsFloat() && dt.IsFloat():
		*y = *x
		y.v = nil
		y.prod = x.prod && dt == ir.F64 && src == ir.F32
		y.lo, y.hi = fitRange(dt, x.lo, x.hi)
		if !x.exact() && precision(dt) < precision(src) {
			y.er += ulpRel(dt)
		}
	case src.IsFloat():
		if !x.exact() {
			return nil
		}
		if dt == ir.I1 {
			y.lo, y.hi = 0, 1
			break
		}
		a, b := intBounds(dt)
		y.lo = math.Max(a, math.Min(b, math.Trunc(x.lo)))
		y.hi = math.Max(a, math.Min(b, math.Trunc(x.hi)))
		if x.nan { // NaN converts to 0
			y.lo, y.hi = math.Min(y.lo, 0), math.Max(y.hi, 0)
		}
	case dt.IsFloat():
		y.lo, y.hi = fitRange(dt, x.lo, x.hi)
	case dt == ir.I1:
		y.lo, y.hi = 0, 1
	default:
		y.lo, y.hi = fitRange(dt, x.lo, x.hi)
	}
	return y
}

func (g *gen) genConvert() bool {
	x := g.get(want{})
	if x == nil {
		return false
	}
	for _, k := range g.r.Perm(len(g.cfg.DTypes)) {
		dt := g.cfg.DTypes[k]
		if dt == x.dt() {
			continue
		}
		y := convertInfo(x, dt)
		if y == nil || !g.ok(dt, y) {
			continue
		}
		t := ir.Tensor(dt, x.shape()...)
		return g.emit1(ir.OpConvert, nil, &t, y, x) != nil
	}
	return false
}
