package llvm

import (
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend/cpu"
)

// TestStepTimes: every step of the plan is clocked on every run, named by
// its kernel and by what the plan says it computes, and the steps' times
// add up to no more than the runs took.
func TestStepTimes(t *testing.T) {
	src := "func @f(%x: f32[64,128], %w: f32[128,32], %s: f32[128]) -> i32[64,32] {\n" +
		"  %n = rms_norm %x, %s {eps=1e-06} : f32[64,128]\n" +
		"  %y = matmul %n, %w : f32[64,32]\n  %z = exp %y : f32[64,32]\n  %a = argmax %z {axis=1} : i32[64]\n" +
		"  %c = convert %a : f32[64]\n  %r = reshape %c : f32[64,1]\n  %o = add %z, %r : f32[64,32]\n" +
		"  %q = convert %o : i32[64,32]\n  return %q\n}\n" // float to int saturates: on the reference executor
	_, f, x := compileSrc(t, testBackend(t), src)
	in := cpu.RandomInputs(f, 1)
	t0 := time.Now()
	for range 3 {
		if _, err := x.Run(in); err != nil {
			t.Fatal(err)
		}
	}
	wall := time.Since(t0)
	st := x.StepTimes()
	var whats []string
	var sum time.Duration
	for i, s := range st {
		whats = append(whats, s.What)
		if s.Step != i || s.Calls != 3 || s.Total <= 0 {
			t.Errorf("step %d: %+v, want step %d, 3 calls, some time", i, s, i)
		}
		if (s.Kernel == "") != (s.What == "reference convert") {
			t.Errorf("step %d (%s): kernel %q", i, s.What, s.Kernel)
		}
		sum += s.Total
	}
	want := []string{"rms_norm", "dot_general+exp", "argmax", "loop add", "reference convert"}
	if len(whats) != len(want) {
		t.Fatalf("steps %q, want %q", whats, want)
	}
	for i := range want {
		if whats[i] != want[i] {
			t.Errorf("steps %q, want %q", whats, want)
			break
		}
	}
	if sum > wall {
		t.Errorf("the steps took %v in all, more than the runs' %v", sum, wall)
	}
	// What each call moves and multiplies: the norm writes [64,128] and
	// reads it, its scale and an i64[] constant of the plan; the product (with exp in its tile) writes
	// [64,32] and reads [64,128] and [128,32], both stored row-major.
	if len(st) == len(want) {
		norm, dot := st[0], st[1]
		if norm.Out != "f32[64,128]" || dot.Out != "f32[64,32]" {
			t.Errorf("results %q and %q, want f32[64,128] and f32[64,32]", norm.Out, dot.Out)
		}
		if norm.Bytes != 4*(64*128*2+128)+8 || norm.MACs != 0 || norm.Shape != "" {
			t.Errorf("rms_norm: %d bytes, %d MACs, shape %q; want %d, 0, \"\"", norm.Bytes, norm.MACs, norm.Shape, 4*(64*128*2+128)+8)
		}
		if dot.Bytes != 4*(64*32+64*128+128*32) || dot.MACs != 64*128*32 || dot.Shape != "1x64x128x32 lhs mk rhs kn" {
			t.Errorf("dot_general: %d bytes, %d MACs, shape %q; want %d, %d, \"1x64x128x32 lhs mk rhs kn\"",
				dot.Bytes, dot.MACs, dot.Shape, 4*(64*32+64*128+128*32), 64*128*32)
		}
	}
}
