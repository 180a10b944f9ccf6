package backend

import (
	"fmt"
	"unsafe"

	"github.com/tpucc/tpucc/ir"
)

// Buffer is a dense, row-major tensor whose elements are stored in their own
// dtype: f32 as 4 little-endian bytes, f16 and bf16 as their 2-byte bit
// patterns, i1 as one byte holding 0 or 1, integers in two's complement of
// their width. Its length in bytes is always the type's element count times
// the dtype's size, and its storage is aligned for the dtype, so that typed
// views (Elems) are always possible without copying. A Buffer may be a view of
// memory it does not own (a Go slice, a memory-mapped file); kernels never
// modify their operands.
type Buffer struct {
	typ  ir.Type
	data []byte
	// dev is set for a buffer whose storage is on a device (OnDevice) or
	// that was donated to a call (Donate); nil for a plain host buffer. A
	// plain pointer, not an atomic, so that Bytes stays inlinable: Donate
	// must not race with other uses of the buffer (docs/PJRT.md).
	dev *deviceState
}

// New returns a zero-filled buffer of the static type t. A symbolic type is a
// programming error and panics.
func New(t ir.Type) *Buffer {
	n := byteSize(t)
	return &Buffer{typ: t, data: AlignedBytes(n)}
}

// Alignment is the address alignment of AlignedBytes: a cache line, and
// the least at which XLA:CPU reads host memory in place rather than copying
// it (the PJRT backend lends such arguments to the plugin).
const Alignment = 64

// AlignedBytes allocates n zero bytes starting at a multiple of Alignment
// (a []byte of a few bytes may start at any address), at the cost of at most
// Alignment-8 bytes more.
func AlignedBytes(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+Alignment-8+7)/8)
	base := unsafe.Pointer(unsafe.SliceData(words))
	off := (Alignment - uintptr(base)%Alignment) % Alignment
	return unsafe.Slice((*byte)(unsafe.Add(base, off)), n)
}

// View returns a buffer of type t over data, without copying. len(data) must
// be exactly t's size in bytes, data must start at an address aligned for
// t's dtype (memory from make and from mmap is), and i1 data must hold only
// the bytes 0 and 1 (View reads them to make sure).
func View(t ir.Type, data []byte) (*Buffer, error) {
	n, ok := t.NumElements()
	if !ok || !t.IsStatic() || t.DType.Size() == 0 {
		return nil, fmt.Errorf("%s is not a static type of reasonable size", t)
	}
	if want := n * int64(t.DType.Size()); int64(len(data)) != want {
		return nil, fmt.Errorf("%d bytes for %s, want %d", len(data), t, want)
	}
	if len(data) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(data)))%uintptr(t.DType.Size()) != 0 {
		return nil, fmt.Errorf("data for %s is not aligned to %d bytes", t, t.DType.Size())
	}
	if t.DType == ir.I1 {
		for i, c := range data {
			if c > 1 {
				return nil, fmt.Errorf("i1 element %d is the byte %d, want 0 or 1", i, c)
			}
		}
	}
	return &Buffer{typ: t, data: data}, nil
}

// byteSize is t's size in bytes; a symbolic or overflowing type panics.
func byteSize(t ir.Type) int {
	n, ok := t.NumElements()
	if !ok || !t.IsStatic() || t.DType.Size() == 0 {
		panic(fmt.Sprintf("backend.New: %s is not a static type of reasonable size", t))
	}
	size := n * int64(t.DType.Size())
	if size/int64(t.DType.Size()) != n || int64(int(size)) != size {
		panic(fmt.Sprintf("backend.New: %s does not fit in memory", t))
	}
	return int(size)
}

// Type is the buffer's type.
func (b *Buffer) Type() ir.Type { return b.typ }

// Bytes is the buffer's storage (not a copy). A device buffer's is copied
// to the host on the first read; a donated buffer has none and panics.
func (b *Buffer) Bytes() []byte {
	if b.dev == nil {
		return b.data
	}
	return b.dev.bytes(b.typ)
}

// Len is the number of elements.
func (b *Buffer) Len() int {
	if b.typ.DType.Size() == 0 { // the zero Buffer
		return 0
	}
	if b.dev != nil {
		return byteLen(b.typ) / b.typ.DType.Size()
	}
	return len(b.data) / b.typ.DType.Size()
}
