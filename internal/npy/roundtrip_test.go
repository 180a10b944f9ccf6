package npy

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// want builds the values testdata/gen.py writes: element k is (k-2)*1.5 for floats, k-2 for
// signed integers, k for unsigned ones (wrapping) and k%2 == 0 for bool.
func want(dtype string, shape []int64) *Array {
	n := int(product(shape))
	switch dtype {
	case "f32":
		return Of(shape, gen(n, func(k int) float32 { return float32(k-2) * 1.5 }))
	case "f64":
		return Of(shape, gen(n, func(k int) float64 { return float64(k-2) * 1.5 }))
	case "f16":
		// (k-2)*1.5 for k < 6 as IEEE half bit patterns.
		f16 := []uint16{0xc200, 0xbe00, 0x0000, 0x3e00, 0x4200, 0x4480}
		return OfBits("f16", shape, f16[:n])
	case "bf16":
		return OfBits("bf16", shape, gen(n, func(k int) uint16 { return ir.Float32ToBF16(float32(k-2) * 1.5) }))
	case "i1":
		return Of(shape, gen(n, func(k int) bool { return k%2 == 0 }))
	case "i8":
		return Of(shape, gen(n, func(k int) int8 { return int8(k - 2) }))
	case "i16":
		return Of(shape, gen(n, func(k int) int16 { return int16(k - 2) }))
	case "i32":
		return Of(shape, gen(n, func(k int) int32 { return int32(k - 2) }))
	case "i64":
		return Of(shape, gen(n, func(k int) int64 { return int64(k - 2) }))
	case "u8":
		return Of(shape, gen(n, func(k int) uint8 { return uint8(k) }))
	case "u32":
		return Of(shape, gen(n, func(k int) uint32 { return uint32(k) }))
	case "c64":
		return Of(shape, gen(n, func(k int) complex64 { return complex(float32(k-2)*1.5, float32(k)*0.5) }))
	case "c128":
		return Of(shape, gen(n, func(k int) complex128 { return complex(float64(k-2)*1.5, float64(k)*0.5) }))
	case "u16":
		return Of(shape, gen(n, func(k int) uint16 { return uint16(k) }))
	case "u64":
		return Of(shape, gen(n, func(k int) uint64 { return uint64(k) }))
	case "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e4m3", "f8e3m4", "f8e8m0fnu",
		"f6e2m3fn", "f6e3m2fn", "f4e2m1fn":
		// (k-2)*1.5 rounded into the type: a code a byte.
		dt, _ := ir.ParseDType(dtype)
		return &Array{DType: dtype, Shape: shape, Data: gen(n, func(k int) byte { return dt.NarrowToBits(float64(k-2) * 1.5) })}
	case "i2", "i4", "u2", "u4":
		// A byte each, the low bits of k-2 (signed) or k (unsigned), wrapped as ml_dtypes stores them.
		dt, _ := ir.ParseDType(dtype)
		mask := 1<<dt.Bits() - 1
		return &Array{DType: dtype, Shape: shape, Data: gen(n, func(k int) byte {
			if dt.IsSigned() {
				return byte((k - 2) & mask)
			}
			return byte(k & mask)
		})}
	}
	panic(dtype)
}

func gen[T any](n int, f func(int) T) []T {
	out := make([]T, n)
	for k := range out {
		out[k] = f(k)
	}
	return out
}

func product(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// TestNumpyFixtures reads every file numpy wrote, checks it against the values gen.py
// used, and checks that Write gives back the very same bytes.
func TestNumpyFixtures(t *testing.T) {
	cases := []struct {
		file  string
		dtype string
		shape []int64
		same  bool // Write reproduces the file byte for byte
	}{
		{"f32_scalar.npy", "f32", []int64{}, true},
		{"i1_scalar.npy", "i1", []int64{}, true},
		{"bf16_scalar.npy", "bf16", []int64{}, true},
		{"f32_0x3.npy", "f32", []int64{0, 3}, true},
		{"i64_1x2x1x3.npy", "i64", []int64{1, 2, 1, 3}, true},
		{"u8_1000.npy", "u8", []int64{1000}, true},
		{"i32_2x3_v2.npy", "i32", []int64{2, 3}, false}, // version 2.0; Write uses 1.0
	}
	for _, d := range DTypes() {
		cases = append(cases, struct {
			file  string
			dtype string
			shape []int64
			same  bool
		}{d + "_2x3.npy", d, []int64{2, 3}, true})
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", c.file)
			a, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			w := want(c.dtype, c.shape)
			if a.DType != w.DType || !slices.Equal(a.Shape, w.Shape) || !bytes.Equal(a.Data, w.Data) {
				t.Fatalf("read %s %x, want %s %x", a, a.Data, w, w.Data)
			}
			var buf bytes.Buffer
			if err := Write(&buf, a); err != nil {
				t.Fatal(err)
			}
			file, _ := os.ReadFile(path)
			if c.same && !bytes.Equal(buf.Bytes(), file) {
				t.Errorf("Write differs from numpy's file:\n got %q\nwant %q", buf.Bytes(), file)
			}
			b, err := Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != a.String() || !bytes.Equal(b.Data, a.Data) {
				t.Errorf("round trip: got %s, want %s", b, a)
			}
		})
	}
}

