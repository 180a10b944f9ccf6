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
