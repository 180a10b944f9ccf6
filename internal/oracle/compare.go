// Package oracle is tpucc's truth check: the CPU executor's numbers against
// real XLA's for the same program and inputs. Its tests (run them with
// `go test ./internal/oracle`; they need `make venv`) lower random programs
// from internal/progen and every golden and example module with
// lower/stablehlo, run them with backend/cpu and with XLA:CPU through
// tools/xlacheck (one harness process for all), and compare with Compare.
// A missing harness fails the tests: a skipped oracle is a failed oracle.
//
// # Tolerances
//
// Integers and bools compare exactly. Floats compare as
//
//	|want - got| <= Atol + Rtol*max(|want|, rms(want))
//
// where rms(want) is the root mean square of the tensor's finite elements:
// the rounding error of a sum is relative to the magnitude of what is summed,
// which a result near zero does not show but the tensor's typical magnitude
// does (a 64x1024 by 1024x4096 f32 matmul differs from the f64-accumulated
// result by up to 2.4e-6 of the RMS, but by 157 times Rtol relative to its
// smallest elements). NaN matches any NaN (payloads and signs differ between
// XLA and Go), an infinity matches only the same infinity, and -0 matches +0
// (XLA may simplify x+0 to x, keeping a -0). Values the program generator
// proves exact (progen.Output.Exact) compare with zero tolerance.
//
//	dtype  Rtol   Atol   ulps    worst seen: random programs | examples
//	f64    1e-12  1e-12  ~4500   1.5e-16                     | -
//	f32    1e-5   1e-5   ~84     2e-7                        | 4.6e-6 of the RMS
//	f16    5e-3   5e-3   ~5      one ulp, in 1 of 3786       | -
//	bf16   4e-2   4e-2   ~5      none in 4482                | -
//
// "Worst seen" is the largest difference on approximate results, relative to
// the element (600 random programs, seeds 5000..5599; the examples at input
// seed 1). f32 is set by the examples: a transformer block's chained
// 256..512-long f32 contractions, which XLA accumulates in f32 and the
// executor in f64. f16 and bf16 ops compute in f32 and round once on both
// sides, so their results agree but for a rare one-ulp flip; 5 ulps leave room
// for a few flips in a chain.
//
// More evidence (jax 0.10.2, XLA:CPU on x86-64, measured against numpy): XLA's
// f32 exp, log, tanh and sin differ from correctly rounded f64 results by at
// most 7.9e-8, 1.2e-7, 2.7e-7 and 6.3e-8 relative on [-4, 4]; f32 and f64 add,
// sub, mul, div and sqrt are correctly rounded (bit-identical to numpy on
// 200000 random pairs), except that a multiply feeding an add is contracted
// into an FMA; f16 and bf16 ops are rounded one by one (no excess precision),
// with or without XLA_FLAGS=--xla_allow_excess_precision=false; and denormal
// f32, f64 and bf16 results are flushed to zero.
//
// xlacheck.py sets --xla_allow_excess_precision=false in XLA_FLAGS anyway:
// XLA:CPU skips the f32 round trips of f16/bf16 values (simplify-fp-conversions)
// on the CPUs where it runs that pass only when excess precision is allowed,
// and the semantics contract rounds every f16/bf16 op.
package oracle

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/internal/progen"
	"github.com/tpucc/tpucc/ir"
)

// Tolerance is the allowance for one float dtype (see the package doc).
type Tolerance = progen.Tolerance

// For returns the tolerance of dt (zero for integers and i1). The table lives
// in progen, whose generator keeps approximate values within it.
func For(dt ir.DType) Tolerance { return progen.DefaultTolerance(dt) }

// Compare checks got (XLA's) against want (the executor's) within the
// tolerance of their dtype.
// A complex tensor takes the tolerance of its part type.
func Compare(want, got *backend.Buffer) error {
	return CompareWithin(want, got, For(want.Type().DType))
}

// CompareExact checks that got equals want: bit for bit, but for NaN
// payloads and the sign of zero.
func CompareExact(want, got *backend.Buffer) error { return CompareWithin(want, got, Tolerance{}) }

