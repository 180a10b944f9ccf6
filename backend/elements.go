package backend

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/tpucc/tpucc/ir"
)

// Element is the Go types that hold one dtype's elements exactly as a Buffer
// stores them: float32 is f32, float64 f64, bool i1, int8 i8, int16 i16,
// int32 i32, int64 i64, uint8 u8, uint32 u32, uint16 u16, uint64 u64,
// complex64 c64, complex128 c128 (the real part first, as numpy stores
// them). f16 and bf16 have no Go type: their elements are 16-bit patterns,
// read with Float64At or through Bytes. Nor do i2, i4, u2 and u4, held one
// element a byte in its low bits (as ml_dtypes' int4 holds them): Int64At
// reads them.
//
// The typed views reinterpret the storage in the host's byte order, which is
// the Buffer's little-endian order on every platform Go runs tpucc on (amd64,
// arm64, riscv64, ...). A big-endian host would need copies here.
type Element interface {
	float32 | float64 | bool | int8 | int16 | int32 | int64 | uint8 | uint32 | uint16 | uint64 | complex64 | complex128
}

// DTypeOf is the dtype whose elements T holds.
func DTypeOf[T Element]() ir.DType {
	var z T
	switch any(z).(type) {
	case float32:
		return ir.F32
	case float64:
		return ir.F64
	case bool:
		return ir.I1
	case int8:
		return ir.I8
	case int16:
		return ir.I16
	case int32:
		return ir.I32
	case int64:
		return ir.I64
	case uint8:
		return ir.U8
	case complex64:
		return ir.C64
	case complex128:
		return ir.C128
	case uint16:
		return ir.U16
	case uint64:
		return ir.U64
	}
	return ir.U32
}

// FromSlice returns a buffer of dtype DTypeOf[T] and shape dims over s's
// memory, without copying: the buffer and s share their elements, so s must
// not be modified while the buffer is in use. len(s) must be the shape's
// element count.
func FromSlice[T Element](s []T, dims ...int64) (*Buffer, error) {
	for _, d := range dims {
		if d < 0 {
			return nil, fmt.Errorf("shape %v has a negative dimension", dims)
		}
	}
	t := ir.Tensor(DTypeOf[T](), dims...)
	n, ok := t.NumElements()
	if !ok || n != int64(len(s)) {
		return nil, fmt.Errorf("%d elements for %s, which holds %d", len(s), t, n)
	}
	var z T
	data := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
	return &Buffer{typ: t, data: data}, nil
}

// Elems returns b's elements as a []T over b's storage, without copying:
// writing to it writes the buffer (never do so to a buffer that is a kernel's
// operand, a tensor's data or a read-only mapping). b's dtype must be
// DTypeOf[T]; another dtype is a programming error and panics, as a failed
// type assertion does.
func Elems[T Element](b *Buffer) []T {
	if dt := DTypeOf[T](); b.typ.DType != dt {
		panic(fmt.Sprintf("backend.Elems: the buffer is %s, not %s", b.typ, dt))
	}
	return elems[T](b.Bytes())
}

// elems reinterprets aligned storage as elements of T.
func elems[T any](data []byte) []T {
	var z T
	n := len(data) / int(unsafe.Sizeof(z))
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(data))), n)
}

// Float32s is Elems[float32](b): the elements of an f32 buffer, not copied.
func (b *Buffer) Float32s() []float32 { return Elems[float32](b) }

// Float64At returns element i as a float64: float elements exactly, integer
// and i1 elements as their value, complex elements as their real part (what
// convert keeps of them).
func (b *Buffer) Float64At(i int) float64 {
	switch d := b.Bytes(); b.typ.DType {
	case ir.C64, ir.C128:
		return real(b.Complex128At(i))
	case ir.F32:
		return float64(elems[float32](d)[i])
	case ir.F64:
		return elems[float64](d)[i]
	case ir.F16:
		return float64(ir.F16ToFloat32(elems[uint16](d)[i]))
	case ir.BF16:
		return float64(ir.BF16ToFloat32(elems[uint16](d)[i]))
	case ir.U64:
		return float64(elems[uint64](d)[i])
	}
	if b.typ.DType.IsNarrowFloat() {
		return b.typ.DType.NarrowFromBits(b.Bytes()[i])
	}
	return float64(b.Int64At(i))
}

// Int64At returns element i of an integer or i1 buffer as an int64
// (unsigned ones as non-negative numbers, but for u64, whose bit pattern it
// returns: 2^64-1 is -1); a float element is converted as the convert op
// converts to i64.
func (b *Buffer) Int64At(i int) int64 {
	switch d := b.Bytes(); b.typ.DType {
	case ir.I1, ir.U8, ir.U2, ir.U4:
		return int64(d[i])
	case ir.I8:
		return int64(int8(d[i]))
	case ir.I2, ir.I4:
		return b.typ.DType.WrapInt(int64(d[i]))
	case ir.U16:
		return int64(elems[uint16](d)[i])
	case ir.U64:
		return elems[int64](d)[i]
	case ir.I16:
		return int64(elems[int16](d)[i])
	case ir.I32:
		return int64(elems[int32](d)[i])
	case ir.U32:
		return int64(elems[uint32](d)[i])
	case ir.I64:
		return elems[int64](d)[i]
	case ir.F32, ir.F64, ir.F16, ir.BF16, ir.C64, ir.C128:
		return floatToInt(b.Float64At(i), ir.I64)
	}
	if b.typ.DType.IsNarrowFloat() {
		return floatToInt(b.Float64At(i), ir.I64)
	}
	panic(fmt.Sprintf("backend: a %s buffer has no elements", b.typ))
}

