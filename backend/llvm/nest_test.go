package llvm

import (
	"strings"
	"testing"
)

// TestNestLoopsPlain: an elementwise nest of cheap elements (arithmetic,
// converts) asks clang for no interleaving (nestInterleave), so its
// kernel carries no loop identifier; one that calls exp keeps 4 vectors in
// flight (hintNest), as does a reduction's loop, which carries its sum.
// All agree with the reference executor.
func TestNestLoopsPlain(t *testing.T) {
	b := testBackend(t)
	for _, c := range []struct {
		name, src string
		hints     int // branches carrying the interleave hint
	}{
		{"cheap", "func @f(%x: f32[6,40], %y: bf16[6,40]) -> f32[6,40] {\n  %c = convert %y : f32[6,40]\n  %m = mul %x, %c\n  %a = add %m, %x\n  return %a\n}\n", 0},
		{"exp", "func @f(%x: f32[6,40], %y: f32[6,40]) -> f32[6,40] {\n  %s = silu %x\n  %m = mul %s, %y\n  return %m\n}\n", 1},
		{"reduction", "func @f(%x: f32[6,40]) -> f32[6] {\n  %e = mul %x, %x\n  %m = reduce_sum %e {axes=[1]} : f32[6]\n  return %m\n}\n", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			exe := compileText(t, c.name, []byte(c.src))
			x := differential(t, b, exe.Module, exe.Entry, 7)
			text := x.plan.gen.text()
			hinted := strings.Contains(text, "!{!\"llvm.loop.interleave.count\", i32 4}")
			if n := strings.Count(text, ", !llvm.loop "); n != c.hints || hinted != (c.hints > 0) {
				t.Errorf("%d branches carry a loop identifier (interleave hint defined: %v), want %d:\n%s", n, hinted, c.hints, text)
			}
		})
	}
}

// TestKernelCostUnroll: a kernel's cost, by which parts are balanced, is
// its text's size times the largest unroll count its loops ask for: the
// streamed product's contraction loop asks for 2 here (TestGemvUnrollHint),
// the elementwise kernel's loop for none.
func TestKernelCostUnroll(t *testing.T) {
	b := testBackend(t)
	src := "func @f(%x: f32[1,64], %w: f32[64,64], %y: f32[6,40]) -> (f32[1,64], f32[6,40]) {\n" +
		"  %d = dot_general %x, %w {lhs_contract=[1], rhs_contract=[1]} : f32[1,64]\n" +
		"  %m = mul %y, %y : f32[6,40]\n  return %d, %m\n}\n"
	exe := compileText(t, "cost", []byte(src))
	x := differential(t, b, exe.Module, exe.Entry, 3)
	_, us, ok := x.plan.gen.units(b.tc, x.plan.kernelNames())
	if !ok || len(us) != 2 {
		t.Fatalf("plan:\n%s\n%d units (split %v), want 2", x.plan, len(us), ok)
	}
	gemvs := 0
	for _, u := range us {
		unroll := 1
		if strings.Contains(u.body, "@llvm.fmuladd.v") { // the gemv's vectors
			unroll = 2
			gemvs++
		}
		if u.cost != unroll*len(u.body) {
			t.Errorf("kernel %s: cost %d, want %d x its %d bytes", u.name, u.cost, unroll, len(u.body))
		}
	}
	if gemvs != 1 {
		t.Errorf("%d kernels with vector multiply-adds, want the gemv:\n%s", gemvs, x.plan.gen.text())
	}
}
