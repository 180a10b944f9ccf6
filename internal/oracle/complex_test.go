package oracle

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// complexPrograms exercise every op defined on complex values, on both
// complex types, against XLA:CPU (the generator draws no complex values, so
// the random programs do not). Inputs are drawn with both parts in [-2, 2),
// away from the branch cuts, where XLA and the executor may pick different
// sides of a signed zero.
var complexPrograms = map[string]string{
	"complex_c64": `func @f(%a: f32[4,3], %b: f32[4,3], %z: c64[4,3]) -> (c64[4,3], c64[4,3], f32[4,3], c64[4], i1[4,3], f32[4,3], c64[4,3], c64[3,4]) {
  %c = complex %a, %b : c64[4,3]
  %m = mul %c, %z : c64[4,3]
  %d = div %m, %z : c64[4,3]
  %s = sub %d, %c : c64[4,3]
  %n = neg %s : c64[4,3]
  %e = exp %c : c64[4,3]
  %l = log %z : c64[4,3]
  %q = sqrt %z : c64[4,3]
  %r = rsqrt %z : c64[4,3]
  %t = tanh %c : c64[4,3]
  %sn = sin %z : c64[4,3]
  %cs = cos %z : c64[4,3]
  %g = sigmoid %z : c64[4,3]
  %u = add %e, %l : c64[4,3]
  %v = add %q, %r : c64[4,3]
  %w = add %t, %sn : c64[4,3]
  %x = add %cs, %g : c64[4,3]
  %y1 = add %u, %v : c64[4,3]
  %y2 = add %w, %x : c64[4,3]
  %y = add %y1, %y2 : c64[4,3]
  %ab = abs %y : f32[4,3]
  %p = reduce_prod %z {axes=[1]} : c64[4]
  %ne = compare %m, %z {dir=ne} : i1[4,3]
  %re = real %y : f32[4,3]
  %im = imag %y : f32[4,3]
  %sum = add %re, %im : f32[4,3]
  %sg = sign %z : c64[4,3]
  %tr = transpose %z {perm=[1, 0]} : c64[3,4]
  return %n, %y, %ab, %p, %ne, %sum, %sg, %tr
}`,
	"complex_c128": `func @f(%z: c128[5], %w: c128[5], %x: f64[5]) -> (c128[5], c128[5], c128[5], c128[5], c128[5], f64[5], i32[5], c128[], c128[5]) {
  %p = pow %z, %w : c128[5]
  %l = log1p %z : c128[5]
  %e = expm1 %w : c128[5]
  %cb = cbrt %z : c128[5]
  %at = atan2 %z, %w : c128[5]
  %ab = abs %w : f64[5]
  %cv = convert %z : i32[5]
  %s = reduce_sum %w {axes=[0]} : c128[]
  %xc = convert %x : c128[5]
  %k = constant [(1.0, 0.5), (-2.0, 0.0), (0.0, 3.0), (0.25, -0.25), (-1.5, 1.5)] : c128[5]
  %m = mul %xc, %k : c128[5]
  return %p, %l, %e, %cb, %at, %ab, %cv, %s, %m
}`,
	"complex_moves": `func @f(%z: c128[3,4], %w: c128[2,4], %i: i32[2], %p: i1[3,4]) -> (c128[5,4], c128[5,6], c128[2,4], c128[2,2], c128[3,4], c64[2,3], c128[3,4], c128[4,3]) {
  %c = concat %z, %w {axis=0} : c128[5,4]
  %k = constant (0.5, -1.5) : c128[]
  %pd = pad %c, %k {low=[0, 1], high=[0, 1]} : c128[5,6]
  %t = take %z, %i {axis=0} : c128[2,4]
  %s0 = constant 1 : i32[]
  %ds = dynamic_slice %z, %s0, %s0 {sizes=[2, 2]} : c128[2,2]
  %du = dynamic_update_slice %z, %ds, %s0, %s0 : c128[3,4]
  %oh = one_hot %i {depth=3} : c64[2,3]
  %sel = select %p, %z, %du : c128[3,4]
  %tr = transpose %sel {perm=[1, 0]} : c128[4,3]
  return %c, %pd, %t, %ds, %du, %oh, %sel, %tr
}`,
}

// TestComplexModules runs complexPrograms, and the golden cases with
// complex values (TestGoldenModules runs them too, among all the others),
// through the executor and XLA.
func TestComplexModules(t *testing.T) {
	h := harness(t)
	var checks []*check
	golden, _ := goldenChecks(t)
	for _, c := range golden {
		if strings.Contains(ir.Print(c.m), "c64") || strings.Contains(ir.Print(c.m), "c128") {
			checks = append(checks, c)
		}
	}
	if len(checks) < 3 {
		t.Fatalf("found %d golden modules with complex values, want the 3 of testdata/golden", len(checks))
	}
	for name, src := range complexPrograms {
		m, err := tir.Parse(name+".tir", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		checks = append(checks, &check{
			name: name, key: name, m: m,
			inputs: cpu.RandomInputs(m.Entry(), goldenSeed),
			about:  "inputs cpu.RandomInputs(@f, 1)",
			repro:  "go test ./internal/oracle -run TestComplexModules  # " + name,
		})
	}
	if failed := runAll(t, h, checks); failed > 0 {
		t.Logf("%d of %d complex modules differ from XLA", failed, len(checks))
	}
}

// TestComplexTriangularSolveXLA: the complex triangular_solve goldens (c64
// and c128; left and right sides, both triangles, transposed, unit
// diagonal) agree with XLA:CPU within the oracle's tolerance.
func TestComplexTriangularSolveXLA(t *testing.T) {
	h := harness(t)
	all, _ := goldenChecks(t)
	var checks []*check
	for _, c := range all {
		if strings.Contains(c.name, "triangular_solve_c") {
			checks = append(checks, c)
		}
	}
	if len(checks) != 2 {
		t.Fatalf("want the two complex triangular_solve goldens, found %d", len(checks))
	}
	if failed := runAll(t, h, checks); failed > 0 {
		t.Errorf("%d of %d checks differ from XLA:CPU", failed, len(checks))
	}
}
