package ir

import (
	"math"
	"sort"
)

// The narrow float types (f8, f6, f4: the OCP and ml_dtypes formats that
// StableHLO names) are stored one element a byte, f6 and f4 in the low bits.
// tpucc has no arithmetic on them: they are converted to and from other
// dtypes, held in constants, moved, and multiplied by dot_general, which
// computes in f32 and rounds once (docs/ops.md).

// narrowKind says how a format spends its top codes.
type narrowKind uint8

const (
	narrowIEEE  narrowKind = iota // the top exponent holds ±inf and NaNs, as IEEE 754
	narrowFN                      // no infinities: only the all-ones codes (±) are NaN
	narrowFNUZ                    // no infinities, no -0: the code of -0 (0x80) is the one NaN
	narrowNoNaN                   // no infinities, no NaN: every code is a number (f6, f4)
	narrowE8M0                    // no sign, no mantissa: 2^(e-127), 0xFF is NaN
)

// narrowFormat describes one narrow float type: exponent and mantissa
// widths, exponent bias and special codes.
type narrowFormat struct {
	ebits, mbits, bias int
	kind               narrowKind
	// values[c] is the value of the non-negative code c (sign bit clear):
	// finite codes in increasing order of value, for rounding by search.
	values []float64
	codes  []uint8 // the finite non-negative codes, in increasing order of value
}

func (f *narrowFormat) signBit() uint8 {
	if f.kind == narrowE8M0 {
		return 0
	}
	return 1 << (f.ebits + f.mbits)
}

// decode is the value of code c (its unused high bits ignored).
func (f *narrowFormat) decode(c uint8) float64 {
	width := f.ebits + f.mbits
	if f.kind != narrowE8M0 {
		width++
	}
	c &= uint8(1<<width - 1)
	if f.kind == narrowE8M0 {
		if c == 0xFF {
			return math.NaN()
		}
		return math.Ldexp(1, int(c)-127)
	}
	sign := 1.0
	if c&f.signBit() != 0 {
		sign = -1
	}
	mag := c &^ f.signBit()
	e, m := int(mag>>f.mbits), int(mag&uint8(1<<f.mbits-1))
	top := 1<<f.ebits - 1
	switch {
	case f.kind == narrowFNUZ && c == f.signBit():
		return math.NaN()
	case f.kind == narrowFN && e == top && m == 1<<f.mbits-1:
		return math.NaN()
	case f.kind == narrowIEEE && e == top && m != 0:
		return math.NaN()
	case f.kind == narrowIEEE && e == top:
		return math.Inf(int(sign))
	case e == 0:
		return sign * math.Ldexp(float64(m), 1-f.bias-f.mbits)
	}
	return sign * math.Ldexp(float64(1<<f.mbits+m), e-f.bias-f.mbits)
}

// nan is the code a NaN converts to, as ml_dtypes converts: the quiet NaN
// of the sign for the IEEE types, the all-ones code for FN, 0x80 for FNUZ
// and 0xFF for E8M0. The formats without NaN (f6, f4) give ml_dtypes' zero
// of the opposite sign.
func (f *narrowFormat) nan(neg bool) uint8 {
	s := uint8(0)
	if neg {
		s = f.signBit()
	}
	switch f.kind {
	case narrowIEEE:
		return s | uint8(1<<f.ebits-1)<<f.mbits | 1<<(f.mbits-1)
	case narrowFN:
		return s | (f.signBit() - 1)
	case narrowFNUZ:
		return f.signBit()
	case narrowE8M0:
		return 0xFF
	}
	return s ^ f.signBit()
}

