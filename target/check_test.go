package target

import (
	"fmt"
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
	for _, dt := range []ir.DType{ir.I64, ir.U64} {
		err := v6e.Check(build(dt))
		want := "m.tir:2:3: error: tpu-v6e has no 64-bit integer matmul: dot_general on " + dt.String() + " cannot be compiled for it (use i32, or a float type)"
		if err == nil || err.Error() != want {
			t.Errorf("v6e, %s: got %v, want %s", dt, err, want)
		}
	}
	for _, c := range []struct {
		target *Target
		dt     ir.DType
	}{{v6e, ir.I32}, {v6e, ir.F32}, {v6e, ir.I4}, {v6e, ir.U16}, {cpu, ir.I64}} {
		if err := c.target.Check(build(c.dt)); err != nil {
			t.Errorf("%s, %s: %v", c.target.Name(), c.dt, err)
		}
	}
}

// TestCheckRefusesC128OnTPU: a c128 parameter and each instruction with a
// c128 result are refused by name for a TPU; c64 is accepted, and the CPU
// accepts c128.
func TestCheckRefusesC128OnTPU(t *testing.T) {
	build := func(dt ir.DType) *ir.Module {
		m := ir.NewModule("m.tir")
		f := m.NewFunc("f", []string{"z"}, []ir.Type{ir.Tensor(dt, 4)}, []ir.Type{ir.Tensor(dt.ComplexPart(), 4)}, ir.Pos{File: "m.tir", Line: 1, Col: 1})
		f.Params[0].Pos = ir.Pos{File: "m.tir", Line: 1, Col: 9}
		b := ir.NewBuilder(f)
		b.Pos = ir.Pos{File: "m.tir", Line: 2, Col: 3}
		y := b.Op1(ir.OpDiv, nil, f.Params[0], f.Params[0])
		b.Pos = ir.Pos{File: "m.tir", Line: 3, Col: 3}
		b.Return(b.Op1(ir.OpAbs, nil, y))
		return m
	}
	v6e, _ := Lookup("tpu-v6e")
	err := v6e.Check(build(ir.C128))
	want := "m.tir:1:9: error: tpu-v6e has no c128: parameter %z is c128, which cannot be compiled for it (use c64)\n" +
		"m.tir:2:3: error: tpu-v6e has no c128: div is c128, which cannot be compiled for it (use c64)"
	if err == nil || err.Error() != want {
		t.Errorf("v6e, c128: got\n%v\nwant\n%s", err, want)
	}
	if err := v6e.Check(build(ir.C64)); err != nil {
		t.Errorf("v6e, c64: %v", err)
	}
	if err := CPU(Target{}).Check(build(ir.C128)); err != nil {
		t.Errorf("cpu, c128: %v", err)
	}
}

