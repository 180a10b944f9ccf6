package ir

import (
	"math"
	"testing"
)

// TestNarrowAndUnsignedDTypes pins the facts of the dtypes added for the
// StableHLO suite: their spelling, width, storage, range and wrapping.
func TestNarrowAndUnsignedDTypes(t *testing.T) {
	cases := []struct {
		d               DType
		name            string
		bits, size      int
		lo, hi          int64
		signed, subByte bool
	}{
		{U16, "u16", 16, 2, 0, math.MaxUint16, false, false},
		{U64, "u64", 64, 8, 0, -1, false, false}, // 2^64-1 as its bit pattern
		{I2, "i2", 2, 1, -2, 1, true, true},
		{I4, "i4", 4, 1, -8, 7, true, true},
		{U2, "u2", 2, 1, 0, 3, false, true},
		{U4, "u4", 4, 1, 0, 15, false, true},
	}
	for _, c := range cases {
		if c.d.String() != c.name {
			t.Errorf("%d spells %q, want %q", c.d, c.d.String(), c.name)
		}
		if d, ok := ParseDType(c.name); !ok || d != c.d {
			t.Errorf("ParseDType(%q) = %v, %v", c.name, d, ok)
		}
		if c.d.Bits() != c.bits || c.d.Size() != c.size {
			t.Errorf("%s: %d bits in %d bytes, want %d in %d", c.d, c.d.Bits(), c.d.Size(), c.bits, c.size)
		}
		if lo, hi := c.d.IntRange(); lo != c.lo || hi != c.hi {
			t.Errorf("%s: range %d..%d, want %d..%d", c.d, lo, hi, c.lo, c.hi)
		}
		if c.d.IsSigned() != c.signed || c.d.IsUnsigned() == c.signed || !c.d.IsInt() || c.d.IsFloat() {
			t.Errorf("%s: signed %v, unsigned %v", c.d, c.d.IsSigned(), c.d.IsUnsigned())
		}
		if c.d.IsSubByte() != c.subByte {
			t.Errorf("%s: IsSubByte %v", c.d, c.d.IsSubByte())
		}
	}
	wraps := []struct {
		d       DType
		in, out int64
	}{
		{U16, 65536, 0}, {U16, -1, 65535},
		{U64, -1, -1}, {U64, math.MinInt64, math.MinInt64},
		{I2, 2, -2}, {I2, -3, 1}, {I2, 1, 1},
		{I4, 8, -8}, {I4, -9, 7}, {I4, 15, -1},
		{U2, 4, 0}, {U2, -1, 3},
		{U4, 16, 0}, {U4, -1, 15}, {U4, 17, 1},
	}
	for _, w := range wraps {
		if got := w.d.WrapInt(w.in); got != w.out {
			t.Errorf("%s.WrapInt(%d) = %d, want %d", w.d, w.in, got, w.out)
		}
	}
}

// TestUnsignedOperandClasses: integer ops take the new dtypes, float-only
// ops refuse them by name.
func TestUnsignedOperandClasses(t *testing.T) {
	for _, d := range []DType{U16, U64, I2, I4, U2, U4} {
		x := Tensor(d, 3)
		if _, err := Infer(OpDiv, []Type{x, x}, nil, nil); err != nil {
			t.Errorf("div on %s: %v", d, err)
		}
		if _, err := Infer(OpAnd, []Type{x, x}, nil, nil); err != nil {
			t.Errorf("and on %s: %v", d, err)
		}
		_, err := Infer(OpExp, []Type{x}, nil, nil)
		want := "operand of exp must have a float or complex type (f32, f16, bf16, f64, c64, c128), got " + x.String()
		if err == nil || err.Error() != want {
			t.Errorf("exp on %s: got %v, want %q", d, err, want)
		}
	}
}
