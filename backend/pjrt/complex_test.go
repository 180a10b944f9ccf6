package pjrt

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestCPUComplexBuffers: c64 and c128 buffers travel to the device and back
// as (re, im) pairs (PJRT_Buffer_Type C64 and C128), and XLA computes on
// them: (1+2i)(3-1i) = 5+5i, and |3+4i| = 5.
func TestCPUComplexBuffers(t *testing.T) {
	c := cpuClient(t)
	const module = `module @m {
  func.func public @main(%a: tensor<2xcomplex<f32>>, %b: tensor<complex<f64>>) -> (tensor<2xcomplex<f32>>, tensor<f64>) {
    %0 = stablehlo.multiply %a, %a : tensor<2xcomplex<f32>>
    %1 = stablehlo.abs %b : (tensor<complex<f64>>) -> tensor<f64>
    return %0, %1 : tensor<2xcomplex<f32>>, tensor<f64>
  }
}
`
	ta, tb := ir.Tensor(ir.C64, 2), ir.Tensor(ir.C128)
	exe, err := c.Compile(module, []ir.Type{ta, tb}, DefaultCompileOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	a, err := c.FromHost(ta, f32s(1, 2, 3, -1))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	bb := make([]byte, 16)
	binary.LittleEndian.PutUint64(bb, math.Float64bits(3))
	binary.LittleEndian.PutUint64(bb[8:], math.Float64bits(4))
	b, err := c.FromHost(tb, bb)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	out, err := exe.Execute([]*Buffer{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || !out[0].Type().Equal(ta) || !out[1].Type().Equal(ir.Tensor(ir.F64)) {
		t.Fatalf("results %v", out)
	}
	got0, err := out[0].ToHost()
	if err != nil {
		t.Fatal(err)
	}
	if want := f32s(-3, 4, 8, -6); string(got0) != string(want) {
		t.Errorf("a*a = % x, want % x", got0, want)
	}
	got1, _ := out[1].ToHost()
	if v := math.Float64frombits(binary.LittleEndian.Uint64(got1)); v != 5 {
		t.Errorf("|3+4i| = %v, want 5", v)
	}
	for _, o := range out {
		o.Close()
	}
}
