package progen

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// val is one generated value and what the analysis knows about it. The
// analysis is what keeps the oracle honest: a value with no drift is "exact",
// bit-identical in XLA and in the CPU executor (NaN payloads and the zero
// signs that zs admits aside), and only exact values may reach an op that is
// discontinuous in its input (floor, compare, convert to an integer, argmax,
// sort, indices). An approximate value carries an estimate of how far the
// two sides may drift apart, and no value is made whose estimate exceeds what
// the oracle's tolerance for its dtype allows.
type val struct {
	v *ir.Value

	// lo and hi bound the non-NaN elements (±Inf included); for integers they
	// lie in the dtype's range, and a computation that may wrap widens them to
	// the whole range.
	lo, hi float64
	nan    bool // may hold NaN
	// ea and er estimate how far the sides may drift apart on an element y:
	// |XLA - executor| <= ea + er*|y|. Both 0 means exact.
	ea, er float64
	// zs: may hold a zero whose sign differs between the sides (max(-0, +0),
	// x+0 simplified to x). Harmless to compare, but 1/x, atan2, rsqrt and the
	// total order of sorts tell the signs apart.
	zs bool
	// prod: an unrounded f32/f64 product, perhaps moved or negated on the way.
	// XLA:CPU contracts a multiply feeding an add into an FMA, which skips the
	// product's rounding, so an add of it is not exact.
	prod bool

	// narrowed: may be, once XLA has simplified the program, a signed
	// integer convert to a narrower signed type (see genBitwise).
	narrowed bool

	live  bool // computed from a parameter (else a constant expression)
	depth int  // instructions on the longest path from a parameter or constant
}

func (x *val) dt() ir.DType    { return x.v.Type.DType }
func (x *val) exact() bool     { return x.ea == 0 && x.er == 0 }
func (x *val) shape() []int64  { return x.v.Type.Dims() }
func (x *val) rank() int       { return x.v.Type.Rank() }
func (x *val) mag() float64    { return math.Max(math.Abs(x.lo), math.Abs(x.hi)) }
func (x *val) finite() bool    { return !x.nan && !math.IsInf(x.lo, 0) && !math.IsInf(x.hi, 0) }
func (x *val) has0() bool      { return x.lo <= 0 && x.hi >= 0 }
func (x *val) elements() int64 { n, _ := x.v.Type.NumElements(); return n }

// minAbs is a lower bound of |x| over the elements (0 when the range holds 0).
func (x *val) minAbs() float64 {
	if x.has0() {
		return 0
	}
	return math.Min(math.Abs(x.lo), math.Abs(x.hi))
}

// precision is the number of significand bits of a float dtype.
func precision(dt ir.DType) int {
	switch dt {
	case ir.F64:
		return 53
	case ir.F16:
		return 11
	case ir.BF16:
		return 8
	}
	return 24
}

// ulp bounds one unit in the last place of dt at magnitudes up to m.
func ulp(dt ir.DType, m float64) float64 {
	if m == 0 {
		return 0
	}
	return m * math.Ldexp(1, 1-precision(dt))
}

// unit is the relative rounding error of the precision an op computes in: f16
// and bf16 ops compute in f32 and round once (the semantics contract).
func unit(dt ir.DType) float64 {
	if dt == ir.F64 {
		return math.Ldexp(1, -53)
	}
	return math.Ldexp(1, -24)
}

// ulpRel is one ulp of dt relative to the value, at worst.
func ulpRel(dt ir.DType) float64 { return math.Ldexp(1, 1-precision(dt)) }

// rounding is the relative error an approximate op adds to its result: k
// units of the compute precision (XLA's own error for the op; the executor
// computes in f64) and one ulp of the dtype (the sides may round slightly
// different values to different neighbours).
func rounding(dt ir.DType, k float64) float64 { return k*unit(dt) + ulpRel(dt) }

// errMax bounds the drift on any element: ea + er*max|x|.
func (x *val) errMax() float64 {
	if x.er == 0 {
		return x.ea
	}
	return x.ea + x.er*x.mag()
}

// maxFinite is the largest finite value of a float dtype.
func maxFinite(dt ir.DType) float64 {
	switch dt {
	case ir.F16:
		return 65504
	case ir.BF16:
		return float64(ir.BF16ToFloat32(0x7f7f))
	case ir.F32:
		return math.MaxFloat32
	}
	return math.MaxFloat64
}

// fitRange brings a computed real range into dt: rounded outward for floats
// (beyond the largest finite value is infinity), the whole range for integers
// when it may have wrapped.
func fitRange(dt ir.DType, lo, hi float64) (float64, float64) {
	if lo > hi {
		lo, hi = hi, lo
	}
	if dt.IsFloat() {
		m := maxFinite(dt)
		if lo < -m {
			lo = math.Inf(-1)
		} else {
			lo = dt.RoundFloat(lo)
		}
		if hi > m {
			hi = math.Inf(1)
		} else {
			hi = dt.RoundFloat(hi)
		}
		return lo, hi
	}
	a, b := intBounds(dt)
	if math.IsNaN(lo) || math.IsNaN(hi) || lo < a || hi > b {
		return a, b
	}
	return math.Floor(lo), math.Ceil(hi)
}

// intBounds is dt's range as float64s. ir holds u64's greatest value,
// 2^64-1, as its bit pattern -1; here it is the float nearest it, as i64's
// greatest is.
func intBounds(dt ir.DType) (float64, float64) {
	a, b := dt.IntRange()
	if dt == ir.U64 {
		return 0, float64(uint64(b))
	}
	return float64(a), float64(b)
}

// fullRange is what is known of an integer value that may be anything.
func fullRange(dt ir.DType) (float64, float64) {
	if dt.IsFloat() {
		return math.Inf(-1), math.Inf(1)
	}
	return intBounds(dt)
}

// span returns the min and max of xs, ignoring NaNs (which the nan flag carries).
func span(xs ...float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		if math.IsNaN(x) {
			continue
		}
		lo = math.Min(lo, x)
		hi = math.Max(hi, x)
	}
	if lo > hi { // all NaN
		return 0, 0
	}
	return lo, hi
}

// mulRange is the range of a*b over the boxes; 0*inf yields NaN, reported.
func mulRange(a, b *val) (lo, hi float64, nan bool) {
	ps := []float64{a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}
	for _, p := range ps {
		nan = nan || math.IsNaN(p)
	}
	if nan {
		return math.Inf(-1), math.Inf(1), true
	}
	lo, hi = span(ps...)
	return lo, hi, false
}

// Tolerance is the oracle's allowance for one dtype: |want - got| <=
// Atol + Rtol*|want|.
type Tolerance struct{ Rtol, Atol float64 }

// DefaultTolerance is the oracle's table (internal/oracle's package doc gives
// the evidence; oracle.For returns it). The generator keeps every approximate
// value's drift estimate within Config.Budget of it.
func DefaultTolerance(dt ir.DType) Tolerance {
	switch dt.ComplexPart() { // a complex type: each part as its part type
	case ir.F64:
		return Tolerance{Rtol: 1e-12, Atol: 1e-12}
	case ir.F32:
		return Tolerance{Rtol: 1e-5, Atol: 1e-5}
	case ir.F16:
		return Tolerance{Rtol: 5e-3, Atol: 5e-3}
	case ir.BF16:
		return Tolerance{Rtol: 4e-2, Atol: 4e-2}
	}
	return Tolerance{}
}
