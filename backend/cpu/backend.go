package cpu

import (
	"fmt"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Reference is the reference executor as a backend: compiling checks the
// program once, and running interprets the optimised module op by op
// (fusion regions included). It is the numeric oracle the other backends
// are tested against, and the backend that every program can run on.
type Reference struct{}

// ReferenceVersion names the executor's numerics for cache keys: change it
// when a kernel's results change.
const ReferenceVersion = "reference-1"

func init() {
	backend.Register("reference", func() (backend.Backend, error) { return Reference{}, nil })
}

// Name is "reference".
func (Reference) Name() string { return "reference" }

// Fingerprint is the executor's version: its results do not depend on the
// machine.
func (Reference) Fingerprint() string { return ReferenceVersion }

// Compile verifies p's entry and everything it calls, as Run would on every
// call, so that a broken program fails here rather than at its first run.
func (Reference) Compile(p *backend.Program) (backend.Executable, error) {
	if err := prepare(p.Module, p.Entry); err != nil {
		return nil, err
	}
	if r := backend.Replicas(p); r > 1 {
		return &replicaExec{m: p.Module, f: p.Entry, replicas: r}, nil
	}
	return &referenceExec{m: p.Module, f: p.Entry}, nil
}

// Eval runs one instruction with the reference kernels (Eval).
func (Reference) Eval(in *ir.Instr, args []*backend.Buffer) ([]*backend.Buffer, error) {
	return Eval(in, args)
}

type referenceExec struct {
	m *ir.Module
	f *ir.Func
}

// Run runs the program with Run (memory check, argument check, interpreter).
func (e *referenceExec) Run(args []*backend.Buffer) ([]*backend.Buffer, error) {
	return Run(e.m, e.f, args)
}

// replicaExec runs a program of several replicas on the process grid
// (RunGrid, one partition), its arguments and results carrying the
// replicas as a leading axis (backend.SplitReplicas).
type replicaExec struct {
	m        *ir.Module
	f        *ir.Func
	replicas int
}

func (e *replicaExec) Run(args []*backend.Buffer) ([]*backend.Buffer, error) {
	params := make([]ir.Type, len(e.f.Params))
	for i, v := range e.f.Params {
		params[i] = v.Type
	}
	per, err := backend.SplitReplicas(args, params, e.replicas)
	if err != nil {
		return nil, fmt.Errorf("@%s: %v", e.f.Name, err)
	}
	fs := make([][]*ir.Func, e.replicas)
	grid := make([][][]*backend.Buffer, e.replicas)
	for r := range fs {
		fs[r], grid[r] = []*ir.Func{e.f}, [][]*backend.Buffer{per[r]}
	}
	out, err := RunGrid(e.m, fs, grid)
	if err != nil {
		return nil, err
	}
	res := make([][]*backend.Buffer, e.replicas)
	for r := range res {
		res[r] = out[r][0]
	}
	return backend.StackReplicas(res)
}