// TestCheckInt2OnTPU: i2 and u2 values are refused for TPU at their
// definitions (libtpu's compile-only client on v5e and v6e rejects small ones
// and aborts on some modules holding large ones); i4 and u4 compile.
func TestCheckInt2OnTPU(t *testing.T) {
	build := func(ty ir.Type) *ir.Module {
		m := ir.NewModule("m.tir")
		f := m.NewFunc("f", []string{"a"}, []ir.Type{ty}, []ir.Type{ty}, ir.Pos{File: "m.tir", Line: 1, Col: 1})
		b := ir.NewBuilder(f)
		b.Pos = ir.Pos{File: "m.tir", Line: 2, Col: 3}
		b.Return(b.Op1(ir.OpAdd, nil, f.Params[0], f.Params[0]))
		return m
	}
	v6e, _ := Lookup("tpu-v6e")
	for _, ty := range []ir.Type{ir.Tensor(ir.I4, 3), ir.Tensor(ir.U4, 16, 128)} {
		if err := v6e.Check(build(ty)); err != nil {
			t.Errorf("%s: %v", ty, err)
		}
	}
	for _, ty := range []ir.Type{ir.Tensor(ir.I2, 4), ir.Tensor(ir.U2, 16, 128)} {
		err := v6e.Check(build(ty))
		why := "m.tir:%s: error: tpu-v6e cannot compile " + ty.DType.String() + " values (libtpu rejects or aborts on them): %s " + ty.String() + " (use i4 or i8)"
		want := fmt.Sprintf(why, "1:1", "parameter") + "\n" + fmt.Sprintf(why, "2:3", "add")
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", ty, err, want)
		}
	}
	if err := CPU(Target{}).Check(build(ir.Tensor(ir.I2, 4))); err != nil {
		t.Errorf("cpu: %v", err)
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

// TestCheckRngDefaultStateOnTPU: libtpu's default generator takes a u64[2]
// state only; u64[3] with philox, and either state on the CPU target, pass.
func TestCheckRngDefaultStateOnTPU(t *testing.T) {
	build := func(alg ir.RngAlgorithm, words int64) *ir.Module {
		m := ir.NewModule("m.tir")
		st := ir.Tensor(ir.U64, words)
		f := m.NewFunc("f", []string{"s"}, []ir.Type{st}, []ir.Type{st, ir.Tensor(ir.U32, 4)}, ir.Pos{File: "m.tir", Line: 1, Col: 1})
		b := ir.NewBuilder(f)
		b.Pos = ir.Pos{File: "m.tir", Line: 2, Col: 3}
		in, err := b.Emit(ir.OpRngBitGenerator, &ir.RngAttr{Algorithm: alg}, []ir.Type{st, ir.Tensor(ir.U32, 4)}, f.Params[0])
		if err != nil {
			t.Fatal(err)
		}
		b.Return(in.Results...)
		return m
	}
	v6e, _ := Lookup("tpu-v6e")
	want := "m.tir:2:3: error: tpu-v6e cannot compile rng_bit_generator {algorithm=default} of a u64[3] state (use u64[2], or algorithm=philox)"
	if err := v6e.Check(build(ir.RngDefault, 3)); err == nil || err.Error() != want {
		t.Errorf("v6e, default u64[3]: got %v, want %s", err, want)
	}
	for _, c := range []struct {
		alg   ir.RngAlgorithm
		words int64
	}{{ir.RngDefault, 2}, {ir.RngPhilox, 3}, {ir.RngThreeFry, 2}} {
		if err := v6e.Check(build(c.alg, c.words)); err != nil {
			t.Errorf("v6e, %s u64[%d]: %v", c.alg, c.words, err)
		}
	}
	if err := CPU(Target{}).Check(build(ir.RngDefault, 3)); err != nil {
		t.Errorf("cpu, default u64[3]: %v", err)
	}
}

// TestCheckDotAlgorithmOnTPU: a dot_general algorithm other than bf16 x
// bf16 in f32 is refused for TPU (libtpu: "Dot algorithm
// ALG_DOT_F32_F32_F32 is not supported"); the CPU target takes each.
func TestCheckDotAlgorithmOnTPU(t *testing.T) {
	build := func(dt ir.DType) *ir.Module {
		m := ir.NewModule("m.tir")
		x := ir.Tensor(dt, 2, 2)
		f := m.NewFunc("f", []string{"x"}, []ir.Type{x}, []ir.Type{ir.Tensor(ir.F32, 2, 2)}, ir.Pos{File: "m.tir", Line: 1, Col: 1})
		b := ir.NewBuilder(f)
		b.Pos = ir.Pos{File: "m.tir", Line: 2, Col: 3}
		acc, _ := ir.DotAccumulation(dt)
		alg := &ir.DotAlgorithm{Lhs: dt, Rhs: dt, Acc: acc, LhsComponents: 1, RhsComponents: 1, Primes: 1}
		a := &ir.DotAttr{LhsContract: []int64{1}, RhsContract: []int64{0}, Algorithm: alg}
		in, err := b.Emit(ir.OpDotGeneral, a, []ir.Type{ir.Tensor(ir.F32, 2, 2)}, f.Params[0], f.Params[0])
		if err != nil {
			t.Fatal(err)
		}
		b.Return(in.Results...)
		return m
	}
	v6e, _ := Lookup("tpu-v6e")
	for _, dt := range []ir.DType{ir.F32, ir.F16} {
		want := fmt.Sprintf("m.tir:2:3: error: tpu-v6e cannot compile dot_general {algorithm=[%s,%s,f32,...]}: of the algorithms tpucc keeps, it has bf16 x bf16 in f32 alone (drop the algorithm, or give bf16 operands)", dt, dt)
		if err := v6e.Check(build(dt)); err == nil || err.Error() != want {
			t.Errorf("v6e, %s: got %v, want %s", dt, err, want)
		}
		if err := CPU(Target{}).Check(build(dt)); err != nil {
			t.Errorf("cpu, %s: %v", dt, err)
		}
	}
	if err := v6e.Check(build(ir.BF16)); err != nil {
		t.Errorf("v6e, bf16: %v", err)
	}
}

// TestCheckF6OnTPU: f6 values are refused for TPU where they are defined
// (libtpu rejects a convert to them, or crashes); f8 and f4 values pass,
// and the CPU target takes f6.
func TestCheckF6OnTPU(t *testing.T) {
	build := func(dt ir.DType) *ir.Module {
		m := ir.NewModule("m.tir")
		f := m.NewFunc("f", []string{"x"}, []ir.Type{ir.Tensor(ir.F32, 4)}, []ir.Type{ir.Tensor(dt, 4)}, ir.Pos{File: "m.tir", Line: 1, Col: 1})
		b := ir.NewBuilder(f)
		b.Pos = ir.Pos{File: "m.tir", Line: 2, Col: 3}
		in, err := b.Emit(ir.OpConvert, nil, []ir.Type{ir.Tensor(dt, 4)}, f.Params[0])
		if err != nil {
			t.Fatal(err)
		}
		b.Return(in.Result())
		return m
	}
	v6e, _ := Lookup("tpu-v6e")
	for _, dt := range []ir.DType{ir.F8E4M3FN, ir.F8E5M2, ir.F8E8M0FNU, ir.F4E2M1FN} {
		if err := v6e.Check(build(dt)); err != nil {
			t.Errorf("%s: %v", dt, err)
		}
	}
	for _, dt := range []ir.DType{ir.F6E2M3FN, ir.F6E3M2FN} {
		want := "m.tir:2:3: error: tpu-v6e cannot compile " + dt.String() + " values (libtpu rejects or crashes on them): convert " +
			dt.String() + "[4] (use an f8 type)"
		if err := v6e.Check(build(dt)); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", dt, err, want)
		}
	}
	if err := CPU(Target{}).Check(build(ir.F6E2M3FN)); err != nil {
		t.Errorf("cpu: %v", err)
	}
}
