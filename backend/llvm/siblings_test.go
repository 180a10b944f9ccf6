package llvm

import (
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
)

// TestSiblingLoops: AdamW's update of one weight (its two moments and the
// weight, each a loop over the same shape, the weight's reading the new
// moments) is one kernel writing three results, the moments computed once
// per element in registers, with the reference executor's numbers; a
// result of another shape gets a loop of its own.
func TestSiblingLoops(t *testing.T) {
	src := `func @adamw(%g: f32[48,96], %m: f32[48,96], %v: f32[48,96], %p: f32[48,96]) -> (f32[48,96], f32[48,96], f32[48,96], f32[48]) {
  %b1 = constant 0.9 : f32[48,96]
  %c1 = constant 0.1 : f32[48,96]
  %m0 = mul %m, %b1 : f32[48,96]
  %m1 = mul %g, %c1 : f32[48,96]
  %m2 = add %m0, %m1 : f32[48,96]
  %b2 = constant 0.999 : f32[48,96]
  %c2 = constant 0.001 : f32[48,96]
  %v0 = mul %v, %b2 : f32[48,96]
  %gg = mul %g, %g : f32[48,96]
  %v1 = mul %gg, %c2 : f32[48,96]
  %v2 = add %v0, %v1 : f32[48,96]
  %s = sqrt %v2 : f32[48,96]
  %e = constant 1e-08 : f32[48,96]
  %d = add %s, %e : f32[48,96]
  %u = div %m2, %d : f32[48,96]
  %lr = constant 0.01 : f32[48,96]
  %w = mul %u, %lr : f32[48,96]
  %p2 = sub %p, %w : f32[48,96]
  %n = reduce_sum %p2 {axes=[1]} : f32[48]
  return %m2, %v2, %p2, %n
}
`
	m, f, x := compileSrc(t, testBackend(t), src)
	var whats []string
	for _, s := range x.StepTimes() {
		whats = append(whats, s.What)
	}
	want := []string{"loop add (+2)", "reduce_sum"}
	if len(whats) != len(want) || whats[0] != want[0] || whats[1] != want[1] {
		t.Errorf("steps %q, want %q", whats, want)
	}
	agree(t, x, m, f, cpu.RandomInputs(f, 3))
}
