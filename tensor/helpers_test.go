package tensor_test

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// Shorthands: an f32 tensor from values and a shape, and an i32 one.
func f32(shape []int64, vals ...float32) *tensor.Tensor { return tensor.FromSlice(vals, shape...) }
func i32(shape []int64, vals ...int32) *tensor.Tensor   { return tensor.FromSlice(vals, shape...) }
func sh(dims ...int64) []int64                          { return dims }

// near reports whether got is want within a relative (or, near zero,
// absolute) tolerance; NaN equals NaN and infinities must match exactly.
func near(got, want, tol float64) bool {
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0) || want == 0:
		return got == want
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// expect checks t's type (as .tir spells it) and its elements.
func expect(t *testing.T, got *tensor.Tensor, wantType string, want ...float64) {
	t.Helper()
	expectTol(t, got, wantType, 1e-6, want...)
}

func expectTol(t *testing.T, got *tensor.Tensor, wantType string, tol float64, want ...float64) {
	t.Helper()
	if s := got.Type().String(); s != wantType {
		t.Errorf("type %s, want %s", s, wantType)
		return
	}
	vals := got.Float64s()
	if len(vals) != len(want) {
		t.Errorf("%d elements %v, want %d %v", len(vals), vals, len(want), want)
		return
	}
	for i := range vals {
		if !near(vals[i], want[i], tol) {
			t.Errorf("%s: element %d is %v, want %v (all: %v)", wantType, i, vals[i], want[i], vals)
			return
		}
	}
}

// f32r rounds a float64 to f32, for expected values computed with math.
func f32r(x float64) float64 { return float64(float32(x)) }

// at records the line of its caller: written on the same line as the
// operation under test, it gives the line an error must name.
func at(line *int) { _, _, *line, _ = runtime.Caller(1) }

// catch runs f and returns the *tensor.Error it panics with (nil if none;
// another panic fails the test).
func catch(t *testing.T, f func()) (e *tensor.Error) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		var ok bool
		if e, ok = r.(*tensor.Error); !ok {
			t.Errorf("panic with %T %v, want *tensor.Error", r, r)
		}
	}()
	f()
	return nil
}

// wantErr runs f, which must panic with a *tensor.Error whose text is
// "FILE:LINE: " + msg, the line being the one at recorded.
func wantErr(t *testing.T, file string, f func(line *int), msg string) {
	t.Helper()
	var line int
	e := catch(t, func() { f(&line) })
	if e == nil {
		t.Errorf("no error, want %q", msg)
		return
	}
	want := fmt.Sprintf("%s:%d: %s", file, line, msg)
	if e.Error() != want {
		t.Errorf("error\n  %s\nwant\n  %s", e.Error(), want)
	}
}

var (
	inf   = math.Inf(1)
	nan   = math.NaN()
	nan32 = float32(math.NaN())
)

func scalar(v float64) *tensor.Tensor { return tensor.Scalar(v, ir.F32) }
