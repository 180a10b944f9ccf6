package backend

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/tpucc/tpucc/ir"
)

// TestNativeSizes: every dtype takes its own size per element, end to end
// from New, FromFloats and FromSlice.
func TestNativeSizes(t *testing.T) {
	for _, dt := range ir.DTypes {
		b := New(ty(dt, 3, 5))
		if got, want := len(b.Bytes()), 15*dt.Size(); got != want || cap(b.Bytes()) != want {
			t.Errorf("%s: %d bytes (cap %d), want %d", dt, got, cap(b.Bytes()), want)
		}
		if got := FromFloats(ty(dt, 7), 1); len(got.Bytes()) != 7*dt.Size() || got.Len() != 7 {
			t.Errorf("%s: FromFloats holds %d bytes for 7 elements", dt, len(got.Bytes()))
		}
	}
	sizes := map[string]int{"f32": 4, "bf16": 2, "f16": 2, "i1": 1, "f64": 8, "u8": 1}
	for name, size := range sizes {
		dt, _ := ir.ParseDType(name)
		if dt.Size() != size {
			t.Errorf("%s is %d bytes, want %d", name, dt.Size(), size)
		}
	}
}

// TestFromSliceShares: FromSlice and Elems are views, not copies.
func TestFromSliceShares(t *testing.T) {
	data := []float32{1, 2, 3, 4, 5, 6}
	b, err := FromSlice(data, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != "f32[2,3] [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]" {
		t.Errorf("got %s", b)
	}
	if unsafe.SliceData(b.Bytes()) != (*byte)(unsafe.Pointer(&data[0])) || &b.Float32s()[0] != &data[0] {
		t.Error("FromSlice copied its data")
	}
	data[4] = -1
	if b.Float64At(4) != -1 {
		t.Error("a write to the slice is not seen through the buffer")
	}
	bs, _ := FromSlice([]bool{true, false, true}, 3)
	if bs.Type().String() != "i1[3]" || !bytes.Equal(bs.Bytes(), []byte{1, 0, 1}) {
		t.Errorf("bool slice: %s % x", bs, bs.Bytes())
	}
	u, _ := FromSlice([]uint32{4294967295}, 1)
	if u.Int64At(0) != 4294967295 || Elems[uint32](u)[0] != 4294967295 {
		t.Errorf("u32: %s", u)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(FromSlice([]int8{1, 2, 3}, 2, 2)), "3 elements for i8[2,2], which holds 4"},
		{second(FromSlice([]int64{}, -1)), "shape [-1] has a negative dimension"},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("got %v, want %s", c.err, c.want)
		}
	}
	defer func() {
		if r := recover(); r == nil || r != "backend.Elems: the buffer is f32[2,3], not f64" {
			t.Errorf("Elems with the wrong type: %v", r)
		}
	}()
	Elems[float64](b)
}

func second(_ *Buffer, err error) error { return err }

