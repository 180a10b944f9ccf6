package tensor

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Data in and out. A concrete tensor holds a *backend.Buffer: its elements
// in their own dtype (f32 in 4 bytes, bf16 and f16 in 2, i1 in 1), the same
// buffer the executor computes on and the runtime passes, so nothing is
// converted between them. FromSlice wraps a Go slice without copying it and
// Buffer hands out the storage itself; the accessors (Float32s, Int64s, ...)
// copy, so that tensors stay immutable.

// FromSlice makes a tensor of the given shape over data, without copying: the
// dtype follows from T (float32 f32, float64 f64, bool i1, int8 i8, int16
// i16, int32 i32, int64 i64, uint8 u8, uint32 u32; for f16 and bf16, Convert
// an f32 tensor). Tensors are immutable, so data must not be modified
// afterwards: to keep using it, pass a copy (FromSlice(slices.Clone(data),
// shape...)). A length that does not fill the shape panics.
func FromSlice[T backend.Element](data []T, shape ...int64) *Tensor {
	t := shapeType("from_slice", backend.DTypeOf[T](), shape)
	if want, _ := t.NumElements(); int64(len(data)) != want {
		fail("from_slice", []ir.Type{t}, "%d values for shape %s, which holds %d", len(data), shapeString(shape), want)
	}
	b, err := backend.FromSlice(data, shape...)
	if err != nil {
		fail("from_slice", []ir.Type{t}, "%v", err)
	}
	return &Tensor{c: b}
}

// Int32s returns the elements in row-major order as int32, for the dtypes
// whose every value fits (i1, i8, i16, i32, u8). A float, i64 or u32 tensor
// panics: use Int64s, or convert it first.
func (t *Tensor) Int32s() []int32 {
	t.concrete("int32s")
	switch dt := t.c.Type().DType; dt {
	case ir.I32:
		return append([]int32{}, backend.Elems[int32](t.c)...)
	case ir.I1, ir.I8, ir.I16, ir.U8:
		out := make([]int32, t.c.Len())
		for i := range out {
			out[i] = int32(t.c.Int64At(i))
		}
		return out
	}
	fail("int32s", []ir.Type{t.c.Type()}, "the tensor is %s, whose values do not all fit in int32: use Int64s, or convert it first", t.c.Type())
	return nil
}

// ReadNPY reads a tensor from the .npy file at path (any dtype tpucc has;
// bf16 files say descr 'bfloat16', the name ml_dtypes gives it). The file's
// bytes become the tensor's storage without a conversion.
func ReadNPY(path string) (*Tensor, error) {
	b, err := backend.ReadNPYFile(path)
	if err != nil {
		return nil, err
	}
	return &Tensor{c: b}, nil
}

// WriteNPY writes a concrete tensor to path as np.save would (bf16 with descr
// 'bfloat16'), through a temporary file and a rename. A traced tensor panics.
func WriteNPY(path string, t *Tensor) error {
	t.concrete("write_npy")
	return backend.WriteNPYFile(path, t.c)
}
