package target

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
)

func TestCheckRefusesI64DotOnTPU(t *testing.T) {
	build := func(dt ir.DType) *ir.Module {
		m := ir.NewModule("m.tir")
		f := m.NewFunc("f", []string{"a", "b"}, []ir.Type{ir.Tensor(dt, 2, 3), ir.Tensor(dt, 3, 4)}, []ir.Type{ir.Tensor(dt, 2, 4)}, ir.Pos{File: "m.tir", Line: 1, Col: 1})
		b := ir.NewBuilder(f)
		b.Pos = ir.Pos{File: "m.tir", Line: 2, Col: 3}
		y := b.Op1(ir.OpDotGeneral, &ir.DotAttr{LhsContract: []int64{1}, RhsContract: []int64{0}}, f.Params[0], f.Params[1])
		b.Return(y)
		return m
	}
	v6e, _ := Lookup("tpu-v6e")
	cpu := CPU(Target{})
	err := v6e.Check(build(ir.I64))
	want := "m.tir:2:3: error: tpu-v6e has no 64-bit integer matmul: dot_general on i64 cannot be compiled for it (use i32, or a float type)"
	if err == nil || err.Error() != want {
		t.Errorf("v6e, i64: got %v, want %s", err, want)
	}
	for _, c := range []struct {
		target *Target
		dt     ir.DType
	}{{v6e, ir.I32}, {v6e, ir.F32}, {cpu, ir.I64}} {
		if err := c.target.Check(build(c.dt)); err != nil {
			t.Errorf("%s, %s: %v", c.target.Name(), c.dt, err)
		}
	}
}

// TestCheckRefusesF64ReducePrecisionOnTPU: XLA:TPU has no f64 form of
// reduce-precision; the cpu target and f32 are fine.
func TestCheckRefusesF64ReducePrecisionOnTPU(t *testing.T) {
	build := func(dt ir.DType) *ir.Module {
		m := ir.NewModule("m.tir")
		f := m.NewFunc("f", []string{"x"}, []ir.Type{ir.Tensor(dt, 2)}, []ir.Type{ir.Tensor(dt, 2)}, ir.Pos{File: "m.tir", Line: 1, Col: 1})
		b := ir.NewBuilder(f)
		b.Pos = ir.Pos{File: "m.tir", Line: 2, Col: 3}
		b.Return(b.Op1(ir.OpReducePrecision, &ir.ReducePrecisionAttr{ExponentBits: 8, MantissaBits: 23}, f.Params[0]))
		return m
	}
	v6e, _ := Lookup("tpu-v6e")
	want := "m.tir:2:3: error: tpu-v6e cannot compile reduce_precision on f64 (use f32)"
	if err := v6e.Check(build(ir.F64)); err == nil || err.Error() != want {
		t.Errorf("v6e, f64: got %v, want %s", err, want)
	}
	if err := v6e.Check(build(ir.F32)); err != nil {
		t.Errorf("v6e, f32: %v", err)
	}
	if err := CPU(Target{}).Check(build(ir.F64)); err != nil {
		t.Errorf("cpu, f64: %v", err)
	}
}
