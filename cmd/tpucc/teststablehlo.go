package main

import (
	"fmt"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/internal/hlosuite"
	"github.com/tpucc/tpucc/ir"
)

var testStableHLOCommand = &command{
	name:    "test-stablehlo",
	files:   true,
	summary: "run StableHLO interpreter tests (check.expect_* ops) on a backend",
	about: `Runs every test function of the StableHLO interpreter test files named (a directory stands
for its *.mlir files): openxla/stablehlo's stablehlo/tests/interpret suite, vendored under
testdata/stablehlo-interpret. Each function is imported as a .mlir file is, run on the
backend (--backend, default llvm) and its check.expect_eq(_const) and
check.expect_almost_eq(_const) ops evaluated; an interpreter.run_parallel runs its programs on
the reference executor's grid of processes, whatever the backend. A line is printed for every test that fails (a
wrong result) or is unsupported (an op, form or dtype tpucc lacks), with the reason; the last
line is stablehlo-interpret: passed=N failed=F unsupported=U total=T. The exit status is 1
when a test failed.
`,
	flags: []flagSpec{
		{name: "backend", kind: valueFlag, arg: "NAME", doc: "the backend to run on: llvm (the default) or reference"},
	},
	run: cmdTestStableHLO,
}

func cmdTestStableHLO(e *env, p *parsed) error {
	b, err := openRunBackend("test-stablehlo", p.value("backend", ""), "")
	if err != nil {
		return err
	}
	files, err := hlosuite.Files(p.positional)
	if err != nil {
		return usagef("%v", err)
	}
	run := func(m *ir.Module, f *ir.Func, args []*backend.Buffer) ([]*backend.Buffer, error) {
		return runOn(b, m, f, args, "", nil)
	}
	var s hlosuite.Summary
	for _, path := range files {
		outs, err := hlosuite.RunFile(path, run)
		if err != nil {
			return fileErrorf(path, "%v", err)
		}
		for _, o := range outs {
			s.Add(o)
			switch o.Status {
			case hlosuite.Failed:
				fmt.Fprintf(e.stdout, "%s: @%s: FAILED: %s\n", o.Pos, o.Name, o.Reason)
			case hlosuite.Unsupported:
				fmt.Fprintf(e.stdout, "%s: @%s: unsupported: %s\n", o.Pos, o.Name, o.Reason)
			}
		}
	}
	fmt.Fprintln(e.stdout, s.Line())
	if s.Failed > 0 {
		return fmt.Errorf("stablehlo-interpret: %d tests failed", s.Failed)
	}
	return nil
}
