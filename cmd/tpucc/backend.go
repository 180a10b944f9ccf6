package main

import (
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/runtime"
)

// backendFlag selects the backend tpucc run executes on.
var backendFlag = flagSpec{name: "backend", kind: valueFlag, arg: "NAME",
	doc: "the backend to run on: " + strings.Join(backend.Names(), ", ") + " (default " + runtime.DefaultBackend + ")"}

// runOn compiles f of m through the one compile path (the default pipeline
// for the cpu target) with the backend named name and runs it on args.
func runOn(name string, m *ir.Module, f *ir.Func, args []*backend.Buffer) ([]*backend.Buffer, error) {
	b, err := runtime.OpenBackend(name)
	if err != nil {
		return nil, usagef("--backend: %v", err)
	}
	exe, _, err := runtime.Compile(m, runtime.Config{Entry: f.Name, Backend: b})
	if err != nil {
		return nil, err
	}
	return exe.Run(args)
}
