package backend

import (
	"fmt"
	"io"

	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
)

// Buffers in .npy files: the format numpy's np.save and np.load use, and in
// which tpucc exchanges tensors with the XLA oracle and with `tpucc run`.
// Every dtype is carried; bf16 has no numpy dtype, so its files say descr
// 'bfloat16' (the name ml_dtypes registers: `import ml_dtypes` before np.load)
// and hold the raw 16-bit patterns. Fortran-order, big-endian and structured
// arrays are refused with an error, as is anything malformed or truncated.

// ReadNPY reads one .npy array from r, consuming exactly its bytes.
func ReadNPY(r io.Reader) (*Buffer, error) {
	a, err := npy.Read(r)
	if err != nil {
		return nil, err
	}
	return fromArray(a)
}

// ReadNPYFile reads the .npy file at path, which must be a regular file (a
// FIFO or a device could block or never end). Errors name the file: an
// *fs.PathError for what the file system says, else "path: reason" with the
// reason wrapped.
func ReadNPYFile(path string) (*Buffer, error) {
	a, err := npy.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b, err := fromArray(a)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// WriteNPY writes b to w as np.save would.
func WriteNPY(w io.Writer, b *Buffer) error { return npy.Write(w, toArray(b)) }

// WriteNPYFile writes b to path through a temporary file and a rename, so
// that path holds either the whole array or what it held before.
func WriteNPYFile(path string, b *Buffer) error { return npy.WriteFile(path, toArray(b)) }

// fromArray adopts an array's data as a buffer's storage: an i1 byte other
// than 0 becomes 1, a sub-byte element keeps its low bits (the bytes
// ml_dtypes' int4 and friends hold), and data that is not aligned for
// its dtype is copied.
func fromArray(a *npy.Array) (*Buffer, error) {
	dt, ok := ir.ParseDType(a.DType)
	if !ok {
		return nil, fmt.Errorf("npy array has unknown dtype %q", a.DType)
	}
	for _, d := range a.Shape {
		if d < 0 {
			return nil, fmt.Errorf("npy array %s has a negative dimension", a)
		}
	}
	t := ir.Tensor(dt, a.Shape...)
	if dt == ir.I1 {
		for i, c := range a.Data {
			if c > 1 {
				a.Data[i] = 1
			}
		}
	}
	if dt.IsSubByte() {
		for i, c := range a.Data {
			a.Data[i] = c & byte(1<<dt.Bits()-1)
		}
	}
	b, err := View(t, a.Data)
	if err != nil && len(a.Data) == byteLen(t) {
		b = New(t) // only alignment can have failed: copy into aligned storage
		copy(b.data, a.Data)
		return b, nil
	}
	return b, err
}

// byteLen is t's size in bytes, or -1 when it has none.
func byteLen(t ir.Type) int {
	n, ok := t.NumElements()
	if !ok || !t.IsStatic() || t.DType.Size() == 0 || n > int64(^uint(0)>>1)/int64(t.DType.Size()) {
		return -1
	}
	return int(n) * t.DType.Size()
}

// toArray shares b's storage with an npy.Array (which Write only reads).
func toArray(b *Buffer) *npy.Array {
	return &npy.Array{DType: b.typ.DType.String(), Shape: b.typ.Dims(), Data: b.Bytes()}
}
