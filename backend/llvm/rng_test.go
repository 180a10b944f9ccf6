package llvm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// rngSrc draws bits of every width with each algorithm: odd and even
// split axes, a scalar, a Philox tail that fills part of a counter, a
// three-word state, and shapes of thousands of counters, which the plan
// splits between threads.
const rngSrc = `func @f(%s: u64[2], %p: u64[3]) -> (u64[2], u32[3,5], u64[2], f64[2,3], u64[3], i16[7], u64[2], bf16[4,1], u8[9], u64[2], u64[7], u32[], u64[2], u32[3,4097], u8[10001], u64[3], f32[64,130], u64[3])
{
  %s1, %a = rng_bit_generator %s {algorithm=three_fry} : u64[2], u32[3,5]
  %s2, %b = rng_bit_generator %s1 {algorithm=philox} : u64[2], f64[2,3]
  %p1, %c = rng_bit_generator %p {algorithm=philox} : u64[3], i16[7]
  %s3, %d = rng_bit_generator %s2 {algorithm=three_fry} : u64[2], bf16[4,1]
  %s4, %e = rng_bit_generator %s3 {algorithm=three_fry} : u64[2], u8[9]
  %s5, %g = rng_bit_generator %s4 {algorithm=default} : u64[2], u64[7]
  %s6, %h = rng_bit_generator %s5 {algorithm=three_fry} : u64[2], u32[]
  %s7, %i = rng_bit_generator %s6 {algorithm=three_fry} : u64[2], u32[3,4097]
  %p2, %j = rng_bit_generator %p1 {algorithm=philox} : u64[3], u8[10001]
  %p3, %l = rng_bit_generator %p2 {algorithm=default} : u64[3], f32[64,130]
  return %s1, %a, %s2, %b, %p1, %c, %s3, %d, %e, %s5, %g, %h, %s7, %i, %j, %p2, %l, %p3
}
`

// TestRngBitGenerator: rng_bit_generator is generated (no instruction of
// it runs on the reference executor) and its bits and new states are the
// reference kernel's byte for byte, on random states and on states whose
// counters wrap (into Philox's high word, which a two-word state drops,
// and the high word itself); two results are pinned to XLA:CPU's words
// (backend/cpu's TestRngBitGenerator records them).
func TestRngBitGenerator(t *testing.T) {
	b := testBackend(t)
	m, f, x := compileSrc(t, b, rngSrc)
	if fb := x.Fallbacks(); len(fb) != 0 {
		t.Fatalf("rng_bit_generator falls back: %q", fb)
	}
	states := [][]*backend.Buffer{cpu.RandomInputs(f, 1),
		{u64s(7, 1<<64-2), u64s(7, 1<<64-2, 1<<64-1)},
		{u64s(0x0123456789abcdef, 0xfedcba9876543210), u64s(0x0123456789abcdef, 0xfedcba9876543210, 0x1111)}}
	for si, in := range states {
		want, err := cpu.Run(m, f, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if !bytes.Equal(got[i].Bytes(), want[i].Bytes()) {
				t.Errorf("states %d, result %d (%s): differs from the reference executor", si, i, want[i].Type())
			}
		}
		if si != 2 {
			continue
		}
		// XLA:CPU's words for three_fry u32[3,5] and (after 8 counters)
		// philox on a three-word state.
		if w := fmt.Sprintf("%x", got[1].Bytes()[:8]); w != "7fa3d4ae11d13011" {
			t.Errorf("three_fry u32[3,5] starts %s, want XLA:CPU's 7fa3d4ae11d13011", w)
		}
		if w := fmt.Sprintf("%x", got[4].Bytes()); w != "efcdab8967452301"+"1232547698badcfe"+"1111000000000000" {
			t.Errorf("philox state after i16[7] (2 counters) %s, want the counter advanced by 2", w)
		}
	}
}

func u64s(v ...uint64) *backend.Buffer {
	buf := backend.New(ir.Type{DType: ir.U64, Shape: []ir.Dim{ir.D(int64(len(v)))}})
	for i, x := range v {
		binary.LittleEndian.PutUint64(buf.Bytes()[8*i:], x)
	}
	return buf
}
