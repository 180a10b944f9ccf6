package engine

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// tirProgram is a Program written as a .tir template: text builds the
// program for the given argument types and static values, as a Go function
// traced at those shapes would.
type tirProgram struct {
	name string
	text func(args []Arg) string
}

func (p *tirProgram) Trace(args []Arg) (*ir.Module, error) {
	return tir.Parse(p.name+".tir", []byte(p.text(args)))
}

func (p *tirProgram) Eager(args []Arg) ([]*backend.Buffer, error) {
	m, err := p.Trace(args)
	if err != nil {
		return nil, err
	}
	return cpu.Run(m, m.Entry(), tensors(args))
}

func tensors(args []Arg) []*backend.Buffer {
	var ts []*backend.Buffer
	for _, a := range args {
		if !a.IsStatic() {
			ts = append(ts, a.Tensor)
		}
	}
	return ts
}

// dim is the size of dimension d of argument i.
func dim(args []Arg, i, d int) int64 { return args[i].Type.Shape[d].Size }

// mlpProgram is row-wise in dim 0 of x: relu(x @ w) + b.
var mlpProgram = &tirProgram{name: "mlp", text: func(a []Arg) string {
	return fmt.Sprintf(`func @mlp(%%x: f32[%[1]d,4], %%w: f32[4,3], %%b: f32[3]) -> f32[%[1]d,3] {
  %%h = dot_general %%x, %%w {lhs_contract=[1], rhs_contract=[0]} : f32[%[1]d,3]
  %%bb = broadcast %%b {dims=[1]} : f32[%[1]d,3]
  %%s = add %%h, %%bb
  %%r = relu %%s
  return %%r
}
`, dim(a, 0, 0))
}}

// seeded returns a tensor of type t with values drawn from seed.
func seeded(t ir.Type, seed int64) *backend.Buffer {
	m := ir.NewModule("")
	f := m.NewFunc("f", nil, []ir.Type{t}, nil, ir.Pos{})
	return cpu.RandomInputs(f, seed)[0]
}

func f32(dims ...int64) ir.Type { return ir.Tensor(ir.F32, dims...) }

// mlpArgs are arguments for mlpProgram with b rows.
func mlpArgs(b int64, seed int64) []Arg {
	return []Arg{TensorArg(seeded(f32(b, 4), seed)), TensorArg(seeded(f32(4, 3), 100)), TensorArg(seeded(f32(3), 101))}
}

// exactRun runs p traced at args' exact shapes, the reference every
// compiled result must equal.
func exactRun(t *testing.T, p Program, args []Arg) []*backend.Buffer {
	t.Helper()
	m, err := p.Trace(args)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cpu.Run(m, m.Entry(), tensors(args))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTensors reports whether a and b are bit-identical.
func sameTensors(a, b []*backend.Buffer) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d results, want %d", len(a), len(b))
	}
	for i := range a {
		if !a[i].Type().Equal(b[i].Type()) {
			return fmt.Sprintf("result %d is %s, want %s", i, a[i].Type(), b[i].Type())
		}
		if !a[i].Equal(b[i]) {
			return fmt.Sprintf("result %d is %s, want %s", i, a[i], b[i])
		}
	}
	return ""
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newFunc makes a Function with a memory-only cache unless opts has one,
// logs and warnings captured.
func newFunc(t *testing.T, p Program, opts Options) (*Function, *syncBuffer, *syncBuffer) {
	t.Helper()
	log, warn := &syncBuffer{}, &syncBuffer{}
	if opts.Cache == nil {
		opts.Cache = NewCache("", CacheOptions{Warn: warn})
	}
	if opts.Name == "" {
		opts.Name = "mlp"
		opts.Pos = ir.Pos{File: "/src/app/main.go", Line: 12}
	}
	opts.Log, opts.Warn = log, warn
	f, err := NewFunction(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f, log, warn
}

// call calls f and checks the results against the exact-shape reference.
func call(t *testing.T, f *Function, p Program, args []Arg) []*backend.Buffer {
	t.Helper()
	got, err := f.Call(args)
	if err != nil {
		t.Fatal(err)
	}
	if d := sameTensors(got, exactRun(t, p, args)); d != "" {
		t.Fatalf("call with %s: %s", newSignature(args).text(), d)
	}
	return got
}
