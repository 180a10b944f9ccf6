package ir

import (
	"math"
	"strings"
	"testing"
)

func TestBuildPrintMLP(t *testing.T) {
	m := NewModule("mlp.tir")
	f := m.NewFunc("mlp", []string{"x", "w"}, []Type{Tensor(F32, 4, 8), Tensor(F32, 8, 2)}, []Type{Tensor(F32, 4, 2)}, Pos{})
	b := NewBuilder(f)
	h := b.Op1(OpDotGeneral, &DotAttr{LhsContract: []int64{1}, RhsContract: []int64{0}}, f.Params[0], f.Params[1])
	h.Name = "h"
	a := b.Op1(OpRelu, nil, h)
	b.Return(a)
	if err := Verify(m); err != nil {
		t.Fatal(err)
	}
	want := `func @mlp(%x: f32[4,8], %w: f32[8,2]) -> f32[4,2] {
  %h = dot_general %x, %w {lhs_batch=[], lhs_contract=[1], rhs_batch=[], rhs_contract=[0]} : f32[4,2]
  %0 = relu %h : f32[4,2]
  return %0
}
`
	if got := Print(m); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestVerifyReportsAll(t *testing.T) {
	m := NewModule("bad.tir")
	f := m.NewFunc("f", []string{"x"}, []Type{Tensor(F32, 2)}, []Type{Tensor(I32, 2)}, Pos{File: "bad.tir", Line: 1, Col: 1})
	in := f.NewInstr(OpExp, nil, []*Value{f.Params[0]}, []Type{Tensor(F32, 3)}, Pos{File: "bad.tir", Line: 2, Col: 3})
	f.Body.Append(in)
	ret := f.NewInstr(OpReturn, nil, []*Value{in.Result()}, nil, Pos{File: "bad.tir", Line: 3, Col: 3})
	f.Body.Append(ret)
	err := Verify(m)
	want := "bad.tir:2:3: error: result type f32[3] of exp does not match the inferred f32[2]\n" +
		"bad.tir:3:3: error: result 0 of @f is f32[3], but its signature says i32[2]"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestConstantPrint(t *testing.T) {
	m := NewModule("")
	f := m.NewFunc("c", nil, nil, []Type{Tensor(F32, 2, 2), Tensor(I1, 3), Scalar(BF16)}, Pos{})
	b := NewBuilder(f)
	x := b.Const(Tensor(F32, 2, 2), 1, 2, 3, 4.5)
	y := b.Typed(OpConstant, &ConstAttr{Value: NewIntLiteral(Tensor(I1, 3), []int64{1, 0, 1})}, &Type{DType: I1, Shape: []Dim{D(3)}})
	z := b.Const(Scalar(BF16), 0.1)
	b.Return(x, y, z)
	got := Print(m)
	for _, line := range []string{
		"%0 = constant [[1.0, 2.0], [3.0, 4.5]] : f32[2,2]",
		"%1 = constant [true, false, true] : i1[3]",
		"%2 = constant 0.1 : bf16[]",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("missing %q in\n%s", line, got)
		}
	}
}

// Values sharing a kept name get the first free suffix, in print order, and
// a source name that looks like a suffix keeps its place.
func TestPrintRepeatedNames(t *testing.T) {
	m := NewModule("")
	f := m.NewFunc("f", []string{"x"}, []Type{Tensor(F32, 2)}, []Type{Tensor(F32, 2)}, Pos{})
	b := NewBuilder(f)
	v := f.Params[0]
	for _, name := range []string{"a", "a", "a_1", "a", "a"} {
		v = b.Op1(OpNeg, nil, v)
		v.Name = name
	}
	b.Return(v)
	want := `func @f(%x: f32[2]) -> f32[2] {
  %a = neg %x : f32[2]
  %a_1 = neg %a : f32[2]
  %a_1_1 = neg %a_1 : f32[2]
  %a_2 = neg %a_1_1 : f32[2]
  %a_3 = neg %a_2 : f32[2]
  return %a_3
}
`
	if got := Print(m); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestComplexLiteral: complex literals splat, compare by bits, spell as
// (re, im) in the part type, and take integers with one rounding to the
// part type (int64 to f32 directly: 2^60+2^36+1 is 2^60+2^37 in f32, but
// 2^60 through f64 first).
func TestComplexLiteral(t *testing.T) {
	l := &Literal{Complex: []complex128{complex(1.5, -2)}}
	if l.Len() != 1 || l.ComplexAt(3) != complex(1.5, -2) || l.Float(2) != 1.5 || l.Int(0) != 1 {
		t.Errorf("splat reads: %d %v %v %v", l.Len(), l.ComplexAt(3), l.Float(2), l.Int(0))
	}
	nan1 := &Literal{Complex: []complex128{complex(0, math.NaN())}}
	nan2 := &Literal{Complex: []complex128{complex(0, math.Float64frombits(0x7FF8000000000002))}}
	if !nan1.Equal(nan1) || nan1.Equal(nan2) || nan1.Equal(&Literal{Floats: []float64{0}}) {
		t.Error("Equal must compare complex elements by bits")
	}
	if got := FormatComplex(complex(0.1, math.Inf(-1)), C64); got != "(0.1, -inf)" {
		t.Errorf("FormatComplex c64: %s", got)
	}
	if got := FormatComplex(complex(0.1, math.Copysign(0, -1)), C128); got != "(0.1, -0.0)" {
		t.Errorf("FormatComplex c128: %s", got)
	}
	v := int64(1)<<60 + 1<<36 + 1
	if got := NewIntLiteral(Tensor(C64), []int64{v}).ComplexAt(0); got != complex(float64(float32(v)), 0) || real(got) != float64(int64(1)<<60+1<<37) {
		t.Errorf("NewIntLiteral c64: %v", got)
	}
	if got := NewLiteral(Tensor(C64, 2), []float64{0.1}).Complex; len(got) != 1 || got[0] != complex(float64(float32(0.1)), 0) {
		t.Errorf("NewLiteral c64 rounds to f32: %v", got)
	}
}
