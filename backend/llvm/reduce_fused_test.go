package llvm

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
)

// TestReduceFused: a reduction of an expression that nothing else keeps in
// memory computes it as it reads it, as a causal-LM loss's reductions over
// the vocabulary do (the label's entry picked by a select against an iota,
// the log-softmax gradient's row sums): no loop kernel stores the select or
// the exp first. A row of 5000 is summed in blocks (sumBlock), so the
// expression is computed in more than one loop. An operand that the
// program also returns is stored once and read, as before, and so is one
// reduced over a leading axis only (reducesLast), summed row by row
// (reduceColumns). The numbers are
// the reference executor's.
func TestReduceFused(t *testing.T) {
	src := `func @loss(%x: f32[6,5000], %lab: i32[6], %c: f32[6]) -> (f32[6], f32[6], f32[6], f32[6,5000], f32[6], f32[6,5000], f32[5000]) {
  %io = iota {axis=1} : i32[6,5000]
  %lb = broadcast %lab {dims=[0]} : i32[6,5000]
  %hit = compare %io, %lb {dir=eq} : i1[6,5000]
  %z = constant 0.0 : f32[6,5000]
  %sel = select %hit, %x, %z : f32[6,5000]
  %p = reduce_sum %sel {axes=[1]} : f32[6]
  %e = exp %x : f32[6,5000]
  %m = reduce_max %e {axes=[1]} : f32[6]
  %cb = broadcast %c {dims=[0]} : f32[6,5000]
  %g = select %hit, %cb, %z : f32[6,5000]
  %s = reduce_sum %g {axes=[1]} : f32[6]
  %sb = broadcast %s {dims=[0]} : f32[6,5000]
  %es = mul %e, %sb : f32[6,5000]
  %d = sub %g, %es : f32[6,5000]
  %y = mul %x, %x : f32[6,5000]
  %q = reduce_sum %y {axes=[1]} : f32[6]
  %w = add %x, %x : f32[6,5000]
  %t = reduce_sum %w {axes=[0]} : f32[5000]
  return %p, %m, %s, %d, %q, %y, %t
}
`
	m, f, x := compileSrc(t, testBackend(t), src)
	whats := stepWhats(x)
	want := []string{"reduce_sum of select", "reduce_max of exp", "reduce_sum of select", "loop mul", "reduce_sum", "loop add", "reduce_sum over rows", "loop sub"}
	if !slices.Equal(whats, want) {
		t.Errorf("steps %q, want %q", whats, want)
	}
	in := cpu.RandomInputs(f, 5)
	for i := range 6 {
		in[1].SetInt64(i, int64(i*997)) // each row's label in range
	}
	agree(t, x, m, f, in)
}

// TestInputFusionOpened: a fusion of expressions and reductions that
// fusedReduce computes as they read is opened into the enclosing group, so
// an operand that is an expression there (a loss's cotangent of the
// log-probabilities: a select against an iota, from a fusion of its own)
// is computed where it is read, by the row sum and by the gradient's loop,
// and never stored; the row sum that the fusion also returns is its
// reduction's slot, not a copy of it. The numbers are the reference
// executor's.
func TestInputFusionOpened(t *testing.T) {
	src := `func @f(%x: f32[6,500], %lab: i32[6], %c: f32[6]) -> (f32[6,500], f32[6]) {
  %g = fusion %lab, %c {kind=loop} : f32[6,500] (%l: i32[6], %cc: f32[6]) {
    %io = iota {axis=1} : i32[6,500]
    %lb = broadcast %l {dims=[0]} : i32[6,500]
    %hit = compare %io, %lb {dir=eq} : i1[6,500]
    %cb = broadcast %cc {dims=[0]} : f32[6,500]
    %z = constant 0.0 : f32[6,500]
    %sel = select %hit, %cb, %z : f32[6,500]
    return %sel
  }
  %d, %t = fusion %x, %g {kind=input} : f32[6,500], f32[6] (%xx: f32[6,500], %gg: f32[6,500]) {
    %s = reduce_sum %gg {axes=[1]} : f32[6]
    %sb = broadcast %s {dims=[0]} : f32[6,500]
    %e = exp %xx : f32[6,500]
    %es = mul %e, %sb : f32[6,500]
    %r = sub %gg, %es : f32[6,500]
    return %r, %s
  }
  return %d, %t
}
`
	m, f, x := compileSrc(t, testBackend(t), src)
	whats := stepWhats(x)
	want := []string{"reduce_sum of select", "loop sub"}
	if !slices.Equal(whats, want) {
		t.Errorf("steps %q, want %q", whats, want)
	}
	in := cpu.RandomInputs(f, 6)
	for i := range 6 {
		in[1].SetInt64(i, int64(i*83))
	}
	agree(t, x, m, f, in)
}

// TestReduceOnehotPick: an f32 sum over the last axis of a select against
// an iota along it and a label the same along it (a causal-LM loss's pick)
// reads one element a row (its step's work is the rows, not the elements),
// the iota on either side of the compare and with keepdims; a label
// outside the axis (-100, -1, the axis' length) picks +0, and a NaN the
// select drops stays dropped. A compare other than eq, or a label that
// varies along the axis, is summed as before. The bits are the reference
// executor's.
func TestReduceOnehotPick(t *testing.T) {
	src := `func @pick(%x: f32[6,37], %lab: i32[6,1], %v: i32[37]) -> (f32[6], f32[6,1], f32[6], f32[6]) {
  %io = iota {axis=1} : i32[6,37]
  %lb = broadcast %lab {dims=[0,1]} : i32[6,37]
  %z = constant 0.0 : f32[6,37]
  %hit = compare %io, %lb {dir=eq} : i1[6,37]
  %a = select %hit, %x, %z : f32[6,37]
  %p = reduce_sum %a {axes=[1]} : f32[6]
  %hit2 = compare %lb, %io {dir=eq} : i1[6,37]
  %b = select %hit2, %x, %z : f32[6,37]
  %q = reduce_sum %b {axes=[1], keepdims=true} : f32[6,1]
  %ne = compare %io, %lb {dir=ne} : i1[6,37]
  %c = select %ne, %x, %z : f32[6,37]
  %r = reduce_sum %c {axes=[1]} : f32[6]
  %vb = broadcast %v {dims=[1]} : i32[6,37]
  %hit3 = compare %io, %vb {dir=eq} : i1[6,37]
  %d = select %hit3, %x, %z : f32[6,37]
  %s = reduce_sum %d {axes=[1]} : f32[6]
  return %p, %q, %r, %s
}
`
	m, f, x := compileSrc(t, testBackend(t), src)
	var works []int64
	for _, st := range x.plan.steps {
		works = append(works, st.work)
	}
	if want := []int64{6, 6, 6 * 37, 6 * 37}; !slices.Equal(works, want) {
		t.Errorf("steps' work %v, want %v (picks read a row's one element)\nplan:\n%s", works, want, x.plan)
	}
	in := cpu.RandomInputs(f, 6)
	for i, l := range []int64{3, -100, 36, 0, 37, -1} {
		in[1].SetInt64(i, l)
	}
	in[0].SetFloat64(5, math.NaN()) // row 0, column 5: not its label's
	in[0].SetFloat64(3*37, math.Copysign(0, -1))
	want, err := cpu.Run(m, f, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if !bytes.Equal(got[i].Bytes(), want[i].Bytes()) {
			t.Errorf("result %d: %v, the reference executor's %v", i, got[i].Float32s(), want[i].Float32s())
		}
	}
	agree(t, x, m, f, in)
}
