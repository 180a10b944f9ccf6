package llvm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
)

// TestTriangularSolve: triangular_solve is generated for f32, f16 and bf16
// in all sixteen forms (left or right side, lower or upper, unit diagonal
// or not, a transposed or not), batched, and on a batch large enough to
// be split between threads; the solutions are the reference kernel's
// exactly.
func TestTriangularSolve(t *testing.T) {
	for _, dt := range []string{"f32", "f16", "bf16"} {
		var params, results, body, rets []string
		i := 0
		for _, left := range []bool{true, false} {
			for _, lower := range []bool{true, false} {
				for _, unit := range []bool{true, false} {
					for _, trans := range []bool{true, false} {
						bshape := "[2,4,3]"
						if !left {
							bshape = "[2,3,4]"
						}
						params = append(params, fmt.Sprintf("%%a%d: %s[2,4,4]", i, dt), fmt.Sprintf("%%b%d: %s%s", i, dt, bshape))
						results = append(results, dt+bshape)
						body = append(body, fmt.Sprintf("  %%x%d = triangular_solve %%a%d, %%b%d {left_side=%t, lower=%t, transpose_a=%t, unit_diagonal=%t}\n",
							i, i, i, left, lower, trans, unit))
						rets = append(rets, fmt.Sprintf("%%x%d", i))
						i++
					}
				}
			}
		}
		params = append(params, fmt.Sprintf("%%big: %s[64,32,32]", dt), fmt.Sprintf("%%rhs: %s[64,32,40]", dt))
		results = append(results, dt+"[64,32,40]")
		body = append(body, "  %y = triangular_solve %big, %rhs {left_side=true, lower=true, transpose_a=false, unit_diagonal=false}\n")
		rets = append(rets, "%y")
		src := "func @f(" + strings.Join(params, ", ") + ") -> (" + strings.Join(results, ", ") + ") {\n" +
			strings.Join(body, "") + "  return " + strings.Join(rets, ", ") + "\n}\n"
		b := testBackend(t)
		m, f, x := compileSrc(t, b, src)
		if fb := x.Fallbacks(); len(fb) != 0 {
			t.Fatalf("%s: triangular_solve falls back: %q", dt, fb)
		}
		in := cpu.RandomInputs(f, 11)
		for p := 0; p < len(in); p += 2 { // a well-conditioned diagonal
			dims := in[p].Type().Dims()
			n := dims[len(dims)-1]
			for j := 0; j < in[p].Len(); j++ {
				if (j/int(n))%int(n) == j%int(n) {
					in[p].SetFloat64(j, 4+in[p].Float64At(j))
				}
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
			if e, ok := sameFloats(want[r], got[r]); !ok {
				t.Errorf("%s %s: element %d is %v, the reference's %v", dt, strings.TrimSpace(body[r]), e, got[r].Float64At(e), want[r].Float64At(e))
			}
		}
	}
}
