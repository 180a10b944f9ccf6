package main

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// hostSignature is f's signature as run reads and writes it: f itself for
// a program of one replica; for one of several, as JAX's pmap takes and
// gives them, every parameter and result with a leading axis of the
// replicas (backend.SplitReplicas), so that each input file holds every
// replica's value and each result file every replica's result.
func hostSignature(m *ir.Module, f *ir.Func) *ir.Func {
	r := int(m.NumReplicas())
	if r == 1 {
		return f
	}
	g := &ir.Func{Name: f.Name, Module: f.Module, Pos: f.Pos}
	for _, p := range f.Params {
		g.Params = append(g.Params, &ir.Value{Type: backend.ReplicaType(p.Type, r), Index: p.Index, Name: p.Name, Pos: p.Pos})
	}
	for _, t := range f.Results {
		g.Results = append(g.Results, backend.ReplicaType(t, r))
	}
	return g
}

// replicaAxes refuses, by its file, an input of a program of several
// replicas whose leading axis is not one per replica.
func replicaAxes(m *ir.Module, f *ir.Func, given []*inputArg, arrays []*backend.Buffer) error {
	r := m.NumReplicas()
	if r == 1 {
		return nil
	}
	for k, a := range arrays {
		if a == nil {
			continue
		}
		if d := a.Type().Dims(); len(d) == 0 || d[0] != r {
			return fileErrorf(given[k].file, "input %%%s: @%s runs as %d replicas, so its leading axis is one per replica: want %s, file has %s",
				f.Params[k].Name, f.Name, r, f.Params[k].Type, a.Type())
		}
	}
	return nil
}
