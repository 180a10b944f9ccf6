package stablehlo

import (
	"fmt"
	"math"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// TestComplexMaxMin: maximum and minimum of complex values order
// lexicographically on (real, imaginary), -0 equal to +0, an operand with
// a NaN part the result (a first), in c64 and c128.
func TestComplexMaxMin(t *testing.T) {
	nan := math.NaN()
	a := []complex128{complex(1.5, 2.5), complex(1.5, 7.5), complex(0, 1.5), complex(0, 1.5), complex(nan, 1), complex(1, 1), complex(1, nan), complex(2, 3)}
	b := []complex128{complex(7.5, 1.5), complex(1.5, 2.5), complex(math.Copysign(0, -1), 2.5), complex(0, 1.5), complex(9, 9), complex(1, nan), complex(nan, 0), complex(2, 3)}
	wantMax := []complex128{b[0], a[1], b[2], b[3], a[4], b[5], a[6], b[7]}
	wantMin := []complex128{a[0], b[1], a[2], b[3], a[4], b[5], a[6], b[7]}
	for _, ty := range []string{"f32", "f64"} {
		c := fmt.Sprintf("tensor<8xcomplex<%s>>", ty)
		src := fmt.Sprintf(`func.func @main(%%arg0: %[1]s, %%arg1: %[1]s) -> (%[1]s, %[1]s) {
  %%0 = stablehlo.maximum %%arg0, %%arg1 : %[1]s
  %%1 = stablehlo.minimum %%arg0, %%arg1 : %[1]s
  return %%0, %%1 : %[1]s, %[1]s
}
`, c)
		m, err := Parse("m.mlir", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		dt := ir.C64
		if ty == "f64" {
			dt = ir.C128
		}
		x, y := backend.New(ir.Tensor(dt, 8)), backend.New(ir.Tensor(dt, 8))
		x.WriteComplex128s(0, a)
		y.WriteComplex128s(0, b)
		res, err := cpu.Run(m, m.Func("main"), []*backend.Buffer{x, y})
		if err != nil {
			t.Fatal(err)
		}
		for k, want := range [][]complex128{wantMax, wantMin} {
			got := make([]complex128, 8)
			res[k].ReadComplex128s(0, got)
			for i := range got {
				if !sameComplex(got[i], want[i]) {
					t.Errorf("%s %s: element %d of %v and %v is %v, want %v", ty, []string{"maximum", "minimum"}[k], i, a[i], b[i], got[i], want[i])
				}
			}
		}
	}
}

// sameComplex compares parts bit for bit but NaN payloads (-0 is not +0).
func sameComplex(x, y complex128) bool {
	same := func(p, q float64) bool {
		return math.IsNaN(p) && math.IsNaN(q) || math.Float64bits(p) == math.Float64bits(q)
	}
	return same(real(x), real(y)) && same(imag(x), imag(y))
}

// TestBitcastBool: a bitcast from i1[..., W] packs the elements into W-bit
// values, the first the least significant bit, and one to i1 unpacks them,
// for signed, unsigned and float sides; a shape that does not fit is
// refused at the op.
func TestBitcastBool(t *testing.T) {
	src := `func.func @main(%arg0: tensor<2x8xi1>, %arg1: tensor<2xi8>, %arg2: tensor<f32>) -> (tensor<2xui8>, tensor<2x8xi1>, tensor<32xi1>, tensor<f32>) {
  %0 = stablehlo.bitcast_convert %arg0 : (tensor<2x8xi1>) -> tensor<2xui8>
  %1 = stablehlo.bitcast_convert %arg1 : (tensor<2xi8>) -> tensor<2x8xi1>
  %2 = stablehlo.bitcast_convert %arg2 : (tensor<f32>) -> tensor<32xi1>
  %3 = stablehlo.bitcast_convert %2 : (tensor<32xi1>) -> tensor<f32>
  return %0, %1, %2, %3 : tensor<2xui8>, tensor<2x8xi1>, tensor<32xi1>, tensor<f32>
}
`
	m, err := Parse("m.mlir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	bools := []float64{1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1} // 0x0d, 0x80
	res, err := cpu.Run(m, m.Func("main"), []*backend.Buffer{
		buffer(ir.Tensor(ir.I1, 2, 8), bools...), buffer(ir.Tensor(ir.I8, 2), -128, 13), buffer(ir.Tensor(ir.F32), -1.5)})
	if err != nil {
		t.Fatal(err)
	}
	if got := floats(res[0]); !sameFloats(got, []float64{0x0d, 0x80}) {
		t.Errorf("i1[2,8] to ui8: got %v, want [13 128]", got)
	}
	want1 := []float64{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0}
	if got := floats(res[1]); !sameFloats(got, want1) {
		t.Errorf("i8 [-128, 13] to i1: got %v, want %v", got, want1)
	}
	bits := math.Float32bits(-1.5)
	want2 := make([]float64, 32)
	for k := range want2 {
		want2[k] = float64(bits >> k & 1)
	}
	if got := floats(res[2]); !sameFloats(got, want2) {
		t.Errorf("f32 -1.5 to i1: got %v, want %v", got, want2)
	}
	if got := floats(res[3]); !sameFloats(got, []float64{-1.5}) {
		t.Errorf("back to f32: got %v, want -1.5", got)
	}
	bad := `func.func @main(%arg0: tensor<4xi1>) -> tensor<ui8> {
  %0 = stablehlo.bitcast_convert %arg0 : (tensor<4xi1>) -> tensor<ui8>
  return %0 : tensor<ui8>
}
`
	want := "e.mlir:2:8: error: stablehlo.bitcast_convert: a bitcast between tensor<4xi1> and tensor<ui8> needs tensor<8xi1> on the i1 side (an i1 per bit)"
	if _, err := Parse("e.mlir", []byte(bad)); err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// TestComplexBitcast: a c128 element's bytes are two c64 elements (its real
// part's f64 as the first's two f32, its imaginary part's as the second's),
// and back; other complex bitcasts are refused at the op.
func TestComplexBitcast(t *testing.T) {
	src := `func.func @main(%arg0: tensor<2xcomplex<f64>>) -> (tensor<2x2xcomplex<f32>>, tensor<2xcomplex<f64>>) {
  %0 = stablehlo.bitcast_convert %arg0 : (tensor<2xcomplex<f64>>) -> tensor<2x2xcomplex<f32>>
  %1 = stablehlo.bitcast_convert %0 : (tensor<2x2xcomplex<f32>>) -> tensor<2xcomplex<f64>>
  return %0, %1 : tensor<2x2xcomplex<f32>>, tensor<2xcomplex<f64>>
}
`
	m, err := Parse("m.mlir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	in := []complex128{complex(1.5, -2.25), complex(math.Float64frombits(0x0123456789ABCDEF), math.Float64frombits(0x11111111))}
	x := backend.New(ir.Tensor(ir.C128, 2))
	x.WriteComplex128s(0, in)
	res, err := cpu.Run(m, m.Func("main"), []*backend.Buffer{x})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res[0].Bytes(), x.Bytes(); string(got) != string(want) {
		t.Errorf("c128 to c64 bytes %x, want the c128's %x", got, want)
	}
	back := make([]complex128, 2)
	res[1].ReadComplex128s(0, back)
	for i := range in {
		if !sameComplex(back[i], in[i]) {
			t.Errorf("round trip element %d is %v, want %v", i, back[i], in[i])
		}
	}
	bad := `func.func @main(%arg0: tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f32>> {
  %0 = stablehlo.bitcast_convert %arg0 : (tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}
`
	want := "e.mlir:2:8: error: stablehlo.bitcast_convert: a bitcast of complex values is between tensor<...xcomplex<f64>> and tensor<...x2xcomplex<f32>>, got tensor<2xcomplex<f64>> to tensor<2xcomplex<f32>>"
	if _, err := Parse("e.mlir", []byte(bad)); err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
