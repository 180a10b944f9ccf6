package npy

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tpucc/tpucc/ir"
)

// Native is the Go element types that map one to one onto a dtype. f16 and bf16 have no
// Go type: build those with OfBits and read them with Bits or Float64s. Nor do i2, i4, u2
// and u4: their Data are a byte an element, the value in the low bits (ml_dtypes' form).
type Native interface {
	float32 | float64 | bool | int8 | int16 | int32 | int64 | uint8 | uint32 | uint16 | uint64 | complex64 | complex128
}

func nativeDType[T Native]() string {
	var z T
	switch any(z).(type) {
	case float32:
		return "f32"
	case float64:
		return "f64"
	case bool:
		return "i1"
	case int8:
		return "i8"
	case int16:
		return "i16"
	case int32:
		return "i32"
	case int64:
		return "i64"
	case uint8:
		return "u8"
	case complex64:
		return "c64"
	case complex128:
		return "c128"
	case uint16:
		return "u16"
	case uint64:
		return "u64"
	default: // uint32
		return "u32"
	}
}

// Of builds an array of shape from values in C order. A length that does not match the
// shape is a programming error and panics.
func Of[T Native](shape []int64, values []T) *Array {
	a := &Array{DType: nativeDType[T](), Shape: append([]int64{}, shape...)}
	if a.NumElements() != int64(len(values)) {
		panic(fmt.Sprintf("npy.Of: %d values for shape %s", len(values), shapeRepr(shape)))
	}
	a.Data = make([]byte, 0, len(values)*ItemSize(a.DType))
	for _, v := range values {
		switch v := any(v).(type) {
		case float32:
			a.Data = binary.LittleEndian.AppendUint32(a.Data, math.Float32bits(v))
		case float64:
			a.Data = binary.LittleEndian.AppendUint64(a.Data, math.Float64bits(v))
		case bool:
			b := byte(0)
			if v {
				b = 1
			}
			a.Data = append(a.Data, b)
		case int8:
			a.Data = append(a.Data, byte(v))
		case int16:
			a.Data = binary.LittleEndian.AppendUint16(a.Data, uint16(v))
		case int32:
			a.Data = binary.LittleEndian.AppendUint32(a.Data, uint32(v))
		case int64:
			a.Data = binary.LittleEndian.AppendUint64(a.Data, uint64(v))
		case uint8:
			a.Data = append(a.Data, v)
		case uint32:
			a.Data = binary.LittleEndian.AppendUint32(a.Data, v)
		case complex64:
			a.Data = binary.LittleEndian.AppendUint32(a.Data, math.Float32bits(real(v)))
			a.Data = binary.LittleEndian.AppendUint32(a.Data, math.Float32bits(imag(v)))
		case complex128:
			a.Data = binary.LittleEndian.AppendUint64(a.Data, math.Float64bits(real(v)))
			a.Data = binary.LittleEndian.AppendUint64(a.Data, math.Float64bits(imag(v)))
		case uint16:
			a.Data = binary.LittleEndian.AppendUint16(a.Data, v)
		case uint64:
			a.Data = binary.LittleEndian.AppendUint64(a.Data, v)
		}
	}
	return a
}

// Values returns the elements of a, which must have T's dtype, in C order.
func Values[T Native](a *Array) ([]T, error) {
	want := nativeDType[T]()
	if a.DType != want {
		return nil, fmt.Errorf("npy: array is %s, not %s", a, want)
	}
	size := ItemSize(want)
	if len(a.Data)%size != 0 {
		return nil, fmt.Errorf("npy: %s has %d bytes of data, not a multiple of %d", a, len(a.Data), size)
	}
	out := make([]T, len(a.Data)/size)
	for i := range out {
		b := a.Data[i*size:]
		var v any
		switch want {
		case "f32":
			v = math.Float32frombits(binary.LittleEndian.Uint32(b))
		case "f64":
			v = math.Float64frombits(binary.LittleEndian.Uint64(b))
		case "i1":
			v = b[0] != 0
		case "i8":
			v = int8(b[0])
		case "i16":
			v = int16(binary.LittleEndian.Uint16(b))
		case "i32":
			v = int32(binary.LittleEndian.Uint32(b))
		case "i64":
			v = int64(binary.LittleEndian.Uint64(b))
		case "u8":
			v = b[0]
		case "u32":
			v = binary.LittleEndian.Uint32(b)
		case "c64":
			v = complex(math.Float32frombits(binary.LittleEndian.Uint32(b)), math.Float32frombits(binary.LittleEndian.Uint32(b[4:])))
		case "c128":
			v = complex(math.Float64frombits(binary.LittleEndian.Uint64(b)), math.Float64frombits(binary.LittleEndian.Uint64(b[8:])))
		case "u16":
			v = binary.LittleEndian.Uint16(b)
		case "u64":
			v = binary.LittleEndian.Uint64(b)
		}
		out[i] = v.(T)
	}
	return out, nil
}

// OfBits builds an f16 or bf16 array from the elements' bit patterns.
func OfBits(dtype string, shape []int64, bits []uint16) *Array {
	if dtype != "f16" && dtype != "bf16" {
		panic("npy.OfBits: dtype " + dtype + " is not f16 or bf16")
	}
	a := &Array{DType: dtype, Shape: append([]int64{}, shape...)}
	if a.NumElements() != int64(len(bits)) {
		panic(fmt.Sprintf("npy.OfBits: %d values for shape %s", len(bits), shapeRepr(shape)))
	}
	for _, v := range bits {
		a.Data = binary.LittleEndian.AppendUint16(a.Data, v)
	}
	return a
}

// Float64s returns every element of a, whatever its dtype, as a float64 (exact for all
// dtypes but i64 beyond 2^53). It is what comparisons against the oracle want.
func Float64s(a *Array) ([]float64, error) {
	size := ItemSize(a.DType)
	if size == 0 {
		return nil, fmt.Errorf("npy: unsupported dtype %q", a.DType)
	}
	if len(a.Data)%size != 0 {
		return nil, fmt.Errorf("npy: %s has %d bytes of data, not a multiple of %d", a, len(a.Data), size)
	}
	out := make([]float64, len(a.Data)/size)
	for i := range out {
		b := a.Data[i*size:]
		switch a.DType {
		case "f32":
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		case "f16":
			out[i] = float64(ir.F16ToFloat32(binary.LittleEndian.Uint16(b)))
		case "bf16":
			out[i] = float64(ir.BF16ToFloat32(binary.LittleEndian.Uint16(b)))
		case "f64":
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
		case "i1", "u8", "u2", "u4":
			out[i] = float64(b[0])
		case "i2":
			out[i] = float64(int8(b[0]<<6) >> 6)
		case "i4":
			out[i] = float64(int8(b[0]<<4) >> 4)
		case "u16":
			out[i] = float64(binary.LittleEndian.Uint16(b))
		case "u64":
			out[i] = float64(binary.LittleEndian.Uint64(b))
		case "i8":
			out[i] = float64(int8(b[0]))
		case "i16":
			out[i] = float64(int16(binary.LittleEndian.Uint16(b)))
		case "i32":
			out[i] = float64(int32(binary.LittleEndian.Uint32(b)))
		case "i64":
			out[i] = float64(int64(binary.LittleEndian.Uint64(b)))
		case "u32":
			out[i] = float64(binary.LittleEndian.Uint32(b))
		default:
			if dt, ok := ir.ParseDType(a.DType); ok && dt.IsNarrowFloat() {
				out[i] = dt.NarrowFromBits(b[0])
			}
		}
	}
	return out, nil
}
