package cpu

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// rngCase is one rng_bit_generator run on XLA:CPU (jax 0.10.2,
// tools/xlacheck): the state in, the new state and the bits' words out
// (each element's bits, as an unsigned integer of its width).
type rngCase struct {
	alg             ir.RngAlgorithm
	state           []uint64
	dtype           ir.DType
	dims            []int64
	newState, words []uint64
}

var (
	rngKey2 = []uint64{0x0123456789abcdef, 0xfedcba9876543210}
	rngKey3 = []uint64{0x0123456789abcdef, 0xfedcba9876543210, 0x1111}
	rngWrap = []uint64{0xffffffff00000001, 0xfffffffffffffffe}
)

var rngCases = []rngCase{
	{ir.RngThreeFry, rngKey2, ir.U32, []int64{5}, []uint64{0x0123456789abcdef, 0xfedcba9876543213},
		[]uint64{0xaed4a37f, 0x1130d111, 0xc3cc4d02, 0x798e402e, 0xaee5264e}},
	{ir.RngThreeFry, rngKey2, ir.U32, []int64{2, 3}, []uint64{0x0123456789abcdef, 0xfedcba9876543213},
		[]uint64{0xaed4a37f, 0xc3cc4d02, 0xaee5264e, 0x1130d111, 0x798e402e, 0xb089da7a}},
	{ir.RngThreeFry, rngKey2, ir.U32, []int64{3, 5}, []uint64{0x0123456789abcdef, 0xfedcba9876543219},
		[]uint64{0xaed4a37f, 0x1130d111, 0xc3cc4d02, 0x798e402e, 0xaee5264e, 0x49b105a8, 0xaf0a8d99, 0xe8e52210,
			0xdde94182, 0xf0a39a78, 0xe2a77238, 0x403dbb94, 0xace8e6a6, 0xc3dc607f, 0x56cf7af2}},
	{ir.RngThreeFry, rngKey2, ir.U64, []int64{3}, []uint64{0x0123456789abcdef, 0xfedcba9876543213},
		[]uint64{0x1130d111aed4a37f, 0x798e402ec3cc4d02, 0xb089da7aaee5264e}},
	{ir.RngThreeFry, rngKey2, ir.U16, []int64{3}, []uint64{0x0123456789abcdef, 0xfedcba9876543212},
		[]uint64{0xa37f, 0xd111, 0x4d02}},
	{ir.RngThreeFry, rngKey2, ir.U32, nil, []uint64{0x0123456789abcdef, 0xfedcba9876543211}, []uint64{0xaed4a37f}},
	{ir.RngThreeFry, rngKey2, ir.F32, []int64{4}, []uint64{0x0123456789abcdef, 0xfedcba9876543212},
		[]uint64{0xaed4a37f, 0x1130d111, 0xc3cc4d02, 0x798e402e}},
	{ir.RngThreeFry, rngKey2, ir.U8, []int64{3}, []uint64{0x0123456789abcdef, 0xfedcba9876543212}, []uint64{0x7f, 0x11, 0x02}},
	{ir.RngThreeFry, rngWrap, ir.U64, []int64{3}, []uint64{0xffffffff00000001, 0x1},
		[]uint64{0x7105b515ab5c0035, 0x542d58399ce821a3, 0xece1210fc864a58b}},
	{ir.RngThreeFry, rngWrap, ir.I16, []int64{3, 1, 5}, []uint64{0xffffffff00000001, 0x7},
		[]uint64{0x35, 0xb515, 0x21a3, 0x5839, 0xa58b, 0x3ed6, 0x7353, 0x4890, 0xeffa, 0xfec4, 0x8e02, 0xabaa, 0xce0d, 0x5c80, 0x1ecb}},
	{ir.RngThreeFry, rngWrap, ir.BF16, []int64{2, 1}, []uint64{0xffffffff00000001, 0xffffffffffffffff}, []uint64{0x0035, 0xb515}},
	{ir.RngThreeFry, rngWrap, ir.U32, []int64{0, 3}, rngWrap, nil},
	{ir.RngPhilox, rngKey2, ir.U32, []int64{5}, []uint64{0x0123456789abcdef, 0xfedcba9876543212},
		[]uint64{0x1ec53d42, 0xcfa390b5, 0xf2235702, 0xe71ff917, 0xcb472319}},
	{ir.RngPhilox, rngKey2, ir.U32, []int64{2, 3}, []uint64{0x0123456789abcdef, 0xfedcba9876543212},
		[]uint64{0x1ec53d42, 0xcfa390b5, 0xf2235702, 0xe71ff917, 0xcb472319, 0xd682777a}},
	{ir.RngPhilox, rngKey2, ir.U64, []int64{3}, []uint64{0x0123456789abcdef, 0xfedcba9876543212},
		[]uint64{0xcfa390b51ec53d42, 0xe71ff917f2235702, 0xd682777acb472319}},
	{ir.RngPhilox, rngKey2, ir.U8, []int64{3}, []uint64{0x0123456789abcdef, 0xfedcba9876543211}, []uint64{0x42, 0xb5, 0x02}},
	{ir.RngDefault, rngKey2, ir.U16, []int64{3}, []uint64{0x0123456789abcdef, 0xfedcba9876543211}, []uint64{0x3d42, 0x90b5, 0x5702}},
	{ir.RngPhilox, rngKey3, ir.U32, []int64{3, 5}, []uint64{0x0123456789abcdef, 0xfedcba9876543214, 0x1111},
		[]uint64{0x99c7f0bc, 0xde4d4ca4, 0xa23703f9, 0x8f2aedb9, 0xeac1337b, 0x9881b7f6, 0x404dfbf1, 0x40061d7a,
			0x4a81c39b, 0xd7bef777, 0x7f77075d, 0x0d2f13dd, 0x79acab53, 0xccbdd1e1, 0x0cea29eb}},
	{ir.RngDefault, rngKey3, ir.U64, []int64{3}, []uint64{0x0123456789abcdef, 0xfedcba9876543212, 0x1111},
		[]uint64{0xde4d4ca499c7f0bc, 0x8f2aedb9a23703f9, 0x9881b7f6eac1337b}},
	// The 128-bit counter carries into its high word, which a two-word
	// state drops.
	{ir.RngPhilox, []uint64{7, 0xfffffffffffffffe}, ir.U32, []int64{9}, []uint64{7, 1},
		[]uint64{0x2b941499, 0x6b622e26, 0xf083080f, 0x0083fcd9, 0xe404ea31, 0xae9e750f, 0xf06e4c03, 0x33a71289, 0xa2221dce}},
	{ir.RngPhilox, []uint64{7, 0xfffffffffffffffe, 0xffffffffffffffff}, ir.U64, []int64{5}, []uint64{7, 1, 0},
		[]uint64{0x1ebd3e7a2761ca5a, 0xd47c9e18113e5b48, 0x977462bbb6882757, 0x878b9d4e12280d07, 0xc009f9dcf4607a2d}},
	{ir.RngPhilox, rngWrap, ir.F64, []int64{2, 3}, []uint64{0xffffffff00000001, 0x1},
		[]uint64{0x3a1abc405a3dfee5, 0x228ee63794f364dd, 0x88d4efe980ed983f, 0xe416dc6b68484812, 0x6c4c06f58398fb6f, 0xcc9c8594a7814844}},
	{ir.RngPhilox, rngWrap, ir.U32, []int64{0, 3}, rngWrap, nil},
}

