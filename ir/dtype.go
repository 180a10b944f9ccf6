package ir

import "math"

// DType is the element type of a tensor.
type DType uint8

const (
	Invalid DType = iota
	F32
	F16
	BF16
	F64
	I1
	I8
	I16
	I32
	I64
	U8
	U32
	C64
	C128
	U16
	U64
	I2
	I4
	U2
	U4
	// The narrow floats (dtype_narrow.go).
	F8E4M3FN
	F8E5M2
	F8E4M3FNUZ
	F8E5M2FNUZ
	F8E4M3B11FNUZ
	F8E4M3
	F8E3M4
	F8E8M0FNU
	F6E2M3FN
	F6E3M2FN
	F4E2M1FN
	numDTypes
)

var dtypeNames = [numDTypes]string{
	Invalid: "invalid",
	F32:     "f32",
	F16:     "f16",
	BF16:    "bf16",
	F64:     "f64",
	I1:      "i1",
	I8:      "i8",
	I16:     "i16",
	I32:     "i32",
	I64:     "i64",
	U8:      "u8",
	U32:     "u32",
	C64:     "c64",
	C128:    "c128",
	U16:     "u16",
	U64:     "u64",
	I2:      "i2",
	I4:      "i4",
	U2:      "u2",
	U4:      "u4",

	F8E4M3FN:      "f8e4m3fn",
	F8E5M2:        "f8e5m2",
	F8E4M3FNUZ:    "f8e4m3fnuz",
	F8E5M2FNUZ:    "f8e5m2fnuz",
	F8E4M3B11FNUZ: "f8e4m3b11fnuz",
	F8E4M3:        "f8e4m3",
	F8E3M4:        "f8e3m4",
	F8E8M0FNU:     "f8e8m0fnu",
	F6E2M3FN:      "f6e2m3fn",
	F6E3M2FN:      "f6e3m2fn",
	F4E2M1FN:      "f4e2m1fn",
}

// DTypes lists every valid dtype in declaration order.
var DTypes = []DType{F32, F16, BF16, F64, I1, I8, I16, I32, I64, U8, U32, C64, C128, U16, U64, I2, I4, U2, U4,
	F8E4M3FN, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F8E4M3B11FNUZ, F8E4M3, F8E3M4, F8E8M0FNU, F6E2M3FN, F6E3M2FN, F4E2M1FN}

func (d DType) String() string {
	if d < numDTypes {
		return dtypeNames[d]
	}
	return "invalid"
}

// ParseDType returns the dtype spelled s in .tir.
func ParseDType(s string) (DType, bool) {
	for _, d := range DTypes {
		if dtypeNames[d] == s {
			return d, true
		}
	}
	return Invalid, false
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == F32 || d == F16 || d == BF16 || d == F64 }

// IsInt reports whether d is a signed or unsigned integer type (not i1).
func (d DType) IsInt() bool { return d.IsSigned() || d.IsUnsigned() }

// IsSigned reports whether d is a signed integer type.
func (d DType) IsSigned() bool {
	return d == I8 || d == I16 || d == I32 || d == I64 || d == I2 || d == I4
}

// IsUnsigned reports whether d is an unsigned integer type.
func (d DType) IsUnsigned() bool {
	return d == U8 || d == U32 || d == U16 || d == U64 || d == U2 || d == U4
}

// IsSubByte reports whether d is i2, i4, u2 or u4: narrower than a byte, yet
// stored one element per byte, in its low bits (the upper bits are zero, i2
// and i4 included, as in ml_dtypes' int4 arrays).
func (d DType) IsSubByte() bool { return d == I2 || d == I4 || d == U2 || d == U4 }

// IsBool reports whether d is i1.
func (d DType) IsBool() bool { return d == I1 }

// IsComplex reports whether d is a complex type: c64 (two f32, real part
// first) or c128 (two f64).
func (d DType) IsComplex() bool { return d == C64 || d == C128 }

// ComplexPart is the dtype of a complex type's real and imaginary parts (f32
// for c64, f64 for c128); a real dtype is its own part.
func (d DType) ComplexPart() DType {
	switch d {
	case C64:
		return F32
	case C128:
		return F64
	}
	return d
}

// ComplexOf is the complex type whose parts are the float type d (c64 for
// f32, c128 for f64), or Invalid for any other dtype.
func (d DType) ComplexOf() DType {
	switch d {
	case F32:
		return C64
	case F64:
		return C128
	}
	return Invalid
}