// TestElementAccess: element reads and writes convert as the convert op.
func TestElementAccess(t *testing.T) {
	b := New(ty(ir.BF16, 4))
	b.SetFloat64(0, 1.00390625) // halfway between bf16 1 and 1.0078125: to even
	b.SetFloat64(1, math.Inf(-1))
	b.SetInt64(2, 16842753) // through f32: 16777216
	b.SetFloat64(3, math.Copysign(0, -1))
	if got := b.String(); got != "bf16[4] [1.0, -inf, 1.68e+07, -0.0]" {
		t.Errorf("bf16: %s", got)
	}
	if !bytes.Equal(b.Bytes(), []byte{0x80, 0x3f, 0x80, 0xff, 0x80, 0x4b, 0x00, 0x80}) {
		t.Errorf("bf16 bytes % x", b.Bytes())
	}
	i := New(ty(ir.I16, 3))
	i.SetInt64(0, 40000)        // wraps
	i.SetFloat64(1, -1e9)       // saturates
	i.SetFloat64(2, math.NaN()) // 0
	if i.Int64At(0) != 40000-65536 || i.Int64At(1) != math.MinInt16 || i.Int64At(2) != 0 {
		t.Errorf("i16: %s", i)
	}
	f := FromFloats(ty(ir.F32, 2), -2.9, 3e10)
	if f.Int64At(0) != -2 || f.Int64At(1) != 30000001024 {
		t.Errorf("f32 read as int64: %d %d", f.Int64At(0), f.Int64At(1))
	}
	// Chunked reads and writes agree with the element ones, for every dtype.
	for _, dt := range ir.DTypes {
		x := FromInts(ty(dt, 5), 0, 1, -3, 7, 100)
		fs, is := make([]float64, 3), make([]int64, 3)
		x.ReadFloat64s(1, fs)
		x.ReadInt64s(2, is)
		for k := range 3 {
			if math.Float64bits(fs[k]) != math.Float64bits(x.Float64At(1+k)) || is[k] != x.Int64At(2+k) { // bits: f8e8m0fnu holds NaN
				t.Errorf("%s: chunk reads %v %v differ from element reads", dt, fs, is)
			}
		}
		y, z := New(x.Type()), New(x.Type())
		y.WriteFloat64s(1, []float64{-0.5, 2.5e9, 1e300})
		for k, v := range []float64{-0.5, 2.5e9, 1e300} {
			z.SetFloat64(1+k, v)
		}
		y.WriteInt64s(4, []int64{-70000})
		z.SetInt64(4, -70000)
		same(t, dt.String()+" chunk writes", y, z)
	}
}

func TestViewChecks(t *testing.T) {
	words := make([]uint64, 2)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 16)
	for _, c := range []struct {
		t    ir.Type
		data []byte
		want string
	}{
		{ty(ir.F32, 3), raw[:8], "8 bytes for f32[3], want 12"},
		{ty(ir.F32, 2), raw[2:10], "data for f32[2] is not aligned to 4 bytes"},
		{ty(ir.I1, 2), []byte{1, 2}, "i1 element 1 is the byte 2, want 0 or 1"},
		{ir.Type{DType: ir.F32, Shape: []ir.Dim{{Sym: "B"}}}, nil, "f32[B] is not a static type of reasonable size"},
	} {
		if _, err := View(c.t, c.data); err == nil || err.Error() != c.want {
			t.Errorf("View(%s): got %v, want %s", c.t, err, c.want)
		}
	}
	v, err := View(ty(ir.U8, 16), raw)
	if err != nil || unsafe.SliceData(v.Bytes()) != &raw[0] {
		t.Errorf("View copied or failed: %v", err)
	}
	c := v.Clone()
	c.Bytes()[0] = 9
	if raw[0] != 0 || c.Equal(v) {
		t.Error("Clone shares storage")
	}
}

func TestMapFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.bin")
	content := []byte("header!!") // 8 bytes, then 3 f32 and a trailer
	for _, v := range []float32{1.5, -2, 1e-3} {
		content = binary.LittleEndian.AppendUint32(content, math.Float32bits(v))
	}
	content = append(content, "tail"...)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	b, unmap, err := MapFile(path, 8, ty(ir.F32, 3))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Float32s(); got[0] != 1.5 || got[1] != -2 || got[2] != float32(1e-3) {
		t.Errorf("mapped %v", got)
	}
	if err := unmap(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path   string
		offset int64
		t      ir.Type
		want   string
	}{
		{path, 6, ty(ir.F32, 1), path + ": offset 6 is not a non-negative multiple of 4 for f32[1]"},
		{path, 16, ty(ir.F32, 3), path + ": f32[3] needs 12 bytes at offset 16, the file has 24"},
		{path, 40, ty(ir.U8), path + ": u8[] needs 1 bytes at offset 40, the file has 24"},
		{dir, 0, ty(ir.U8), "mmap " + dir + ": not a regular file"},
		{filepath.Join(dir, "none"), 0, ty(ir.U8), "open " + filepath.Join(dir, "none") + ": no such file or directory"},
	} {
		if _, _, err := MapFile(c.path, c.offset, c.t); err == nil || err.Error() != c.want {
			t.Errorf("MapFile(%d, %s): got %v, want %s", c.offset, c.t, err, c.want)
		}
	}
	if e, unmap, err := MapFile(path, 24, ty(ir.F32, 0)); err != nil || e.Len() != 0 || unmap() != nil {
		t.Errorf("empty mapping: %v", err)
	}
}

