package cpu

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Getting tensors in: deterministic random inputs. Reading and writing .npy
// files is backend.ReadNPY and backend.WriteNPY.

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
func RandomInputs(f *ir.Func, seed int64) []*backend.Buffer { return RandomInputsWithin(f, seed, nil) }

// RandomInputsWithin is RandomInputs with the floats of parameter i drawn from
// [-lims[i], lims[i]) (InputLimits chooses them for tpucc run); nil lims draw
// every parameter from [-2, 2), as RandomInputs does. Integers and i1 are
// drawn as RandomInputs draws them, whatever lims says.
func RandomInputsWithin(f *ir.Func, seed int64, lims []float64) []*backend.Buffer {
	out := make([]*backend.Buffer, len(f.Params))
	for i, p := range f.Params {
		t := p.Type
		n, ok := t.NumElements()
		if !ok || !t.IsStatic() || mulBytes(n, int64(t.DType.Size())) > DefaultMemoryLimit() {
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
// lim is drawn again), complex numbers with both parts drawn so, signed
// integers uniform in [-8, 8], unsigned ones in [0, 16], i1 uniform in {0, 1}. The same state, type and lim always give the
// same values.
func RandomTensor(t ir.Type, state uint64, lim float64) *backend.Buffer {
	g := splitMix(state)
	g.next() // decorrelate nearby seeds
	x := backend.New(t)
	dt := t.DType
	for k := range x.Len() {
		switch {
		case dt.IsFloatValued():
			x.SetFloat64(k, drawFloat(&g, dt, lim))
		case dt.IsComplex(): // both parts as floats of the part type are drawn
			p := dt.ComplexPart()
			re, im := drawFloat(&g, p, lim), drawFloat(&g, p, lim)
			x.SetComplex128(k, complex(re, im))
		case dt.IsSigned():
			x.SetInt64(k, int64(g.next()%17)-8)
		case dt.IsUnsigned():
			x.SetInt64(k, int64(g.next()%17))
		default: // i1
			x.SetInt64(k, int64(g.next()>>63))
		}
	}
	return x
}

// drawFloat draws one float of dtype dt uniform in [-lim, lim), as
// RandomTensor draws float elements.
func drawFloat(g *splitMix, dt ir.DType, lim float64) float64 {
	for {
		if v := dt.RoundFloat(-lim + 2*lim*g.float()); v < lim {
			return v
		}
	}
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