// CompareWithin checks got against want within tol. The error names the
// first differing element by its index, both values and the allowance, and
// says how many elements differ.
func CompareWithin(want, got *backend.Buffer, tol Tolerance) error {
	if want == nil || got == nil {
		return fmt.Errorf("missing tensor (want %v, got %v)", want != nil, got != nil)
	}
	wt, gt := want.Type(), got.Type()
	if wt.DType != gt.DType || !wt.SameShape(gt) {
		return fmt.Errorf("type differs: want %s, got %s", wt, gt)
	}
	dt := wt.DType
	n := want.Len()
	if got.Len() != n {
		return fmt.Errorf("element count differs: want %d, got %d", n, got.Len())
	}
	if dt.IsComplex() {
		return compareParts(want, got, tol)
	}
	// The comparison reads both as float64 (or int64): test code, where the
	// copies cost nothing that matters.
	var wf, gf []float64
	var wi, gi []int64
	if dt.IsFloat() {
		wf, gf = make([]float64, n), make([]float64, n)
		want.ReadFloat64s(0, wf)
		got.ReadFloat64s(0, gf)
	} else {
		wi, gi = make([]int64, n), make([]int64, n)
		want.ReadInt64s(0, wi)
		got.ReadInt64s(0, gi)
	}
	bad, first := 0, -1
	worst, scale := 0.0, 0.0
	if dt.IsFloat() {
		scale = rms(wf)
	}
	for i := 0; i < n; i++ {
		var ok bool
		if dt.IsFloat() {
			var excess float64
			ok, excess = closeFloat(wf[i], gf[i], tol, scale)
			worst = math.Max(worst, excess)
		} else {
			ok = wi[i] == gi[i]
		}
		if !ok {
			bad++
			if first < 0 {
				first = i
			}
		}
	}
	if bad == 0 {
		return nil
	}
	idx := index(wt.Dims(), first)
	var w, g string
	if dt.IsFloat() {
		wf, gf := wf[first], gf[first]
		w, g = formatFloat(wf, dt), formatFloat(gf, dt)
		msg := fmt.Sprintf("element %s: want %s, got %s", idx, w, g)
		if d := math.Abs(wf - gf); !math.IsNaN(d) && !math.IsInf(d, 0) {
			msg += fmt.Sprintf(" (|diff| %.3g, allowed %.3g)", d, allowance(tol, wf, scale))
		}
		msg += fmt.Sprintf("; %d of %d elements differ", bad, n)
		if bad > 1 && !math.IsInf(worst, 0) {
			msg += fmt.Sprintf(", the worst by %.3gx its allowance", worst)
		}
		return fmt.Errorf("%s", msg)
	}
	return fmt.Errorf("element %s: want %d, got %d; %d of %d elements differ", idx, wi[first], gi[first], bad, n)
}

// compareParts compares complex tensors as tensors of their parts, with a
// last dimension of 2 (index 0 the real part, 1 the imaginary one): the
// same bytes, viewed without copying.
func compareParts(want, got *backend.Buffer, tol Tolerance) error {
	t := ir.Tensor(want.Type().DType.ComplexPart(), append(want.Type().Dims(), 2)...)
	w, err := backend.View(t, want.Bytes())
	if err != nil {
		return err
	}
	g, err := backend.View(t, got.Bytes())
	if err != nil {
		return err
	}
	return CompareWithin(w, g, tol)
}

// allowance is what tol allows for an element w of a tensor of RMS scale.
func allowance(tol Tolerance, w, scale float64) float64 {
	return tol.Atol + tol.Rtol*math.Max(math.Abs(w), scale)
}

// rms is the root mean square of the finite elements of xs (0 if none).
func rms(xs []float64) float64 {
	sum, n := 0.0, 0
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			sum += x * x
			n++
		}
	}
	if n == 0 || math.IsInf(sum, 0) {
		return 0
	}
	return math.Sqrt(sum / float64(n))
}

// closeFloat compares one element; excess is |diff|/allowance when finite.
func closeFloat(w, g float64, tol Tolerance, scale float64) (ok bool, excess float64) {
	switch {
	case math.IsNaN(w) || math.IsNaN(g):
		return math.IsNaN(w) && math.IsNaN(g), math.Inf(1)
	case math.IsInf(w, 0) || math.IsInf(g, 0):
		return w == g, math.Inf(1)
	case w == g: // -0 == +0
		return true, 0
	}
	d := math.Abs(w - g)
	allowed := allowance(tol, w, scale)
	if allowed == 0 {
		return false, math.Inf(1)
	}
	return d <= allowed, d / allowed
}

// index spells the multi-index of row-major element i of shape dims: [1,0,2].
func index(dims []int64, i int) string {
	parts := make([]string, len(dims))
	for k := len(dims) - 1; k >= 0; k-- {
		if dims[k] > 0 {
			parts[k] = strconv.FormatInt(int64(i)%dims[k], 10)
			i /= int(dims[k])
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// formatFloat writes v as .tir would, and its bits when that is ambiguous.
func formatFloat(v float64, dt ir.DType) string {
	s := ir.FormatFloat(v, dt)
	if v == 0 && math.Signbit(v) {
		s = "-" + strings.TrimPrefix(s, "-")
	}
	return s
}
