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
