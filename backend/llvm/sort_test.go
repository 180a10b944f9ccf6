package llvm

import (
	"bytes"
	"math"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
)

// TestSortComparator: sort with a comparator region is generated (the
// comparator compiled inline) and gives the reference's order exactly:
// keys with ties and the values sorted with them (stability), descending,
// a lexicographic comparator over two keys with a select, a NaN-aware
// total order, along an inner axis, f16 and i32 keys, one line of 3000
// and enough lines to be split between threads.
func TestSortComparator(t *testing.T) {
	src := `func @f(%x: f32[6,50], %i: i32[6,50], %y: f32[3000], %h: f16[40,7], %k: i32[40,7], %m: i32[400,64]) -> (f32[6,50], i32[6,50], f32[6,50], f32[3000], f16[40,7], i32[40,7], i32[400,64], f32[6,50])
{
  %s, %j = sort %x, %i {dimension=1, stable=true} (%a: f32[], %b: f32[], %c: i32[], %d: i32[]) {
    %lt = compare %a, %b {dir=lt}
    return %lt
  }
  %dn = sort %x {dimension=1, stable=true} (%a: f32[], %b: f32[]) {
    %gt = compare %a, %b {dir=gt}
    return %gt
  }
  %ys = sort %y {dimension=0, stable=true} (%a: f32[], %b: f32[]) {
    %lt = compare %a, %b {dir=lt}
    return %lt
  }
  %hs, %ks = sort %h, %k {dimension=0, stable=true} (%a: f16[], %b: f16[], %c: i32[], %d: i32[]) {
    %eq = compare %a, %b {dir=eq}
    %lt = compare %a, %b {dir=lt}
    %lt2 = compare %c, %d {dir=gt}
    %r = select %eq, %lt2, %lt
    return %r
  }
  %ms = sort %m {dimension=1, stable=false} (%a: i32[], %b: i32[]) {
    %lt = compare %a, %b {dir=lt}
    return %lt
  }
  %ns = sort %x {dimension=1, stable=true} (%a: f32[], %b: f32[]) {
    %an = compare %a, %a {dir=ne}
    %bn = compare %b, %b {dir=ne}
    %nb = not %bn
    %lt = compare %a, %b {dir=lt}
    %first = and %an, %nb
    %an2 = not %an
    %both = and %an2, %nb
    %ok = and %both, %lt
    %r = or %first, %ok
    return %r
  }
  return %s, %j, %dn, %ys, %hs, %ks, %ms, %ns
}
`
	b := testBackend(t)
	m, f, x := compileSrc(t, b, src)
	if fb := x.Fallbacks(); len(fb) != 0 {
		t.Fatalf("sort falls back: %q", fb)
	}
	in := cpu.RandomInputs(f, 13)
	for i := range in[0].Len() { // ties in the keys, and NaNs
		in[0].SetFloat64(i, math.Round(4*in[0].Float64At(i)))
		if i%17 == 3 {
			in[0].SetFloat64(i, math.NaN())
		}
	}
	for i := range in[3].Len() {
		in[3].SetFloat64(i, math.Round(2*in[3].Float64At(i)))
	}
	want, err := cpu.Run(m, f, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	for r := range want {
		if !bytes.Equal(got[r].Bytes(), want[r].Bytes()) {
			t.Errorf("result %d (%s) differs from the reference executor's", r, want[r].Type())
		}
	}
}
