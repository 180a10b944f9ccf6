package backend

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// Reading and writing runs of elements, for kernels that compute in float64
// or int64: a kernel reads a chunk of each operand into a small scratch
// slice, computes, and writes the chunk into its result, which rounds (or
// wraps) it into the dtype. No tensor is ever held whole in float64.

// ReadFloat64s fills dst with elements i, i+1, ... as Float64At reads them.
func (b *Buffer) ReadFloat64s(i int, dst []float64) {
	switch d := b.Bytes(); b.typ.DType {
	case ir.F32:
		convertRun(dst, elems[float32](d)[i:], func(v float32) float64 { return float64(v) })
	case ir.F64:
		copy(dst, elems[float64](d)[i:i+len(dst)])
	case ir.BF16:
		convertRun(dst, elems[uint16](d)[i:], func(v uint16) float64 { return float64(ir.BF16ToFloat32(v)) })
	default:
		readEach(dst, i, b.Float64At)
	}
}

// WriteFloat64s stores src as elements i, i+1, ... as SetFloat64 does.
func (b *Buffer) WriteFloat64s(i int, src []float64) {
	switch d := b.Bytes(); b.typ.DType {
	case ir.F32:
		convertRun(elems[float32](d)[i:i+len(src)], src, func(v float64) float32 { return float32(v) })
	case ir.F64:
		copy(elems[float64](d)[i:], src)
	case ir.BF16:
		convertRun(elems[uint16](d)[i:i+len(src)], src, func(v float64) uint16 { return ir.Float32ToBF16(float32(v)) })
	default:
		writeEach(src, i, b.SetFloat64)
	}
}

// ReadInt64s fills dst with elements i, i+1, ... as Int64At reads them.
func (b *Buffer) ReadInt64s(i int, dst []int64) {
	switch d := b.Bytes(); b.typ.DType {
	case ir.I32:
		convertRun(dst, elems[int32](d)[i:], func(v int32) int64 { return int64(v) })
	case ir.I64:
		copy(dst, elems[int64](d)[i:i+len(dst)])
	case ir.I1, ir.U8:
		convertRun(dst, d[i:], func(v byte) int64 { return int64(v) })
	default:
		readEach(dst, i, b.Int64At)
	}
}

// WriteInt64s stores src as elements i, i+1, ... as SetInt64 does.
func (b *Buffer) WriteInt64s(i int, src []int64) {
	switch d := b.Bytes(); b.typ.DType {
	case ir.I32:
		convertRun(elems[int32](d)[i:i+len(src)], src, func(v int64) int32 { return int32(v) })
	case ir.I64:
		copy(elems[int64](d)[i:], src)
	default:
		writeEach(src, i, b.SetInt64)
	}
}

// ReadComplex128s fills dst with elements i, i+1, ... as Complex128At reads them.
func (b *Buffer) ReadComplex128s(i int, dst []complex128) {
	switch d := b.Bytes(); b.typ.DType {
	case ir.C64:
		convertRun(dst, elems[complex64](d)[i:], func(v complex64) complex128 { return complex128(v) })
	case ir.C128:
		copy(dst, elems[complex128](d)[i:i+len(dst)])
	default:
		readEach(dst, i, b.Complex128At)
	}
}

// WriteComplex128s stores src as elements i, i+1, ... as SetComplex128 does.
func (b *Buffer) WriteComplex128s(i int, src []complex128) {
	switch d := b.Bytes(); b.typ.DType {
	case ir.C64:
		convertRun(elems[complex64](d)[i:i+len(src)], src, func(v complex128) complex64 { return complex64(v) })
	case ir.C128:
		copy(elems[complex128](d)[i:], src)
	default:
		writeEach(src, i, b.SetComplex128)
	}
}

// convertRun sets dst[k] = conv(src[k]) for every k of dst: the fast path of
// the four run functions above, for the dtypes whose storage is read directly.
func convertRun[S, D any](dst []D, src []S, conv func(S) D) {
	src = src[:len(dst)]
	for k, v := range src {
		dst[k] = conv(v)
	}
}

// readEach fills dst with at(i), at(i+1), ...: the slow path, element by element.
func readEach[T any](dst []T, i int, at func(int) T) {
	for k := range dst {
		dst[k] = at(i + k)
	}
}

