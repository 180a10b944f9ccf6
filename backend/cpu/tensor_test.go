package cpu

import (
	"bytes"
	"math"
	"testing"

	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
)

func TestRandomInputs(t *testing.T) {
	m := ir.NewModule("")
	types := []ir.Type{f32(1000), bf16(1000), i8(1000), u32(1000), i1(1000), f64()}
	f := m.NewFunc("f", nil, types, nil, ir.Pos{})
	a, b := RandomInputs(f, 7), RandomInputs(f, 7)
	c := RandomInputs(f, 8)
	for i, x := range a {
		if !x.Type.Equal(types[i]) {
			t.Fatalf("input %d is %s, want %s", i, x.Type, types[i])
		}
		if diff(x, b[i]) != "" {
			t.Errorf("input %d differs between two draws with seed 7", i)
		}
		if x.Len() > 1 && diff(x, c[i]) == "" {
			t.Errorf("input %d is the same for seeds 7 and 8", i)
		}
	}
	in := func(x *Tensor, lo, hi float64, hiOpen bool) {
		seenLo, seenHi := false, false
		for k := 0; k < x.Len(); k++ {
			v := x.Float(k)
			if v < lo || v > hi || (hiOpen && v == hi) {
				t.Errorf("%s element %d = %v is outside [%v, %v]", x.Type, k, v, lo, hi)
				return
			}
			seenLo = seenLo || v == lo
			seenHi = seenHi || v == hi
		}
		if !hiOpen && (!seenLo || !seenHi) {
			t.Errorf("%s: 1000 draws never reached %v or %v", x.Type, lo, hi)
		}
	}
	in(a[0], -2, 2, true)
	in(a[1], -2, 2, true)
	in(a[2], -8, 8, false)
	in(a[3], 0, 16, false)
	in(a[4], 0, 1, false)
	for k, v := range a[1].F {
		if ir.BF16.RoundFloat(v) != v {
			t.Fatalf("bf16 element %d = %v is not a bf16 value", k, v)
		}
	}
	// A parameter's values do not depend on the other parameters' types.
	g := m.NewFunc("g", nil, []ir.Type{f32(1000), i32(5)}, nil, ir.Pos{})
	if d := RandomInputs(g, 7); diff(d[0], a[0]) != "" {
		t.Error("changing parameter 1 changed parameter 0's values")
	}
	// Symbolic shapes get nil.
	h := m.NewFunc("h", nil, []ir.Type{{DType: ir.F32, Shape: []ir.Dim{{Sym: "B"}}}}, nil, ir.Pos{})
	if d := RandomInputs(h, 1); d[0] != nil {
		t.Errorf("symbolic parameter got %s", d[0].Type)
	}
}

func TestNPY(t *testing.T) {
	for _, x := range []*Tensor{
		F(f32(2), 1, -0.1),
		F(f64(), math.Pi),
		F(f16(3), 65504, -inf, 5.960464477539063e-08),
		F(bf16(2, 1), 1, -3.140625),
		I(i1(3), 1, 0, 1),
		I(i8(2), -128, 127),
		I(i16(1), -2),
		I(i32(2), math.MinInt32, 5),
		I(i64(1), math.MinInt64),
		I(u8(2), 0, 255),
		I(u32(1), 4294967295),
		I(u8(0, 3)),
	} {
		a := x.NPY()
		var buf bytes.Buffer
		if err := npy.Write(&buf, a); err != nil {
			t.Fatalf("%s: %v", x.Type, err)
		}
		b, err := npy.Read(&buf)
		if err != nil {
			t.Fatalf("%s: %v", x.Type, err)
		}
		y, err := TensorFromNPY(b)
		if err != nil {
			t.Fatalf("%s: %v", x.Type, err)
		}
		if msg := diff(y, x); msg != "" {
			t.Errorf("round trip: %s", msg)
		}
	}
	// Exact bytes: f32 1.0, bf16 1.0 and -2.0, bool.
	for _, c := range []struct {
		x    *Tensor
		want []byte
	}{
		{F(f32(1), 1), []byte{0, 0, 0x80, 0x3f}},
		{F(bf16(2), 1, -2), []byte{0x80, 0x3f, 0x00, 0xc0}},
		{F(f16(1), 1), []byte{0x00, 0x3c}},
		{I(i1(2), 1, 0), []byte{1, 0}},
		{I(i16(1), -2), []byte{0xfe, 0xff}},
	} {
		if got := c.x.NPY().Data; !bytes.Equal(got, c.want) {
			t.Errorf("%s: data % x, want % x", c.x.Type, got, c.want)
		}
	}
	_, err := TensorFromNPY(&npy.Array{DType: "f32", Shape: []int64{2}, Data: []byte{0, 0, 0, 0}})
	if want := "npy array f32[2] has 4 bytes of data, want 2 elements of 4 bytes"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	_, err = TensorFromNPY(&npy.Array{DType: "c64", Shape: []int64{}})
	if want := `npy array has unknown dtype "c64"`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestTensorString(t *testing.T) {
	for _, c := range []struct {
		x    *Tensor
		want string
	}{
		{F(f32(2, 2), 1, 2, 3, 4.5), "f32[2,2] [[1.0, 2.0], [3.0, 4.5]]"},
		{I(i1(3), 1, 0, 1), "i1[3] [true, false, true]"},
		{F(bf16(), 0.1), "bf16[] 0.1"},
		{I(i32(0)), "i32[0] []"},
		{&Tensor{Type: f32(2)}, "f32[2] <malformed>"},
	} {
		if got := c.x.String(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestConstructors(t *testing.T) {
	if msg := diff(FromFloats(i8(4), 300, -2.5, nan, 1), I(i8(4), 127, -2, 0, 1)); msg != "" {
		t.Error(msg)
	}
	if msg := diff(FromInts(bf16(2), 257, 16842753), F(bf16(2), 256, 16777216)); msg != "" {
		t.Error(msg)
	}
	if msg := diff(FromFloats(f32(2, 2), 0.1), F(f32(2, 2), r32(0.1), r32(0.1), r32(0.1), r32(0.1))); msg != "" {
		t.Error(msg)
	}
}