// encode rounds v to the nearest code, ties to the even code (E8M0's
// away from zero: ml_dtypes rounds its missing mantissa up), as ml_dtypes
// converts: a value past the largest finite one by half its
// spacing or more becomes ±inf (IEEE types), NaN (FN, FNUZ, E8M0) or the
// largest (f6, f4); E8M0 makes NaN of a negative number or zero.
func (f *narrowFormat) encode(v float64) uint8 {
	neg := math.Signbit(v)
	switch {
	case math.IsNaN(v):
		return f.nan(neg)
	case f.kind == narrowE8M0 && (neg || v == 0):
		return 0xFF
	}
	a := math.Abs(v)
	n := len(f.values)
	i := sort.SearchFloat64s(f.values, a) // values[i-1] < a <= values[i]
	var c uint8
	switch {
	case i < n && f.values[i] == a:
		c = f.codes[i]
	case i == 0: // below the smallest value (E8M0 only: the others hold 0)
		c = f.codes[0]
	case i == n: // past the largest finite value
		c = f.overflow(a)
	default:
		lo, hi := f.values[i-1], f.values[i]
		switch d := (a - lo) - (hi - a); {
		case d < 0, d == 0 && f.codes[i-1]&1 == 0 && f.kind != narrowE8M0:
			c = f.codes[i-1]
		default:
			c = f.codes[i]
		}
	}
	return f.sign(c, neg)
}

// overflow is the code of a above the largest finite value: the largest
// below half a step past it (a tie goes to the largest's code when even).
func (f *narrowFormat) overflow(a float64) uint8 {
	n := len(f.values)
	top, step := f.values[n-1], f.values[n-1]-f.values[n-2]
	if f.kind == narrowE8M0 {
		step = top // the next power of two
	}
	if d := a - (top + step/2); d < 0 || d == 0 && f.codes[n-1]&1 == 0 && f.kind != narrowE8M0 {
		return f.codes[n-1]
	}
	switch f.kind {
	case narrowIEEE:
		return uint8(1<<f.ebits-1) << f.mbits
	case narrowNoNaN:
		return f.codes[n-1]
	}
	return f.nan(false)
}

func (f *narrowFormat) sign(c uint8, neg bool) uint8 {
	if !neg || f.kind == narrowE8M0 || (c == 0 && f.kind == narrowFNUZ) {
		return c // E8M0 has no sign; FNUZ no -0
	}
	return c | f.signBit()
}

func newNarrow(ebits, mbits, bias int, kind narrowKind) *narrowFormat {
	f := &narrowFormat{ebits: ebits, mbits: mbits, bias: bias, kind: kind}
	limit := int(f.signBit())
	if kind == narrowE8M0 {
		limit = 256
	}
	for c := 0; c < limit; c++ {
		v := f.decode(uint8(c))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		f.values = append(f.values, v)
		f.codes = append(f.codes, uint8(c))
	}
	return f
}

var narrowFormats = map[DType]*narrowFormat{
	F8E4M3FN:      newNarrow(4, 3, 7, narrowFN),
	F8E5M2:        newNarrow(5, 2, 15, narrowIEEE),
	F8E4M3FNUZ:    newNarrow(4, 3, 8, narrowFNUZ),
	F8E5M2FNUZ:    newNarrow(5, 2, 16, narrowFNUZ),
	F8E4M3B11FNUZ: newNarrow(4, 3, 11, narrowFNUZ),
	F8E4M3:        newNarrow(4, 3, 7, narrowIEEE),
	F8E3M4:        newNarrow(3, 4, 3, narrowIEEE),
	F8E8M0FNU:     newNarrow(8, 0, 127, narrowE8M0),
	F6E2M3FN:      newNarrow(2, 3, 1, narrowNoNaN),
	F6E3M2FN:      newNarrow(3, 2, 3, narrowNoNaN),
	F4E2M1FN:      newNarrow(2, 1, 1, narrowNoNaN),
}

// IsNarrowFloat reports whether d is one of the f8, f6 and f4 types.
func (d DType) IsNarrowFloat() bool { return narrowFormats[d] != nil }

// NarrowFromBits is the value of the narrow float code c of dtype d.
func (d DType) NarrowFromBits(c uint8) float64 { return narrowFormats[d].decode(c) }

// NarrowToBits rounds v to the nearest code of the narrow float dtype d
// (ties to even), with d's rules for overflow, NaN and signed zeros.
func (d DType) NarrowToBits(v float64) uint8 { return narrowFormats[d].encode(v) }

// IsFloatValued reports whether d's elements are floats, wide (IsFloat) or
// narrow: literals hold them as float64.
func (d DType) IsFloatValued() bool { return d.IsFloat() || d.IsNarrowFloat() }
