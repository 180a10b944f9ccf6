package compile_test

import (
	"sync/atomic"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/compile"
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

var compiles, runs atomic.Int64

func init() {
	backend.Register("counting", func() (backend.Backend, error) { return counting{&compiles, &runs}, nil })
}

// TestBackendOption: compiled functions run on the backend they name, which
// compiles each program once; an unknown backend is an error of New.
func TestBackendOption(t *testing.T) {
	f := func(x *tensor.Tensor) *tensor.Tensor { return x.Exp().Add(x) }
	c, err := compile.New(f, compile.Backend("counting"), compile.CacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.Full(ir.F32, 0.5, 3)
	for range 3 {
		out, err := c.Call(x)
		if err != nil {
			t.Fatal(err)
		}
		if d := same(out[0].(*tensor.Tensor), f(x)); d != "" {
			t.Error(d)
		}
	}
	if compiles.Load() != 1 || runs.Load() != 3 {
		t.Errorf("backend compiled %d times and ran %d times, want 1 and 3", compiles.Load(), runs.Load())
	}
	_, err = compile.New(f, compile.Backend("nope"))
	if want := `compile: unknown backend "nope" (have counting, reference)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