// IsNumeric reports whether d supports arithmetic: a float or an integer, not i1.
// Complex types are not included: the ops that accept them say so.
func (d DType) IsNumeric() bool { return d.IsFloat() || d.IsInt() }

// Bits is the width of one element in bits (i1 counts as 8: it is stored in a
// byte; i2, i4, u2 and u4 count their own width, though each takes a byte).
func (d DType) Bits() int {
	switch d {
	case I1, I8, U8:
		return 8
	case F16, BF16, I16, U16:
		return 16
	case F32, I32, U32:
		return 32
	case F64, I64, U64, C64:
		return 64
	case C128:
		return 128
	case I2, U2:
		return 2
	case I4, U4, F4E2M1FN:
		return 4
	case F6E2M3FN, F6E3M2FN:
		return 6
	}
	if d.IsNarrowFloat() {
		return 8
	}
	return 0
}

// Size is the number of bytes one element occupies in memory (one for the
// sub-byte types and f6 and f4, which are not packed).
func (d DType) Size() int {
	if d.IsSubByte() || d.IsNarrowFloat() {
		return 1
	}
	return d.Bits() / 8
}

// IntRange returns the smallest and largest value of an integer dtype (0 and 1
// for i1). u64's largest, 2^64-1, does not fit an int64: hi is its bit
// pattern, -1, as every u64 value is held in an int64 (see WrapInt); range
// checks on u64 must compare as unsigned.
func (d DType) IntRange() (lo, hi int64) {
	switch d {
	case I1:
		return 0, 1
	case I8:
		return math.MinInt8, math.MaxInt8
	case I16:
		return math.MinInt16, math.MaxInt16
	case I32:
		return math.MinInt32, math.MaxInt32
	case I64:
		return math.MinInt64, math.MaxInt64
	case U8:
		return 0, math.MaxUint8
	case U32:
		return 0, math.MaxUint32
	case U16:
		return 0, math.MaxUint16
	case U64:
		return 0, -1
	case I2:
		return -2, 1
	case I4:
		return -8, 7
	case U2:
		return 0, 3
	case U4:
		return 0, 15
	}
	return 0, 0
}

// WrapInt reduces v modulo 2^bits into d's range, as two's-complement hardware
// does. A u64 value is its bit pattern read as an int64 (2^64-1 is -1), so
// its wrap is the identity; u64's division, remainder, comparisons and
// conversions must read the pattern as a uint64.
func (d DType) WrapInt(v int64) int64 {
	switch d {
	case I1:
		if v != 0 {
			return 1
		}
		return 0
	case I8:
		return int64(int8(v))
	case I16:
		return int64(int16(v))
	case I32:
		return int64(int32(v))
	case U8:
		return int64(uint8(v))
	case U32:
		return int64(uint32(v))
	case U16:
		return int64(uint16(v))
	case I2:
		return v << 62 >> 62
	case I4:
		return v << 60 >> 60
	case U2:
		return v & 3
	case U4:
		return v & 15
	}
	return v
}

// RoundFloat rounds v to the nearest value representable in the float dtype d
// (round to nearest even), the way XLA rounds a result into f32, f16 or bf16.
func (d DType) RoundFloat(v float64) float64 {
	switch d {
	case F32:
		return float64(float32(v))
	case F16:
		return float64(F16ToFloat32(Float32ToF16(float32(v))))
	case BF16:
		return float64(BF16ToFloat32(Float32ToBF16(float32(v))))
	}
	if d.IsNarrowFloat() {
		return d.NarrowFromBits(d.NarrowToBits(v))
	}
	return v
}

// RoundComplex rounds both parts of v into the complex dtype d's part type.
func (d DType) RoundComplex(v complex128) complex128 {
	if d == C64 {
		return complex128(complex64(v))
	}
	return v
}

// Float32ToBF16 converts with round-to-nearest-even; NaN stays NaN.
func Float32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToFloat32 widens a bf16 bit pattern exactly.
func BF16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// Float32ToF16 converts to IEEE half precision with round-to-nearest-even.
func Float32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp == 0 && mant == 0:
		return sign
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half (or underflow to zero).
		if e < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		r := m >> shift
		rem := m & (1<<shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, which rounds up to inf correctly
	}
	return sign | uint16(r)
}

// F16ToFloat32 widens an IEEE half bit pattern exactly.
func F16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: normalise.
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		mant &= 0x3ff
		return math.Float32frombits(sign | e<<23 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
