package cpu

import (
	"math"
	"math/cmplx"
	"math/rand"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

func randomComplex(r *rand.Rand, n int) []complex128 {
	v := make([]complex128, n)
	for i := range v {
		v[i] = complex(r.Float64()*4-2, r.Float64()*4-2)
	}
	return v
}

// runFFT runs one fft and returns its result as complex128 values.
func runFFT(t *testing.T, kind ir.FFTType, length []int64, x *backend.Buffer) (*backend.Buffer, []complex128) {
	t.Helper()
	res, err := runOp(ir.OpFFT, &ir.FFTAttr{Type: kind, Length: length}, nil, x)
	if err != nil {
		t.Fatalf("%s %v on %s: %v", kind, length, x.Type(), err)
	}
	got := make([]complex128, res[0].Len())
	res[0].ReadComplex128s(0, got)
	return res[0], got
}

func checkClose(t *testing.T, what string, got, want []complex128, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if cmplx.Abs(got[i]-want[i]) > tol {
			t.Errorf("%s: element %d is %v, want %v (tolerance %g)", what, i, got[i], want[i], tol)
			return
		}
	}
}

// directDFT2 is the definition over both axes of an [r, c] array, each
// twiddle from the exact angle: the test's independent oracle.
func directDFT2(x []complex128, r, c int, sign float64) []complex128 {
	out := make([]complex128, len(x))
	for k1 := 0; k1 < r; k1++ {
		for k2 := 0; k2 < c; k2++ {
			var s complex128
			for j1 := 0; j1 < r; j1++ {
				for j2 := 0; j2 < c; j2++ {
					a := sign * 2 * math.Pi * (float64(j1*k1)/float64(r) + float64(j2*k2)/float64(c))
					s += x[j1*c+j2] * cmplx.Exp(complex(0, a))
				}
			}
			out[k1*c+k2] = s
		}
	}
	return out
}

// TestFFTSpecExamples: the specification's examples (fft of [1+2i, 3-4i],
// rfft of [1, 2, 3, 4]) and their inverses.
func TestFFTSpecExamples(t *testing.T) {
	c2, f4, c3 := ir.Tensor(ir.C128, 2), ir.Tensor(ir.F64, 4), ir.Tensor(ir.C128, 3)
	_, got := runFFT(t, ir.FFTForward, []int64{2}, cbuf(c2, 1+2i, 3-4i))
	checkClose(t, "fft", got, []complex128{4 - 2i, -2 + 6i}, 1e-15)
	_, got = runFFT(t, ir.FFTInverse, []int64{2}, cbuf(c2, 4-2i, -2+6i))
	checkClose(t, "ifft", got, []complex128{1 + 2i, 3 - 4i}, 1e-15)
	res, got := runFFT(t, ir.FFTReal, []int64{4}, F(f4, 1, 2, 3, 4))
	if !res.Type().Equal(c3) {
		t.Fatalf("rfft gave %s, want %s", res.Type(), c3)
	}
	checkClose(t, "rfft", got, []complex128{10, -2 + 2i, -2}, 1e-14)
	// The imaginary parts of the first and the middle element are ignored.
	res, got = runFFT(t, ir.FFTRealInverse, []int64{4}, cbuf(c3, 10+7i, -2+2i, -2-5i))
	if !res.Type().Equal(f4) {
		t.Fatalf("irfft gave %s, want %s", res.Type(), f4)
	}
	checkClose(t, "irfft", got, []complex128{1, 2, 3, 4}, 1e-14)
}

// TestFFTMatchesDefinition: both paths (radix-2 for 8, the direct sum for
// 6 and 5) against the definition over two axes, forward and inverse, with
// leading batch dimensions.
func TestFFTMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, sh := range [][2]int{{8, 4}, {6, 5}, {1, 8}, {3, 7}} {
		rows, cols := sh[0], sh[1]
		x := randomComplex(r, 2*rows*cols)
		typ := ir.Tensor(ir.C128, 2, int64(rows), int64(cols))
		_, fwd := runFFT(t, ir.FFTForward, []int64{int64(rows), int64(cols)}, cbuf(typ, x...))
		_, inv := runFFT(t, ir.FFTInverse, []int64{int64(rows), int64(cols)}, cbuf(typ, x...))
		for b := 0; b < 2; b++ {
			in := x[b*rows*cols : (b+1)*rows*cols]
			checkClose(t, "fft", fwd[b*rows*cols:(b+1)*rows*cols], directDFT2(in, rows, cols, -1), 1e-12)
			want := directDFT2(in, rows, cols, 1)
			for i := range want {
				want[i] /= complex(float64(rows*cols), 0)
			}
			checkClose(t, "ifft", inv[b*rows*cols:(b+1)*rows*cols], want, 1e-13)
		}
	}
}

// TestFFTRoundTrips: irfft(rfft(x)) is x for even and odd lengths over
// three axes, and rfft keeps the first n/2+1 elements of the full fft; c64
// results are f32-rounded once, so they agree with c128's within f32's
// precision.
func TestFFTRoundTrips(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, n := range []int64{6, 5} {
		shape := []int64{2, 3, 4, n}
		length := shape[1:]
		x := make([]float64, 2*3*4*n)
		for i := range x {
			x[i] = r.Float64()*4 - 2
		}
		spec, half := runFFT(t, ir.FFTReal, length, F(ir.Tensor(ir.F64, shape...), x...))
		xc := make([]complex128, len(x))
		for i, v := range x {
			xc[i] = complex(v, 0)
		}
		_, back := runFFT(t, ir.FFTRealInverse, length, spec)
		checkClose(t, "irfft(rfft(x))", back, xc, 1e-13)
		_, full := runFFT(t, ir.FFTForward, length, cbuf(ir.Tensor(ir.C128, shape...), xc...))
		h := int(n/2 + 1)
		var kept []complex128
		for row := 0; row < len(full)/int(n); row++ {
			kept = append(kept, full[row*int(n):row*int(n)+h]...)
		}
		checkClose(t, "rfft", half, kept, 1e-12)
		_, c64 := runFFT(t, ir.FFTReal, length, F(ir.Tensor(ir.F32, shape...), x...))
		checkClose(t, "rfft f32", c64, half, 1e-4)
	}
}

// TestFFTEmpty: a zero-size batch or transformed axis gives an empty result
// of the inferred type.
func TestFFTEmpty(t *testing.T) {
	res, _ := runFFT(t, ir.FFTForward, []int64{4}, cbuf(ir.Tensor(ir.C64, 0, 4)))
	if !res.Type().Equal(ir.Tensor(ir.C64, 0, 4)) {
		t.Errorf("fft of c64[0,4] gave %s", res.Type())
	}
	res, _ = runFFT(t, ir.FFTRealInverse, []int64{0}, cbuf(ir.Tensor(ir.C64, 3, 0)))
	if !res.Type().Equal(ir.Tensor(ir.F32, 3, 0)) {
		t.Errorf("irfft of c64[3,0] with length [0] gave %s", res.Type())
	}
}
