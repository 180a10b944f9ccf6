package llvm

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
)

// A sharding_constraint runs on this host as the identity, generated as
// an expression (f32 and i1), not on the reference executor.
func TestShardingConstraintGenerated(t *testing.T) {
	b := testBackend(t)
	m, f, x := compileSrc(t, b, `mesh @mesh = <["dp"=2, "tp"=2]>

func @f(%x: f32[4,6] {sharding=<@mesh, [{"dp"}, {}]>}, %y: f32[4,6]) -> (f32[4,6], i1[4,6]) {
  %a = mul %x, %y
  %c = sharding_constraint %a {sharding=<@mesh, [{"dp"}, {"tp"}]>}
  %e = exp %c
  %p = compare %x, %y {dir=lt}
  %q = sharding_constraint %p {sharding=<@mesh, [{}, {"tp"}]>}
  return %e, %q
}
`)
	if g, fb := x.Coverage(); !strings.Contains(g, "sharding_constraint") || strings.Contains(fb, "sharding_constraint") {
		t.Fatalf("sharding_constraint not generated: generated %s; reference %s", g, fb)
	}
	agree(t, x, m, f, cpu.RandomInputs(f, 5))
}
