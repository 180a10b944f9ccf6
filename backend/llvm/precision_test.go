package llvm

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// TestReducePrecision: reduce_precision is generated for f64, f32, f16 and
// bf16 and gives the reference kernel's values exactly (NaN for NaN): to
// narrower exponents and mantissas, to none (a NaN becomes ±inf), to the
// type's own layout and wider, on zeros, subnormals, values that round up
// into the exponent or overflow, infinities and NaNs, and on a tensor
// large enough to be split between threads.
func TestReducePrecision(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), 1, -1, 1.5, 1.00390625, 3.14159, -2.71828, 65504, 65520, 1e-5, 6e-8,
		1e-40, 3e38, 3.4028234e38, 1e300, 5e-324, math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(), 0.1, 255.5, 1 << 20}
	forms := [][2]int64{{5, 10}, {8, 7}, {5, 2}, {4, 3}, {1, 0}, {8, 0}, {2, 1}, {11, 52}, {8, 23}, {20, 60}}
	for _, dt := range []ir.DType{ir.F64, ir.F32, ir.F16, ir.BF16} {
		var sig, body, rets []string
		for i, f := range forms {
			n := len(special)
			if i == 0 {
				n = 70000
			}
			sig = append(sig, fmt.Sprintf("%s[%d]", dt, n))
			body = append(body, fmt.Sprintf("  %%r%d = reduce_precision %%x%d {exponent_bits=%d, mantissa_bits=%d}\n", i, i, f[0], f[1]))
			rets = append(rets, fmt.Sprintf("%%r%d", i))
		}
		params := make([]string, len(sig))
		for i, s := range sig {
			params[i] = fmt.Sprintf("%%x%d: %s", i, s)
		}
		src := "func @f(" + strings.Join(params, ", ") + ") -> (" + strings.Join(sig, ", ") + ") {\n" +
			strings.Join(body, "") + "  return " + strings.Join(rets, ", ") + "\n}\n"
		b := testBackend(t)
		m, f, x := compileSrc(t, b, src)
		if fb := x.Fallbacks(); len(fb) != 0 {
			t.Fatalf("%s: reduce_precision falls back: %q", dt, fb)
		}
		in := cpu.RandomInputs(f, 5)
		for _, buf := range in[1:] {
			for i, v := range special {
				buf.SetFloat64(i, v)
			}
		}
		want, err := cpu.Run(m, f, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		for r := range want {
			if i, ok := sameFloats(want[r], got[r]); !ok {
				t.Errorf("%s e%dm%d: element %d is %v, the reference's %v (input %v)", dt, forms[r][0], forms[r][1], i,
					got[r].Float64At(i), want[r].Float64At(i), in[r].Float64At(i))
			}
		}
	}
}

// sameFloats reports whether a and b hold the same values bit for bit, any
// NaN matching any NaN, and else the first element that differs.
func sameFloats(a, b *backend.Buffer) (int, bool) {
	for i := range a.Len() {
		x, y := a.Float64At(i), b.Float64At(i)
		if math.Float64bits(x) != math.Float64bits(y) && !(math.IsNaN(x) && math.IsNaN(y)) {
			return i, false
		}
	}
	return 0, true
}