// writeEach calls set(i+k, src[k]) for every k: the slow path of the writers.
func writeEach[T any](src []T, i int, set func(int, T)) {
	for k, v := range src {
		set(i+k, v)
	}
}

// FromFloats returns a buffer of type t holding vals in row-major order; one
// value is a splat over the whole type. Values are brought into the dtype as
// SetFloat64 does. A count that fits neither way panics.
func FromFloats(t ir.Type, vals ...float64) *Buffer {
	out := New(t)
	n := out.Len()
	if len(vals) != n && len(vals) != 1 {
		panic(fmt.Sprintf("backend.FromFloats: %d values for %s", len(vals), t))
	}
	for i := range n {
		out.SetFloat64(i, vals[min(i, len(vals)-1)])
	}
	return out
}

// FromInts is FromFloats for integer values, brought into the dtype as
// SetInt64 does.
func FromInts(t ir.Type, vals ...int64) *Buffer {
	out := New(t)
	n := out.Len()
	if len(vals) != n && len(vals) != 1 {
		panic(fmt.Sprintf("backend.FromInts: %d values for %s", len(vals), t))
	}
	for i := range n {
		out.SetInt64(i, vals[min(i, len(vals)-1)])
	}
	return out
}

// Clone returns a copy of b that shares no storage with it.
func (b *Buffer) Clone() *Buffer {
	out := New(b.typ)
	copy(out.data, b.Bytes())
	return out
}

// WithType returns a buffer of type t over b's storage (no copy): a reshape,
// or the same values with another layout. t must have b's dtype and element
// count; anything else panics.
func (b *Buffer) WithType(t ir.Type) *Buffer {
	if n, ok := t.NumElements(); !ok || t.DType != b.typ.DType || n != int64(b.Len()) {
		panic(fmt.Sprintf("backend.WithType: %s cannot hold the elements of %s", t, b.typ))
	}
	return &Buffer{typ: t, data: b.data, dev: b.dev}
}

// Equal reports whether a and b have the same dtype and shape (layouts
// aside) and the same elements bit for bit (so NaNs with the same payload
// are equal, and -0 differs from +0).
func (b *Buffer) Equal(o *Buffer) bool {
	if b == nil || o == nil {
		return b == o
	}
	return b.typ.DType == o.typ.DType && b.typ.SameShape(o.typ) && string(b.Bytes()) == string(o.Bytes())
}

// String writes the type and the elements as a nested list, as .tir spells a
// constant: f32[2,2] [[1.0, 2.0], [3.0, 4.5]].
func (b *Buffer) String() string {
	var sb strings.Builder
	sb.WriteString(b.typ.String())
	sb.WriteByte(' ')
	if d := b.Donated(); d != "" {
		sb.WriteString("<" + d + ">")
		return sb.String()
	}
	if byteLen(b.typ) != len(b.Bytes()) { // only the zero Buffer can be
		sb.WriteString("<malformed>")
		return sb.String()
	}
	elem := func(i int) string {
		switch dt := b.typ.DType; {
		case dt.IsComplex():
			return ir.FormatComplex(b.Complex128At(i), dt)
		case dt.IsFloat():
			return ir.FormatFloat(b.Float64At(i), dt)
		case dt.IsBool():
			return strconv.FormatBool(b.Bytes()[i] != 0)
		case dt == ir.U64: // Int64At gives the bit pattern
			return strconv.FormatUint(uint64(b.Int64At(i)), 10)
		}
		return strconv.FormatInt(b.Int64At(i), 10)
	}
	dims := b.typ.Dims()
	var rec func(d int, off int)
	rec = func(d int, off int) {
		if d == len(dims) {
			sb.WriteString(elem(off))
			return
		}
		stride := 1
		for _, n := range dims[d+1:] {
			stride *= int(n)
		}
		sb.WriteByte('[')
		for i := 0; i < int(dims[d]); i++ {
			if i > 0 {
				sb.WriteString(", ")
			}
			rec(d+1, off+i*stride)
		}
		sb.WriteByte(']')
	}
	rec(0, 0)
	return sb.String()
}