func TestNPYFiles(t *testing.T) {
	dir := t.TempDir()
	x := FromFloats(ty(ir.BF16, 2, 2), 1, -2, 0.5, 3)
	path := filepath.Join(dir, "x.npy")
	if err := WriteNPYFile(path, x); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "'descr': 'bfloat16'") {
		t.Errorf("bf16 header: %q", data[:64])
	}
	y, err := ReadNPYFile(path)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "file round trip", y, x)
	// An i1 byte other than 0 reads as true.
	var buf bytes.Buffer
	if err := WriteNPY(&buf, FromInts(ty(ir.I1, 3), 1, 0, 1)); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	raw[len(raw)-1] = 7
	b, err := ReadNPY(bytes.NewReader(raw))
	if err != nil || !bytes.Equal(b.Bytes(), []byte{1, 0, 1}) {
		t.Errorf("i1 byte 7: %v %v", b, err)
	}
	for _, c := range []struct {
		path, want string
	}{
		{dir, "read " + dir + ": is a directory"},
		{filepath.Join(dir, "none.npy"), "open " + filepath.Join(dir, "none.npy") + ": no such file or directory"},
	} {
		if _, err := ReadNPYFile(c.path); err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
	if _, err := ReadNPY(strings.NewReader("\x93NUMPY\x01\x00")); err == nil || err.Error() != "npy: truncated: file ends inside the header length" {
		t.Errorf("truncated: %v", err)
	}
}

// FuzzReadNPY: no input crashes the public reader, and what it accepts
// writes back to a file it reads the same.
func FuzzReadNPY(f *testing.F) {
	for _, x := range []*Buffer{FromFloats(ty(ir.F32, 2), 1, 2), FromInts(ty(ir.I1, 2), 1, 0), FromFloats(ty(ir.BF16), 3)} {
		var buf bytes.Buffer
		if err := WriteNPY(&buf, x); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ReadNPY(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteNPY(&buf, b); err != nil {
			t.Fatalf("%s read but does not write: %v", b.Type(), err)
		}
		c, err := ReadNPY(&buf)
		if err != nil || !c.Equal(b) {
			t.Fatalf("%s does not read back: %v", b.Type(), err)
		}
	})
}

// TestComplexElements: c64 and c128 store (re, im) pairs as numpy does;
// real reads see the real part, real writes set the imaginary part to 0,
// c64 rounds both parts to f32.
func TestComplexElements(t *testing.T) {
	c, err := FromSlice([]complex64{complex(1.5, -2), complex(float32(math.Inf(1)), 0.25)}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.String(); got != "c64[2] [(1.5, -2.0), (inf, 0.25)]" {
		t.Errorf("c64 buffer: %s", got)
	}
	if got := binary.LittleEndian.Uint32(c.Bytes()[4:]); got != math.Float32bits(-2) {
		t.Errorf("the imaginary part of element 0 is stored as %#x, want -2's bits", got)
	}
	if c.Float64At(0) != 1.5 || c.Int64At(0) != 1 {
		t.Errorf("real reads of (1.5, -2): %v %v", c.Float64At(0), c.Int64At(0))
	}
	d := New(ty(ir.C128, 3))
	d.SetFloat64(0, -0.5)
	d.SetInt64(1, 7)
	d.SetComplex128(2, complex(0.1, 1e300))
	if got := d.String(); got != "c128[3] [(-0.5, 0.0), (7.0, 0.0), (0.1, 1e+300)]" {
		t.Errorf("c128 buffer: %s", got)
	}
	s := New(ty(ir.C64, 1))
	s.WriteComplex128s(0, []complex128{complex(0.1, 1e300)})
	if got := s.Complex128At(0); got != complex(float64(float32(0.1)), math.Inf(1)) {
		t.Errorf("c64 rounding: %v", got)
	}
	if Elems[complex128](d)[2] != complex(0.1, 1e300) || DTypeOf[complex64]() != ir.C64 {
		t.Error("typed views of complex buffers")
	}
}
