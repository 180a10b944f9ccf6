package compile_test

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// counting is a backend that runs on the reference executor and counts what
// the runtime asks of it.
type counting struct{ compiles, runs *atomic.Int64 }

func (c counting) Name() string        { return "counting" }
func (c counting) Fingerprint() string { return "counting-1" }
func (c counting) Compile(p *backend.Program) (backend.Executable, error) {
	c.compiles.Add(1)
	lastHLO.Store(p.HLO)
	x, err := cpu.Reference{}.Compile(p)
	return countingExec{x, c.runs}, err
}

type countingExec struct {
	backend.Executable
	runs *atomic.Int64
}

func (e countingExec) Run(args []*backend.Buffer) ([]*backend.Buffer, error) {
	e.runs.Add(1)
	return e.Executable.Run(args)
}

var (
	compiles, runs atomic.Int64
	lastHLO        atomic.Value // the StableHLO of the last program compiled
)

func init() {
	backend.Register("counting", func() (backend.Backend, error) { return counting{&compiles, &runs}, nil })
}

// TestBackendOption: compiled functions run on the backend they name, which
// compiles each program once; an unknown backend is an error of New.
func TestBackendOption(t *testing.T) {
	f := func(x *tensor.Tensor) *tensor.Tensor { return x.Exp().Add(x) }
	// Other tests use the counting backend too, in an order -shuffle may
	// change: count from here, in a cache of this test's own (the process's
	// shared one keeps the program between runs of go test -count=N).
	compiles0, runs0 := compiles.Load(), runs.Load()
	c, err := compile.New(f, compile.Backend("counting"), memory())
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.Full(0.5, ir.F32, 3)
	for range 3 {
		out, err := c.Call(x)
		if err != nil {
			t.Fatal(err)
		}
		if d := agree(out[0], f(x)); d != "" {
			t.Error(d)
		}
	}
	if n, r := compiles.Load()-compiles0, runs.Load()-runs0; n != 1 || r != 3 {
		t.Errorf("backend compiled %d times and ran %d times, want 1 and 3", n, r)
	}
	_, err = compile.New(f, compile.Backend("nope"))
	if want := `compile: unknown backend "nope" (have counting, llvm, pjrt, pjrt-gpu, pjrt-tpu, reference)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestPrecisionOption: Precision("highest") makes every product of the
// program the backend compiles ask for HIGHEST; an unknown precision is an
// error of New.
func TestPrecisionOption(t *testing.T) {
	f := func(x, w *tensor.Tensor) *tensor.Tensor { return x.MatMul(w).MatMul(w) }
	// Its own cache: lastHLO is the program compiled here, in every run of the test.
	c, err := compile.New(f, compile.Backend("counting"), memory(), compile.Precision("highest"))
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.Full(0.5, ir.F32, 3, 3)
	if _, err := c.Call(x, x); err != nil {
		t.Fatal(err)
	}
	hlo := lastHLO.Load().(string)
	if n := strings.Count(hlo, "precision = [HIGHEST, HIGHEST]"); n != 2 || strings.Contains(hlo, "DEFAULT") {
		t.Errorf("%d products ask for HIGHEST, want 2:\n%s", n, hlo)
	}
	_, err = compile.New(f, compile.Precision("fast"))
	if want := `compile: unknown precision "fast" (want one of default, high, highest)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestDeviceOption: Device("pjrt") runs on XLA:CPU through PJRT and agrees
// with the reference executor; devices that are unknown, absent or given
// with a backend are errors of New.
func TestDeviceOption(t *testing.T) {
	f := func(x *tensor.Tensor) *tensor.Tensor { return x.Exp().Add(x) }
	c, err := compile.New(f, compile.Device("pjrt"), compile.CacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.Full(0.5, ir.F32, 3)
	out, err := c.Call(x)
	if err != nil {
		t.Fatal(err)
	}
	if d := near(out[0], f(x), 1e-6); d != "" {
		t.Error(d)
	}
	cases := []struct {
		opts []compile.Option
		want string
	}{
		{[]compile.Option{compile.Device("nope")}, `compile: unknown device "nope" (want one of cpu, pjrt, tpu, gpu)`},
		{[]compile.Option{compile.Device("pjrt"), compile.Backend("reference")}, "compile: both a backend (reference) and a device (pjrt) are given"},
	}
	if !backend.HasTPU() {
		cases = append(cases, struct {
			opts []compile.Option
			want string
		}{[]compile.Option{compile.Device("tpu")}, "compile: device tpu: " + pjrt.ErrNoTPU.Error()})
	}
	if !backend.HasGPU() {
		cases = append(cases, struct {
			opts []compile.Option
			want string
		}{[]compile.Option{compile.Device("gpu")}, "compile: device gpu: " + pjrt.ErrNoGPU.Error()})
	}
	for _, c := range cases {
		if _, err := compile.New(f, c.opts...); err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
}

// near reports how two tensors differ by more than tol relative, "" when
// they agree.
func near(a, b *tensor.Tensor, tol float64) string {
	if !a.Type().Equal(b.Type()) {
		return fmt.Sprintf("type %s, want %s", a.Type(), b.Type())
	}
	x, y := a.Float64s(), b.Float64s()
	for i := range x {
		if math.Abs(x[i]-y[i]) > tol*math.Max(1, math.Abs(y[i])) {
			return fmt.Sprintf("element %d: %v, want %v", i, x[i], y[i])
		}
	}
	return ""
}

// TestDefaultBackendIsLLVM: with clang installed (make installs it), compiled
// functions on the cpu device run on the LLVM backend, and the reference
// executor is a compile.Backend("reference") away.
func TestDefaultBackendIsLLVM(t *testing.T) {
	b, err := engine.OpenBackend("")
	if err != nil {
		t.Fatal(err)
	}
	if b.Name() != "llvm" {
		t.Errorf("default backend %s, want llvm", b.Name())
	}
	f := func(x *tensor.Tensor) *tensor.Tensor { return x.Exp().Add(x) }
	c, err := compile.New(f, compile.Backend("reference"), compile.CacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.Full(0.5, ir.F32, 3)
	out, err := c.Call(x)
	if err != nil {
		t.Fatal(err)
	}
	// The reference executor computes what eager ops on it compute, bit for bit.
	if got, want := out[0].Float64s(), f(x).Float64s(); math.Float64bits(got[0]) != math.Float64bits(want[0]) {
		t.Errorf("reference: %v, want %v", got, want)
	}
}
