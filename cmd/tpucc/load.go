package main

import (
	"strings"

	"github.com/tpucc/tpucc/frontend/stablehlo"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// entryFlag is --entry, shared by build and run.
var entryFlag = flagSpec{name: "entry", kind: valueFlag, arg: "NAME",
	doc: "the entry function, with or without @\n(default: @main if the file has one, else the first function)"}

// load reads and parses the model file named on the command line. The module it returns
// is verified; errors are diagnostics naming the file.
func load(e *env, path string) (name string, m *ir.Module, err error) {
	name, src, err := readSource(path, e.stdin)
	if err != nil {
		return name, nil, err
	}
	m, err = parseSource(name, src)
	if err != nil {
		return name, nil, diag(name, err)
	}
	return name, m, nil
}

// parseSource parses a model's text: StableHLO MLIR when the file is named
// *.mlir (JAX's export, or tpucc's own build output), .tir otherwise.
func parseSource(name string, src []byte) (*ir.Module, error) {
	if strings.HasSuffix(name, ".mlir") {
		return stablehlo.Parse(name, src)
	}
	return tir.Parse(name, src)
}

// entry picks the function to compile or run: --entry when given (naming no function is a
// usage error, like --input naming no parameter), else ir.Module.Entry. A file without any
// function has no entry, which is an error in the program.
func entry(m *ir.Module, file, flag string) (*ir.Func, error) {
	if len(m.Funcs) == 0 {
		return nil, fileErrorf(file, "no function in the file")
	}
	if flag == "" {
		return m.Entry(), nil
	}
	name := strings.TrimPrefix(flag, "@")
	if f := m.Func(name); f != nil {
		return f, nil
	}
	names := make([]string, len(m.Funcs))
	for i, f := range m.Funcs {
		names[i] = "@" + f.Name
	}
	return nil, usagef("--entry %s: %s has no function @%s (it has %s)", flag, file, name, strings.Join(names, ", "))
}
