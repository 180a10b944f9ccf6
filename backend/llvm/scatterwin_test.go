package llvm

import (
	"bytes"
	"math"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
)

// TestSelectAndScatter: select_and_scatter is generated for float and
// integer types and gives the reference kernel's results exactly: max
// pooling's gradient (disjoint 2×2 windows), overlapping padded windows
// with ties and a NaN (ge and gt pick different elements of a tie; a NaN
// never wins a comparison), a min selection on i32, i64 and u8, and half types
// with padding that leaves a window's edge outside.
func TestSelectAndScatter(t *testing.T) {
	src := `func @f(%x: f32[1,4,4,3], %g: f32[1,2,2,3], %z: f32[], %y: f32[5,6], %h: f32[5,6], %i: i32[5,6], %j: i32[2,2], %k: i32[], %b: bf16[4,4], %c: bf16[2,2], %e: bf16[], %u: f16[7], %v: f16[3], %w: f16[], %l: i64[4], %n: i64[2], %o: i64[], %p: u8[4], %q: u8[2], %s: u8[]) -> (f32[1,4,4,3], f32[5,6], f32[5,6], i32[5,6], bf16[4,4], f16[7], i64[4], u8[4])
{
  %0 = select_and_scatter %x, %g, %z {select=ge, stride=[1,2,2,1], window=[1,2,2,1]} : f32[1,4,4,3]
  %1 = select_and_scatter %y, %h, %z {pad_high=[1,1], pad_low=[1,1], select=ge, window=[3,3]} : f32[5,6]
  %2 = select_and_scatter %y, %h, %z {pad_high=[1,1], pad_low=[1,1], select=gt, window=[3,3]} : f32[5,6]
  %3 = select_and_scatter %i, %j, %k {select=le, stride=[2,3], window=[2,3]} : i32[5,6]
  %4 = select_and_scatter %b, %c, %e {select=ge, stride=[2,2], window=[2,2]} : bf16[4,4]
  %5 = select_and_scatter %u, %v, %w {pad_high=[1], pad_low=[1], select=ge, stride=[3], window=[3]} : f16[7]
  %6 = select_and_scatter %l, %n, %o {select=ge, stride=[2], window=[2]} : i64[4]
  %7 = select_and_scatter %p, %q, %s {select=gt, stride=[2], window=[2]} : u8[4]
  return %0, %1, %2, %3, %4, %5, %6, %7
}
`
	b := testBackend(t)
	m, f, x := compileSrc(t, b, src)
	if fb := x.Fallbacks(); len(fb) != 0 {
		t.Fatalf("select_and_scatter falls back: %q", fb)
	}
	in := cpu.RandomInputs(f, 7)
	for i := range in[3].Len() { // ties, and a NaN
		in[3].SetFloat64(i, math.Round(in[3].Float64At(i)))
	}
	in[3].SetFloat64(7, math.NaN())
	want, err := cpu.Run(m, f, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	for r := range want {
		same := bytes.Equal(got[r].Bytes(), want[r].Bytes())
		if want[r].Type().DType.IsFloat() {
			_, same = sameFloats(want[r], got[r])
		}
		if !same {
			t.Errorf("result %d (%s): got %v, the reference's %v", r, want[r].Type(), got[r], want[r])
		}
	}
}
