package cpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
)

// Getting tensors in and out: deterministic random inputs, and .npy arrays.

// TensorFromNPY converts an .npy array (raw little-endian data; bf16 and f16
// as their 16-bit patterns, i1 as one byte each) to a tensor. Floats are kept
// exactly (they are already values of their dtype); an i1 byte other than 0
// counts as 1.
func TensorFromNPY(a *npy.Array) (*Tensor, error) {
	dt, ok := ir.ParseDType(a.DType)
	if !ok {
		return nil, fmt.Errorf("npy array has unknown dtype %q", a.DType)
	}
	dims := make([]int64, len(a.Shape))
	for i, d := range a.Shape {
		if d < 0 {
			return nil, fmt.Errorf("npy array %s has a negative dimension", a)
		}
		dims[i] = d
	}
	t := ir.Tensor(dt, dims...)
	n, ok := t.NumElements()
	size := int64(dt.Size())
	if !ok || n > math.MaxInt64/size || int64(len(a.Data)) != n*size {
		return nil, fmt.Errorf("npy array %s has %d bytes of data, want %d elements of %d bytes", a, len(a.Data), n, size)
	}
	x := NewTensor(t)
	le := binary.LittleEndian
	d := a.Data
	for i := 0; i < int(n); i++ {
		switch dt {
		case ir.F32:
			x.F[i] = float64(math.Float32frombits(le.Uint32(d[4*i:])))
		case ir.F64:
			x.F[i] = math.Float64frombits(le.Uint64(d[8*i:]))
		case ir.F16:
			x.F[i] = float64(ir.F16ToFloat32(le.Uint16(d[2*i:])))
		case ir.BF16:
			x.F[i] = float64(ir.BF16ToFloat32(le.Uint16(d[2*i:])))
		case ir.I1:
			if d[i] != 0 {
				x.I[i] = 1
			}
		case ir.I8:
			x.I[i] = int64(int8(d[i]))
		case ir.U8:
			x.I[i] = int64(d[i])
		case ir.I16:
			x.I[i] = int64(int16(le.Uint16(d[2*i:])))
		case ir.I32:
			x.I[i] = int64(int32(le.Uint32(d[4*i:])))
		case ir.U32:
			x.I[i] = int64(le.Uint32(d[4*i:]))
		case ir.I64:
			x.I[i] = int64(le.Uint64(d[8*i:]))
		}
	}
	return x, nil
}

// NPY converts t to an .npy array. Float elements are narrowed exactly (they
// hold values of the dtype already); f16 and bf16 are written as bit patterns.
func (t *Tensor) NPY() *npy.Array {
	dt := t.Type.DType
	dims := t.Type.Dims()
	n := t.Len()
	a := &npy.Array{DType: dt.String(), Shape: dims, Data: make([]byte, 0, n*dt.Size())}
	le := binary.LittleEndian
	for i := 0; i < n; i++ {
		switch dt {
		case ir.F32:
			a.Data = le.AppendUint32(a.Data, math.Float32bits(float32(t.F[i])))
		case ir.F64:
			a.Data = le.AppendUint64(a.Data, math.Float64bits(t.F[i]))
		case ir.F16:
			a.Data = le.AppendUint16(a.Data, ir.Float32ToF16(float32(t.F[i])))
		case ir.BF16:
			a.Data = le.AppendUint16(a.Data, ir.Float32ToBF16(float32(t.F[i])))
		case ir.I1, ir.I8, ir.U8:
			a.Data = append(a.Data, byte(t.I[i]))
		case ir.I16:
			a.Data = le.AppendUint16(a.Data, uint16(t.I[i]))
		case ir.I32, ir.U32:
			a.Data = le.AppendUint32(a.Data, uint32(t.I[i]))
		case ir.I64:
			a.Data = le.AppendUint64(a.Data, uint64(t.I[i]))
		}
	}
	return a
}

// RandomInputs draws one argument per parameter of f, deterministically from
// seed: floats uniform in [-2, 2) rounded to the dtype (a draw that rounds up
// to 2 is drawn again), signed integers uniform in [-8, 8], unsigned ones in
// [0, 16], i1 uniform in {0, 1}. Parameters used as indices get plain integers
// too: the ops' semantics clamp or drop out-of-range indices. Each parameter
// has its own stream (from seed and its position), so changing one
// parameter's type does not change the others' values. The generator is
// SplitMix64, fixed here so that the values never change with the Go version.
// A parameter with a symbolic shape, or too large for DefaultMemoryLimit, gets
// nil, which Run then refuses.
func RandomInputs(f *ir.Func, seed int64) []*Tensor { return RandomInputsWithin(f, seed, nil) }

// RandomInputsWithin is RandomInputs with the floats of parameter i drawn from
// [-lims[i], lims[i]) (InputLimits chooses them for tpucc run); nil lims draw
// every parameter from [-2, 2), as RandomInputs does. Integers and i1 are
// drawn as RandomInputs draws them, whatever lims says.
func RandomInputsWithin(f *ir.Func, seed int64, lims []float64) []*Tensor {
	out := make([]*Tensor, len(f.Params))
	for i, p := range f.Params {
		t := p.Type
		n, ok := t.NumElements()
		if !ok || !t.IsStatic() || mulBytes(n, 8) > DefaultMemoryLimit() {
			continue
		}
		lim := float64(drawLimit)
		if lims != nil {
			lim = lims[i]
		}
		out[i] = RandomTensor(t, uint64(seed)^(uint64(i)+1)*0x9e3779b97f4a7c15, lim)
	}
	return out
}

// RandomTensor draws a tensor of the static type t from the generator state:
// floats uniform in [-lim, lim) rounded to the dtype (a draw that rounds up to
// lim is drawn again), signed integers uniform in [-8, 8], unsigned ones in
// [0, 16], i1 uniform in {0, 1}. The same state, type and lim always give the
// same values.
func RandomTensor(t ir.Type, state uint64, lim float64) *Tensor {
	g := splitMix(state)
	g.next() // decorrelate nearby seeds
	x := NewTensor(t)
	dt := t.DType
	for k := range x.Len() {
		switch {
		case dt.IsFloat():
			for {
				v := dt.RoundFloat(-lim + 2*lim*g.float())
				if v < lim {
					x.F[k] = v
					break
				}
			}
		case dt.IsSigned():
			x.I[k] = int64(g.next()%17) - 8
		case dt.IsUnsigned():
			x.I[k] = int64(g.next() % 17)
		default: // i1
			x.I[k] = int64(g.next() >> 63)
		}
	}
	return x
}

type splitMix uint64

func (s *splitMix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// float is uniform in [0, 1) with 53 random bits.
func (s *splitMix) float() float64 { return float64(s.next()>>11) / (1 << 53) }
