package cpu

import (
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