// SetFloat64 stores v as element i, brought into the dtype as the convert op
// would: rounded for floats (ir.DType.RoundFloat), truncated and saturated
// for integers, != 0 for i1.
func (b *Buffer) SetFloat64(i int, v float64) {
	switch d := b.Bytes(); b.typ.DType {
	case ir.F32:
		elems[float32](d)[i] = float32(v)
	case ir.F64:
		elems[float64](d)[i] = v
	case ir.F16:
		elems[uint16](d)[i] = ir.Float32ToF16(float32(v))
	case ir.BF16:
		elems[uint16](d)[i] = ir.Float32ToBF16(float32(v))
	case ir.C64, ir.C128:
		b.SetComplex128(i, complex(v, 0))
	case ir.F8E4M3FN, ir.F8E5M2, ir.F8E4M3FNUZ, ir.F8E5M2FNUZ, ir.F8E4M3B11FNUZ, ir.F8E4M3, ir.F8E3M4,
		ir.F8E8M0FNU, ir.F6E2M3FN, ir.F6E3M2FN, ir.F4E2M1FN:
		d[i] = b.typ.DType.NarrowToBits(v)
	default:
		b.setInt(i, floatToInt(v, b.typ.DType))
	}
}

// Complex128At returns element i as a complex128: a complex element
// exactly, a real one as Float64At reads it with imaginary part 0.
func (b *Buffer) Complex128At(i int) complex128 {
	switch d := b.Bytes(); b.typ.DType {
	case ir.C64:
		return complex128(elems[complex64](d)[i])
	case ir.C128:
		return elems[complex128](d)[i]
	}
	return complex(b.Float64At(i), 0)
}

// SetComplex128 stores v as element i: both parts rounded for c64; a real
// dtype takes the real part, as SetFloat64 stores it.
func (b *Buffer) SetComplex128(i int, v complex128) {
	switch d := b.Bytes(); b.typ.DType {
	case ir.C64:
		elems[complex64](d)[i] = complex64(v)
	case ir.C128:
		elems[complex128](d)[i] = v
	default:
		b.SetFloat64(i, real(v))
	}
}

// SetInt64 stores v as element i: wrapped into an integer dtype, != 0 for
// i1, converted as the convert op does for a float dtype.
func (b *Buffer) SetInt64(i int, v int64) {
	if dt := b.typ.DType; dt.IsFloatValued() || dt.IsComplex() {
		b.SetFloat64(i, intToFloat(v, dt.ComplexPart()))
		return
	}
	b.setInt(i, v)
}

// setInt stores v into an integer or i1 buffer, keeping its low bits (!= 0
// for i1).
func (b *Buffer) setInt(i int, v int64) {
	switch d := b.Bytes(); b.typ.DType {
	case ir.I1:
		d[i] = 0
		if v != 0 {
			d[i] = 1
		}
	case ir.I8, ir.U8:
		d[i] = byte(v)
	case ir.I16, ir.U16:
		elems[uint16](d)[i] = uint16(v)
	case ir.I32, ir.U32:
		elems[uint32](d)[i] = uint32(v)
	case ir.I64, ir.U64:
		elems[int64](d)[i] = v
	case ir.I2, ir.I4, ir.U2, ir.U4:
		d[i] = byte(v) & byte(1<<b.typ.DType.Bits()-1)
	}
}

// floatToInt converts as XLA:CPU does (checked against jax 0.10.2): NaN is 0,
// other values truncate toward zero and saturate at the dtype's range; to i1
// means != 0 (so NaN is true).
func floatToInt(v float64, dt ir.DType) int64 {
	if dt.IsBool() {
		if v != 0 {
			return 1
		}
		return 0
	}
	if math.IsNaN(v) {
		return 0
	}
	if dt == ir.U64 {
		return floatToU64(v)
	}
	lo, hi := dt.IntRange()
	v = math.Trunc(v)
	switch {
	case v <= float64(lo):
		return lo
	case v >= float64(hi): // for i64, float64(hi) is 2^63, itself out of range
		return hi
	}
	return int64(v)
}

// floatToU64 truncates and saturates v to [0, 2^64-1], returned as the bit
// pattern u64 values are held in.
func floatToU64(v float64) int64 {
	switch v = math.Trunc(v); {
	case v <= 0:
		return 0
	case v >= 1<<64:
		return -1
	}
	return int64(uint64(v))
}

// U64ToFloat converts the u64 element with bit pattern v to a float dtype,
// rounded once (as uitofp is), not through float64 and then f32.
func U64ToFloat(v int64, dt ir.DType) float64 {
	if dt == ir.F64 {
		return float64(uint64(v))
	}
	return dt.RoundFloat(float64(float32(uint64(v))))
}

// intToFloat converts an integer element to a float dtype. For f32, f16 and
// bf16 the value goes through f32 first (one correct rounding to f32, then to
// the narrower type), which is what XLA:CPU does: i32 16842753 becomes bf16
// 16777216, not 16908288.
func intToFloat(v int64, dt ir.DType) float64 {
	if dt == ir.F64 {
		return float64(v)
	}
	return dt.RoundFloat(float64(float32(v)))
}

// Word is the unsigned integers as wide as some dtype's elements, and a pair
// of uint64 for c128's 16 bytes.
type Word interface {
	uint8 | uint16 | uint32 | uint64 | [2]uint64
}

// Words returns b's elements as raw bit patterns, a []W over b's storage
// without copying, for kernels that move elements without computing on them
// (gathers, pads, copies). W must be as wide as b's dtype; another width is
// a programming error and panics.
func Words[W Word](b *Buffer) []W {
	var z W
	if int(unsafe.Sizeof(z)) != b.typ.DType.Size() {
		panic(fmt.Sprintf("backend.Words: %s elements are not %d bytes wide", b.typ.DType, unsafe.Sizeof(z)))
	}
	return elems[W](b.Bytes())
}
