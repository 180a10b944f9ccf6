package llvm

import (
	"bytes"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
)

// TestBitcastConvert: bitcast_convert is generated (nothing runs on the
// reference executor) for equal, wider and narrower element widths, f64
// and half types included, and a tensor large enough to be split between
// threads; the results are the reference's bytes.
func TestBitcastConvert(t *testing.T) {
	src := `func @f(%a: f32[3], %b: u8[2,4], %c: f64[3], %d: bf16[4], %e: f32[70000], %g: i8[5,2]) -> (u32[3], u8[3,4], f32[2], u32[3,2], i16[4], i32[70000], f16[5])
{
  %0 = bitcast_convert %a : u32[3]
  %1 = bitcast_convert %a : u8[3,4]
  %2 = bitcast_convert %b : f32[2]
  %3 = bitcast_convert %c : u32[3,2]
  %4 = bitcast_convert %d : i16[4]
  %5 = bitcast_convert %e : i32[70000]
  %6 = bitcast_convert %g : f16[5]
  return %0, %1, %2, %3, %4, %5, %6
}
`
	b := testBackend(t)
	m, f, x := compileSrc(t, b, src)
	if fb := x.Fallbacks(); len(fb) != 0 {
		t.Fatalf("bitcast_convert falls back: %q", fb)
	}
	in := cpu.RandomInputs(f, 3)
	want, err := cpu.Run(m, f, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !bytes.Equal(got[i].Bytes(), want[i].Bytes()) || got[i].Type().String() != want[i].Type().String() {
			t.Errorf("result %d (%s): differs from the reference executor", i, want[i].Type())
		}
	}
}
