package cpu

import (
	"math"
	"math/cmplx"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

func c128(d ...int64) ir.Type { return ir.Tensor(ir.C128, d...) }
func c64(d ...int64) ir.Type  { return ir.Tensor(ir.C64, d...) }

// cbuf is a complex buffer of type t holding vs.
func cbuf(t ir.Type, vs ...complex128) *backend.Buffer {
	b := backend.New(t)
	b.WriteComplex128s(0, vs)
	return b
}

// TestComplexKernels: the cases StableHLO's specification and its
// interpreter tests name, and the ones the formulas handle specially
// (signed zeros, NaN parts, the accurate log1p and expm1 near 0, c64
// rounding). Printed results are compared, so every bit that String shows
// counts.
func TestComplexKernels(t *testing.T) {
	cases := []struct {
		name string
		op   ir.Op
		attr ir.Attr
		hint []ir.Type
		args []*backend.Buffer
		want string
	}{
		{"add c64 rounds once", ir.OpAdd, nil, nil, []*backend.Buffer{cbuf(c64(1), 0.1+1e-9i), cbuf(c64(1), 0.2+2i)},
			"c64[1] [(0.3, 2.0)]"},
		{"mul", ir.OpMul, nil, nil, []*backend.Buffer{cbuf(c128(2), 1.5+2.5i, 7.5+5.5i), cbuf(c128(2), 1.5+2.5i, 7.5+5.5i)},
			"c128[2] [(-4.0, 7.5), (26.0, 82.5)]"},
		{"div", ir.OpDiv, nil, nil, []*backend.Buffer{cbuf(c128(1), 1+2i), cbuf(c128(1), 3+4i)},
			"c128[1] [(0.44, 0.08)]"},
		{"sqrt of -1 is i, of 3+4i is 2+i", ir.OpSqrt, nil, nil, []*backend.Buffer{cbuf(c128(2), -1, 3+4i)},
			"c128[2] [(0.0, 1.0), (2.0, 1.0)]"},
		{"rsqrt", ir.OpRsqrt, nil, nil, []*backend.Buffer{cbuf(c128(2), -1, 3+4i)},
			"c128[2] [(0.0, -1.0), (0.4, -0.2)]"},
		{"sign: NaN in either part, zero, unit", ir.OpSign, nil, nil,
			[]*backend.Buffer{cbuf(c128(4), complex(nan, 0), complex(0, nan), complex(negZero, 0), 3+4i)},
			"c128[4] [(nan, nan), (nan, nan), (-0.0, 0.0), (0.6, 0.8)]"},
		{"log1p near 0 keeps the digits", ir.OpLog1p, nil, nil, []*backend.Buffer{cbuf(c128(2), 1e-20+1e-20i, 0)},
			"c128[2] [(1e-20, 1e-20), (0.0, 0.0)]"},
		{"expm1 near 0 keeps the digits", ir.OpExpm1, nil, nil, []*backend.Buffer{cbuf(c128(2), 1e-20+1e-20i, 0)},
			"c128[2] [(1e-20, 1e-20), (0.0, 0.0)]"},
		{"cbrt: principal root, 0 stays 0", ir.OpCbrt, nil, nil, []*backend.Buffer{cbuf(c128(2), -8, 0)},
			"c128[2] [(1.0000000000000002, 1.7320508075688772), (0.0, 0.0)]"},
		{"abs is the modulus, inf beats NaN", ir.OpAbs, nil, nil, []*backend.Buffer{cbuf(c64(2), 3+4i, complex(inf, nan))},
			"f32[2] [5.0, inf]"},
		{"real", ir.OpReal, nil, nil, []*backend.Buffer{cbuf(c128(2), 1+2i, complex(negZero, 3))}, "f64[2] [1.0, -0.0]"},
		{"imag", ir.OpImag, nil, nil, []*backend.Buffer{cbuf(c64(2), 1+2i, complex(3, negZero))}, "f32[2] [2.0, -0.0]"},
		{"complex", ir.OpComplex, nil, nil, []*backend.Buffer{backend.FromFloats(f64(2), 1, nan), backend.FromFloats(f64(2), negZero, 4)},
			"c128[2] [(1.0, -0.0), (nan, 4.0)]"},
		{"eq: -0 equals +0, NaN in either part never equal", ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpEQ}, nil,
			[]*backend.Buffer{cbuf(c128(3), complex(negZero, 0), complex(nan, 0), 2+2i), cbuf(c128(3), 0, complex(nan, 0), 2+1i)},
			"i1[3] [true, false, false]"},
		{"ne", ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpNE}, nil,
			[]*backend.Buffer{cbuf(c128(3), complex(negZero, 0), complex(0, nan), 2+2i), cbuf(c128(3), 0, complex(0, nan), 2+1i)},
			"i1[3] [false, true, true]"},
		{"convert to i1 keeps the real part", ir.OpConvert, nil, []ir.Type{i1(3)}, []*backend.Buffer{cbuf(c128(3), -1, 1i, 1)},
			"i1[3] [true, false, true]"},
		{"convert to i32 truncates the real part", ir.OpConvert, nil, []ir.Type{i32(2)}, []*backend.Buffer{cbuf(c64(2), -1.5+9i, 2.5)},
			"i32[2] [-1, 2]"},
		{"convert from i32 and f64", ir.OpConvert, nil, []ir.Type{c64(2)}, []*backend.Buffer{backend.FromInts(i32(2), 16777217, -3)},
			"c64[2] [(1.6777216e+07, 0.0), (-3.0, 0.0)]"},
		{"convert c128 to c64 rounds both parts", ir.OpConvert, nil, []ir.Type{c64(1)}, []*backend.Buffer{cbuf(c128(1), complex(0.1, 1e300))},
			"c64[1] [(0.1, inf)]"},
		{"reduce_sum", ir.OpReduceSum, &ir.AxesAttr{Axes: []int64{1}}, nil, []*backend.Buffer{cbuf(c128(2, 2), 1+1i, 2-3i, 1i, 0.5)},
			"c128[2] [(3.0, -2.0), (0.5, 1.0)]"},
		{"reduce_prod", ir.OpReduceProd, &ir.AxesAttr{Axes: []int64{0, 1}}, nil, []*backend.Buffer{cbuf(c64(2, 2), 1i, 1i, 2, 3)},
			"c64[] (-6.0, 0.0)"},
		{"dot_general: no conjugation", ir.OpDotGeneral, &ir.DotAttr{LhsContract: []int64{1}, RhsContract: []int64{0}}, nil,
			[]*backend.Buffer{cbuf(c128(2, 2), 1+1i, 2, 0, 1i), cbuf(c128(2, 2), 1, 1i, 2, -1)},
			"c128[2,2] [[(5.0, 1.0), (-3.0, 1.0)], [(0.0, 2.0), (0.0, -1.0)]]"},
		{"transpose moves 16-byte elements", ir.OpTranspose, &ir.PermAttr{Perm: []int64{1, 0}}, nil,
			[]*backend.Buffer{cbuf(c128(2, 2), 1, 2i, 3, 4i)}, "c128[2,2] [[(1.0, 0.0), (3.0, 0.0)], [(0.0, 2.0), (0.0, 4.0)]]"},
	}
	for _, c := range cases {
		got, err := runOp(c.op, c.attr, c.hint, c.args...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if s := got[0].String(); s != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, s, c.want)
		}
	}
}

// TestComplexAtan2: atan2(y, x) = -i*log((x+iy)/sqrt(x^2+y^2)) is the angle
// of (x, y) for real operands (the interpreter suite's case) and satisfies
// tan(atan2(y, x)) = y/x for complex ones. The sign of a zero imaginary part
// is whatever complex128 arithmetic gives: not asserted.
func TestComplexAtan2(t *testing.T) {
	y := cbuf(c128(3), 1, -1, 1+2i)
	x := cbuf(c128(3), 0, 0, 3-1i)
	got, err := runOp(ir.OpAtan2, nil, nil, y, x)
	if err != nil {
		t.Fatal(err)
	}
	r := got[0]
	if r.Complex128At(0) != complex(math.Pi/2, 0) || r.Complex128At(1) != complex(-math.Pi/2, 0) {
		t.Errorf("atan2(+-1, 0) = %v, %v; want +-pi/2", r.Complex128At(0), r.Complex128At(1))
	}
	if d := cmplx.Abs(cmplx.Tan(r.Complex128At(2)) - (1+2i)/(3-1i)); d > 1e-15 {
		t.Errorf("tan(atan2(1+2i, 3-i)) is %v away from (1+2i)/(3-i)", d)
	}
}
