package cpu

import (
	"encoding/binary"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// rngKernel runs rng_bit_generator as XLA's expansion of it does, so that
// the bits agree with XLA:CPU's for every algorithm, type and shape.
func rngKernel(in *ir.Instr, state *backend.Buffer) []*backend.Buffer {
	s := make([]uint64, state.Len())
	for i := range s {
		s[i] = binary.LittleEndian.Uint64(state.Bytes()[8*i:])
	}
	newState, bits := backend.New(in.Results[0].Type), backend.New(in.Results[1].Type)
	w := writer{b: bits.Bytes(), size: bits.Type().DType.Bits() / 8}
	key := [2]uint32{uint32(s[0]), uint32(s[0] >> 32)}
	if in.Attr.(*ir.RngAttr).Algorithm == ir.RngThreeFry {
		s[1] = threeFryBits(key, s[1], bits.Type().Dims(), w)
	} else {
		philoxBits(key, s, int64(bits.Len()), w)
	}
	for i, v := range s {
		binary.LittleEndian.PutUint64(newState.Bytes()[8*i:], v)
	}
	return []*backend.Buffer{newState, bits}
}

// writer stores generated words as elements of size bytes: the word's low
// bytes, little-endian (XLA converts a 32-bit word to a narrower unsigned
// type, which keeps its low bits).
type writer struct {
	b    []byte
	size int
}

func (w writer) put(i int64, v uint64) {
	for k := range w.size {
		w.b[i*int64(w.size)+int64(k)] = byte(v >> (8 * k))
	}
}

// threeFryBits fills the bits from counters ctr, ctr+1, ... and returns the
// next counter. A 64-bit element is one counter's two words. Narrower
// elements use both words of a counter for two neighbours along a split
// axis (XLA's choice: the first even axis, else the first longest one), so
// the counters run over the shape with that axis halved, rounded up.
func threeFryBits(key [2]uint32, ctr uint64, dims []int64, w writer) uint64 {
	if w.size == 8 {
		n := elemCount(dims)
		for i := range n {
			x := threeFry2x32(key, ctr+uint64(i))
			w.put(i, uint64(x[0])|uint64(x[1])<<32)
		}
		return ctr + uint64(n)
	}
	if len(dims) == 0 {
		w.put(0, uint64(threeFry2x32(key, ctr)[0]))
		return ctr + 1
	}
	split := ir.RngSplitAxis(dims)
	half := append([]int64(nil), dims...)
	half[split] = (dims[split] + 1) / 2
	inner := elemCount(dims[split+1:]) // elements after the split axis
	n := elemCount(half)
	for h := range n {
		x := threeFry2x32(key, ctr+uint64(h))
		outer, rest := h/(half[split]*inner), h%(half[split]*inner)
		j, k := rest/inner, rest%inner
		for p := range int64(2) {
			if 2*j+p < dims[split] {
				w.put((outer*dims[split]+2*j+p)*inner+k, uint64(x[p]))
			}
		}
	}
	return ctr + uint64(n)
}

func elemCount(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}

var threeFryRotations = [8]uint{13, 15, 26, 6, 17, 29, 16, 24}

// threeFry2x32 is Threefry-2x32 with 20 rounds (Salmon et al., SC 2011) of
// the counter's low and high words.
func threeFry2x32(key [2]uint32, ctr uint64) [2]uint32 {
	ks := [3]uint32{key[0], key[1], 0x1BD11BDA ^ key[0] ^ key[1]}
	x := [2]uint32{uint32(ctr) + ks[0], uint32(ctr>>32) + ks[1]}
	for g := range 5 {
		for r := range 4 {
			rot := threeFryRotations[4*(g%2)+r]
			x[0] += x[1]
			x[1] = x[1]<<rot | x[1]>>(32-rot)
			x[1] ^= x[0]
		}
		x[0] += ks[(g+1)%3]
		x[1] += ks[(g+2)%3] + uint32(g+1)
	}
	return x
}

// philoxBits fills n elements from 128-bit counters and advances the
// state s past the counters used. The first counter is s[1] (low word),
// s[2] (high word); a two-word state's high word is its key, s[0], as
// XLA:CPU reads it, and the carry into it is dropped. Each counter gives
// four 32-bit words: four elements of up to 32 bits, or two of 64 bits
// (low word first).
func philoxBits(key [2]uint32, s []uint64, n int64, w writer) {
	lo, hi := s[1], s[len(s)-1]
	if len(s) == 2 {
		hi = s[0]
	}
	per := int64(4)
	if w.size == 8 {
		per = 2
	}
	for i := int64(0); i < n; i += per {
		x := philox4x32(key, [4]uint32{uint32(lo), uint32(lo >> 32), uint32(hi), uint32(hi >> 32)})
		for k := int64(0); k < per && i+k < n; k++ {
			if per == 2 {
				w.put(i+k, uint64(x[2*k])|uint64(x[2*k+1])<<32)
			} else {
				w.put(i+k, uint64(x[k]))
			}
		}
		lo++
		if lo == 0 {
			hi++
		}
	}
	s[1] = lo
	if len(s) == 3 {
		s[2] = hi
	}
}

// philox4x32 is Philox-4x32 with 10 rounds (Salmon et al., SC 2011).
func philox4x32(key [2]uint32, x [4]uint32) [4]uint32 {
	for range 10 {
		p0 := uint64(x[0]) * 0xD2511F53
		p1 := uint64(x[2]) * 0xCD9E8D57
		x = [4]uint32{uint32(p1>>32) ^ x[1] ^ key[0], uint32(p1), uint32(p0>>32) ^ x[3] ^ key[1], uint32(p0)}
		key[0] += 0x9E3779B9
		key[1] += 0xBB67AE85
	}
	return x
}
