package backend

import (
	"bytes"
	"math"
	"testing"
	"unsafe"

	"github.com/tpucc/tpucc/ir"
)

func ty(dt ir.DType, d ...int64) ir.Type { return ir.Tensor(dt, d...) }

// same compares exactly: types, then bytes (so -0 and +0 differ).
func same(t *testing.T, what string, got, want *Buffer) {
	t.Helper()
	if !got.Type().Equal(want.Type()) || !got.Equal(want) {
		t.Errorf("%s: got %s (% x), want %s (% x)", what, got, got.Bytes(), want, want.Bytes())
	}
}

func TestNPY(t *testing.T) {
	for _, x := range []*Buffer{
		FromFloats(ty(ir.F32, 2), 1, -0.1),
		FromFloats(ty(ir.F64), math.Pi),
		FromFloats(ty(ir.F16, 3), 65504, math.Inf(-1), 5.960464477539063e-08),
		FromFloats(ty(ir.BF16, 2, 1), 1, -3.140625),
		FromInts(ty(ir.I1, 3), 1, 0, 1),
		FromInts(ty(ir.I8, 2), -128, 127),
		FromInts(ty(ir.I16, 1), -2),
		FromInts(ty(ir.I32, 2), math.MinInt32, 5),
		FromInts(ty(ir.I64, 1), math.MinInt64),
		FromInts(ty(ir.U8, 2), 0, 255),
		FromInts(ty(ir.U32, 1), 4294967295),
		FromInts(ty(ir.U8, 0, 3)),
	} {
		var buf bytes.Buffer
		if err := WriteNPY(&buf, x); err != nil {
			t.Fatalf("%s: %v", x.Type(), err)
		}
		y, err := ReadNPY(&buf)
		if err != nil {
			t.Fatalf("%s: %v", x.Type(), err)
		}
		same(t, "round trip", y, x)
	}
	// Exact bytes: f32 1.0, bf16 1.0 and -2.0, f16 1.0, bool, i16.
	for _, c := range []struct {
		x    *Buffer
		want []byte
	}{
		{FromFloats(ty(ir.F32, 1), 1), []byte{0, 0, 0x80, 0x3f}},
		{FromFloats(ty(ir.BF16, 2), 1, -2), []byte{0x80, 0x3f, 0x00, 0xc0}},
		{FromFloats(ty(ir.F16, 1), 1), []byte{0x00, 0x3c}},
		{FromInts(ty(ir.I1, 2), 1, 0), []byte{1, 0}},
		{FromInts(ty(ir.I16, 1), -2), []byte{0xfe, 0xff}},
	} {
		if got := c.x.Bytes(); !bytes.Equal(got, c.want) {
			t.Errorf("%s: data % x, want % x", c.x.Type(), got, c.want)
		}
	}
}

func TestString(t *testing.T) {
	for _, c := range []struct {
		x    *Buffer
		want string
	}{
		{FromFloats(ty(ir.F32, 2, 2), 1, 2, 3, 4.5), "f32[2,2] [[1.0, 2.0], [3.0, 4.5]]"},
		{FromInts(ty(ir.I1, 3), 1, 0, 1), "i1[3] [true, false, true]"},
		{FromFloats(ty(ir.BF16), 0.1), "bf16[] 0.1"},
		{FromInts(ty(ir.I32, 0)), "i32[0] []"},
		{FromInts(ty(ir.U32, 2), -1, 7), "u32[2] [4294967295, 7]"},
		{&Buffer{}, "invalid[] <malformed>"},
	} {
		if got := c.x.String(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

// TestConstructors: values enter a dtype as the convert op brings them.
func TestConstructors(t *testing.T) {
	same(t, "f64 to i8", FromFloats(ty(ir.I8, 4), 300, -2.5, math.NaN(), 1), FromInts(ty(ir.I8, 4), 127, -2, 0, 1))
	same(t, "i64 to bf16 through f32", FromInts(ty(ir.BF16, 2), 257, 16842753), FromFloats(ty(ir.BF16, 2), 256, 16777216))
	r := float64(float32(0.1))
	same(t, "splat", FromFloats(ty(ir.F32, 2, 2), 0.1), FromFloats(ty(ir.F32, 2, 2), r, r, r, r))
	same(t, "wrap", FromInts(ty(ir.U8, 3), 256, -1, 300), FromInts(ty(ir.U8, 3), 0, 255, 44))
	same(t, "to i1", FromFloats(ty(ir.I1, 4), 0, math.Copysign(0, -1), -0.5, math.NaN()), FromInts(ty(ir.I1, 4), 0, 0, 1, 1))
}

// TestAlignedBytes: every size starts at a multiple of Alignment, has its
// length and is zero.
func TestAlignedBytes(t *testing.T) {
	for n := 1; n <= 3*Alignment; n++ {
		b := AlignedBytes(n)
		if len(b) != n || uintptr(unsafe.Pointer(&b[0]))%Alignment != 0 {
			t.Fatalf("AlignedBytes(%d): len %d at %p", n, len(b), &b[0])
		}
		for i, c := range b {
			if c != 0 {
				t.Fatalf("AlignedBytes(%d)[%d] = %d", n, i, c)
			}
		}
	}
	if b := AlignedBytes(0); b == nil || len(b) != 0 {
		t.Errorf("AlignedBytes(0) = %#v, want an empty slice", b)
	}
}
