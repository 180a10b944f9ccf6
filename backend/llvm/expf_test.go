package llvm

import (
	"fmt"
	"math"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// expfInputs are the special values, the edges of exp's range (overflow
// past ln(MaxFloat32) = 88.7228, subnormal results below -87.34, zero below
// -103.97), and a sweep over [-110, 95] in steps that are not a multiple
// of ln 2, so every reduction offset r occurs.
func expfInputs() []float32 {
	xs := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)),
		1, -1, 88.72283, 88.72284, 89, 100, -87.33, -87.34, -95, -103.9, -103.98, -104, -150, 1e-30, -1e-30,
		math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32}
	for x := -110.0; x < 95; x += 0.0123 {
		xs = append(xs, float32(x))
	}
	return xs
}

// ulpsApart is how many f32 values lie between a and b (both finite or
// equal infinities).
func ulpsApart(a, b float32) int64 {
	key := func(f float32) int64 { // monotone in f
		u := int64(math.Float32bits(f))
		if u&(1<<31) != 0 {
			return -(u &^ (1 << 31))
		}
		return u
	}
	d := key(a) - key(b)
	if d < 0 {
		d = -d
	}
	return d
}

// TestExpf: the generated f32 exp is within 2 ulps of exp rounded from
// float64 over its whole range, subnormal results included; NaN stays NaN,
// and the edges (+Inf, 0, overflow to +Inf, underflow to 0) are exact.
// sigmoid and silu, which use it, agree with the reference executor.
func TestExpf(t *testing.T) {
	xs := expfInputs()
	n := len(xs)
	src := fmt.Sprintf("func @f(%%x: f32[%d]) -> (f32[%d], f32[%d], f32[%d]) {\n  %%e = exp %%x\n  %%s = sigmoid %%x\n  %%l = silu %%x\n  return %%e, %%s, %%l\n}\n", n, n, n, n)
	exe := compileText(t, "expf.tir", []byte(src))
	x, err := testBackend(t).compile(exe.Module, exe.Entry, nil)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float64, n)
	for i, v := range xs {
		vals[i] = float64(v)
	}
	in := []*backend.Buffer{backend.FromFloats(ir.Tensor(ir.F32, int64(n)), vals...)}
	got, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range xs {
		e, want := got[0].Float32s()[i], float32(math.Exp(float64(v)))
		switch {
		case math.IsNaN(float64(v)):
			if !math.IsNaN(float64(e)) {
				t.Errorf("exp(NaN) = %g", e)
			}
		case math.IsInf(float64(want), 0) || want == 0 || math.IsInf(float64(v), 0):
			if e != want {
				t.Errorf("exp(%g) = %g, want %g", v, e, want)
			}
		case ulpsApart(e, want) > 2:
			t.Errorf("exp(%g) = %g, want %g (%d ulps)", v, e, want, ulpsApart(e, want))
		}
	}
	want, err := cpu.Run(exe.Module, exe.Entry, in)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 3; i++ {
		if msg := compare(want[i], got[i]); msg != "" {
			t.Errorf("result %d: %s", i, msg)
		}
	}
}
