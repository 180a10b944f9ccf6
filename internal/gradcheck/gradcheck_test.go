package gradcheck

import (
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// reduced is progen seed 4's program (drawn while rng_bit_generator was in the
// seeds' bag) reduced: a result of 1.2e38 beside one that depends on %p0. The
// loss Σ ct·r is then about 1e38 and f64 rounds the perturbation of r[1] away, so
// the finite difference of every element read 0 where the gradient is ct.
const reduced = `func @main(%p0: f32[2]) -> f32[2] {
  %0 = constant [1.2102333e+38, 0.5] : f32[2]
  %1 = add %0, %p0 : f32[2]
  return %1
}`

// seed4 is the program as progen drew it (its integer result left out): the
// update's starts clamp to (1, 2, 3), so %p0 outside that window gets 2·ct.
const seed4 = `func @main(%p0: f32[5,4,6]) -> f32[5,4,6] {
  %0 = constant [[[-0.625, 1.5], [-0.5, -inf]], [[-0.75, -0.5], [4.0, -0.125]], [[-0.75, 4.0], [0.8478961, 0.5]], [[1.9643914, 2.0], [1.2102333e+38, -0.6380596]]] : f32[4,2,2]
  %1 = constant 255 : u8[]
  %2 = constant 3 : u8[]
  %3 = dynamic_update_slice %p0, %0, %1, %1, %2 : f32[5,4,6]
  %4 = add %3, %p0 : f32[5,4,6]
  return %4
}`

// compare runs src's VJP and finite differences on the reference executor.
func compare(t *testing.T, src string, picks int) (c *Check, msgs []string, rough, coarse int) {
	t.Helper()
	m, err := tir.Parse("t.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c, err = New(m, cpu.RandomInputs(m.Entry(), 4), 4, picks)
	if err != nil {
		t.Fatal(err)
	}
	vjp, err := cpu.Run(c.VJP, c.VJP.Entry(), c.VJPArgs)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := cpu.Run(c.FD, c.FD.Funcs[0], c.FDArgs)
	if err != nil {
		t.Fatal(err)
	}
	msgs, rough, coarse = c.Compare(vjp, fd[0])
	return c, msgs, rough, coarse
}

// TestHugeResultIsNotCompared: autodiff's gradient (ct, as jax.grad gives in f64)
// is right; the f64 loss cannot resolve the step, so the picks are left out, not
// reported as disagreeing with a finite difference of 0.
func TestHugeResultIsNotCompared(t *testing.T) {
	c, msgs, rough, coarse := compare(t, reduced, 4)
	vjp, err := cpu.Run(c.VJP, c.VJP.Entry(), c.VJPArgs)
	if err != nil {
		t.Fatal(err)
	}
	ct, grad := c.VJPArgs[1], vjp[1]
	for i := range 2 {
		if grad.Float64At(i) != ct.Float64At(i) {
			t.Errorf("d/d%%p0[%d] = %g, want the cotangent %g", i, grad.Float64At(i), ct.Float64At(i))
		}
	}
	if len(msgs) != 0 || rough != 0 || coarse != 2 {
		t.Errorf("got %d disagreements %q, %d rough, %d coarse; want 0, 0, 2", len(msgs), msgs, rough, coarse)
	}
}

// TestSeed4 is the program that failed TestGradRandomPrograms.
func TestSeed4(t *testing.T) {
	_, msgs, rough, coarse := compare(t, seed4, 4)
	if len(msgs) != 0 || rough != 0 || coarse != 4 {
		t.Errorf("got %d disagreements %q, %d rough, %d coarse; want 0, 0, 4", len(msgs), msgs, rough, coarse)
	}
}

// TestOrdinaryResultIsCompared: the same program with a result of ordinary size
// is compared element by element (the skip is that case only).
func TestOrdinaryResultIsCompared(t *testing.T) {
	src := strings.Replace(reduced, "1.2102333e+38", "-300.0", 1)
	_, msgs, rough, coarse := compare(t, src, 4)
	if len(msgs) != 0 || rough != 0 || coarse != 0 {
		t.Errorf("got %d disagreements %q, %d rough, %d coarse; want 0, 0, 0", len(msgs), msgs, rough, coarse)
	}
	// And a wrong gradient is still caught: the checker compares these picks.
	m, _ := tir.Parse("t.tir", []byte(src))
	c, err := New(m, cpu.RandomInputs(m.Entry(), 4), 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	vjp, _ := cpu.Run(c.VJP, c.VJP.Entry(), c.VJPArgs)
	fd, _ := cpu.Run(c.FD, c.FD.Funcs[0], c.FDArgs)
	vjp[1].SetFloat64(1, vjp[1].Float64At(1)+0.5)
	msgs, _, _ = c.Compare(vjp, fd[0])
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0], "d/d%p0[1]: gradient ") {
		t.Errorf("a gradient off by 0.5: got %q, want one disagreement at %%p0[1]", msgs)
	}
}

// TestUnresolved: the bound is one f64 rounding of the loss's terms over h,
// against the roughness bound Tol/4·(1+|fd|).
func TestUnresolved(t *testing.T) {
	for _, c := range []struct {
		magnitude, h, fd float64
		want             bool
	}{
		{1.8e38, 1e-5, 0, true},
		{1e9, 1e-5, 0, true},    // 2.2e-16·1e9/1e-5 = 0.022 > 2.5e-4
		{1e9, 1e-5, 1e3, false}, // 0.022 < 0.25
		{1e6, 1e-5, 0, false},   // 2.2e-5
		{0, 1e-5, 0, false},
		{math.Inf(1), 1e-5, 0, true},
	} {
		if got := Unresolved(c.magnitude, c.h, c.fd); got != c.want {
			t.Errorf("Unresolved(%g, %g, %g) = %v, want %v", c.magnitude, c.h, c.fd, got, c.want)
		}
	}
}

// TestRetypeAlgorithm: a dot_general's algorithm names its operands' types,
// so a program retyped to f32 or f64 names them too (a bf16 algorithm on
// f32 operands is refused), and still parses.
func TestRetypeAlgorithm(t *testing.T) {
	src := "func @f(%c: bf16[2,3], %d: bf16[3,4]) -> f32[2,4] {\n" +
		"  %y = dot_general %c, %d {algorithm=[bf16,bf16,f32,1,1,1,false], lhs_contract=[1], rhs_contract=[0]} : f32[2,4]\n  return %y\n}\n"
	m, err := tir.Parse("alg.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range []ir.DType{ir.F32, ir.F64} {
		r, err := Retype(m, dt)
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		want := "algorithm=[" + dt.String() + "," + dt.String() + "," + dt.String() + ",1,1,1,false]"
		if got := ir.Print(r); !strings.Contains(got, want) || strings.Contains(got, "bf16") {
			t.Errorf("%s:\n%s\nwant %s and no bf16", dt, got, want)
		}
	}
}
