package tensor

import (
	"fmt"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/ir"
)

// Trace records f as a function called name: f runs once on traced
// parameters (parameter i is named names[i] and has type types[i]) and its
// results, traced or concrete (a concrete one becomes a constant), are the
// function's results. It is the one place a Go function of tensors becomes a
// module: compile.Func's programs and the models' steps both trace through it.
// Errors f returns are returned; misuse of the results (a tensor of another
// trace) is returned as a *Error.
func Trace(name string, names []string, types []ir.Type, f func([]*Tensor) ([]*Tensor, error)) (m *ir.Module, err error) {
	return TraceOn(nil, name, names, types, f)
}

// TraceOn is Trace of a program that runs on mesh (nil: one device), whose
// sharding constraints (ShardAs) name it.
func TraceOn(mesh *ir.Mesh, name string, names []string, types []ir.Type, f func([]*Tensor) ([]*Tensor, error)) (m *ir.Module, err error) {
	if len(names) != len(types) {
		return nil, fmt.Errorf("tensor.Trace: %d names for %d types", len(names), len(types))
	}
	tr := trace.New(name)
	if mesh != nil {
		tr.Mesh(mesh)
	}
	ts := make([]*Tensor, len(types))
	for i, t := range types {
		ts[i] = Traced(tr.Param(names[i], t), tr)
	}
	out, err := f(ts)
	if err != nil {
		return nil, err
	}
	defer Recover(&err)
	vals := make([]*ir.Value, len(out))
	for i, t := range out {
		vals[i] = t.ValueIn(tr)
	}
	return tr.Finish(vals...)
}

// Eval runs f eagerly on tensors over args and returns its results' buffers:
// the eager counterpart of Trace, for programs run without compiling. A
// traced result (leaked from some trace) is an error naming name.
func Eval(name string, args []*backend.Buffer, f func([]*Tensor) ([]*Tensor, error)) ([]*backend.Buffer, error) {
	ts := make([]*Tensor, len(args))
	for i, a := range args {
		ts[i] = FromBuffer(a)
	}
	out, err := f(ts)
	if err != nil {
		return nil, err
	}
	res := make([]*backend.Buffer, len(out))
	for i, t := range out {
		if t.IsTraced() {
			return nil, fmt.Errorf("%s: result %d is a traced tensor of another trace", name, i)
		}
		res[i] = t.Buffer()
	}
	return res, nil
}