// TestRngBitGenerator: the executor's bits and new state are XLA:CPU's,
// word for word, for both algorithms (and default, which is philox),
// every width, split axes of either parity, scalars and empty shapes, and
// counters that wrap.
func TestRngBitGenerator(t *testing.T) {
	for _, c := range rngCases {
		name := fmt.Sprintf("%s %x %s%v", c.alg, c.state, c.dtype, c.dims)
		st := backend.New(ir.Type{DType: ir.U64, Shape: dimsOf(int64(len(c.state)))})
		for i, v := range c.state {
			binary.LittleEndian.PutUint64(st.Bytes()[8*i:], v)
		}
		bits := ir.Type{DType: c.dtype, Shape: dimsOf(c.dims...)}
		res, err := runOp(ir.OpRngBitGenerator, &ir.RngAttr{Algorithm: c.alg}, []ir.Type{st.Type(), bits}, st)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := words(res[0], 8); fmt.Sprint(got) != fmt.Sprint(c.newState) {
			t.Errorf("%s: new state %x, want %x", name, got, c.newState)
		}
		if got := words(res[1], c.dtype.Bits()/8); fmt.Sprint(got) != fmt.Sprint(c.words) {
			t.Errorf("%s: bits %x, want %x", name, got, c.words)
		}
	}
}

func dimsOf(n ...int64) []ir.Dim {
	d := make([]ir.Dim, len(n))
	for i, v := range n {
		d[i] = ir.D(v)
	}
	return d
}

// words reads a buffer's elements as unsigned integers of size bytes.
func words(b *backend.Buffer, size int) []uint64 {
	var w []uint64
	for i := 0; i < len(b.Bytes()); i += size {
		var v uint64
		for k := range size {
			v |= uint64(b.Bytes()[i+k]) << (8 * k)
		}
		w = append(w, v)
	}
	return w
}