func TestRefusedFixtures(t *testing.T) {
	cases := []struct{ file, err string }{
		{"bad_fortran.npy", "testdata/bad_fortran.npy: fortran_order arrays are not supported (save np.ascontiguousarray(a) instead)"},
		{"bad_bigendian.npy", `testdata/bad_bigendian.npy: unsupported dtype ">f4": big-endian data (use a.astype(a.dtype.newbyteorder('<')))`},
		{"bad_c32.npy", `testdata/bad_c32.npy: unsupported dtype "<c32"`},
		{"bad_bf16_mldtypes.npy", `testdata/bad_bf16_mldtypes.npy: unsupported dtype "<V2": np.save of an ml_dtypes.bfloat16 array writes this; tpucc's bf16 files use descr 'bfloat16' (see package npy)`},
		{"bad_structured.npy", `testdata/bad_structured.npy: bad header: unsupported dtype [('a', '<f4'), ('b', '<i4')] (structured arrays are not carried)`},
	}
	for _, c := range cases {
		_, err := ReadFile(filepath.Join("testdata", c.file))
		if err == nil || err.Error() != c.err {
			t.Errorf("%s:\n got %v\nwant %s", c.file, err, c.err)
		}
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.npy")
	a := Of([]int64{2}, []float32{1, 2})
	if err := WriteFile(path, a); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := Values[float32](b); !slices.Equal(got, []float32{1, 2}) {
		t.Errorf("got %v", got)
	}
	// A bad array leaves the old file in place and no temporary behind.
	bad := &Array{DType: "f32", Shape: []int64{3}, Data: make([]byte, 8)}
	if err := WriteFile(path, bad); err == nil || err.Error() != path+": f32[3] needs 12 bytes of data, has 8" {
		t.Errorf("WriteFile(bad) = %v", err)
	}
	if _, err := ReadFile(path); err != nil {
		t.Errorf("old file damaged: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %d entries, want 1", len(entries))
	}
}

func TestReadSequence(t *testing.T) {
	var buf bytes.Buffer
	first := Of([]int64{3}, []int32{1, 2, 3})
	second := Of([]int64{}, []bool{true})
	for _, a := range []*Array{first, second} {
		if err := Write(&buf, a); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range []*Array{first, second} {
		a, err := Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if a.String() != w.String() || !bytes.Equal(a.Data, w.Data) {
			t.Errorf("got %s %x, want %s %x", a, a.Data, w, w.Data)
		}
	}
}

func TestValues(t *testing.T) {
	a := Of([]int64{2, 2}, []int16{-1, 2, -3, 4})
	if got, err := Values[int16](a); err != nil || !slices.Equal(got, []int16{-1, 2, -3, 4}) {
		t.Errorf("Values = %v, %v", got, err)
	}
	if _, err := Values[int32](a); err == nil || err.Error() != "npy: array is i16[2,2], not i32" {
		t.Errorf("Values[int32] err = %v", err)
	}
	f, err := Float64s(OfBits("bf16", []int64{3}, []uint16{0x3f80, 0xc020, 0x7f80}))
	if err != nil || !slices.Equal(f[:2], []float64{1, -2.5}) || f[2] <= 1e38 {
		t.Errorf("Float64s(bf16) = %v, %v", f, err)
	}
	f, _ = Float64s(OfBits("f16", []int64{4}, []uint16{0x3c00, 0xc100, 0x0001, 0x7bff}))
	if !slices.Equal(f, []float64{1, -2.5, 0x1p-24, 65504}) {
		t.Errorf("Float64s(f16) = %v", f)
	}
	for _, c := range []struct {
		in   float32
		want uint16
	}{{1, 0x3f80}, {1.00390625, 0x3f80}, {1.01171875, 0x3f82}, {-2.5, 0xc020}} {
		if got := ir.Float32ToBF16(c.in); got != c.want {
			t.Errorf("Float32ToBF16(%v) = %#x, want %#x", c.in, got, c.want)
		}
	}
}
