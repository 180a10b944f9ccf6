package oracle

import (
	"fmt"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// TestGoldenModulesThroughPJRT runs the checks of TestGoldenModules through
// tpucc's own PJRT client on the pinned XLA:CPU plugin (backend/pjrt, make
// pjrt-cpu-plugin) instead of JAX, and judges them by the same comparison.
func TestGoldenModulesThroughPJRT(t *testing.T) {
	setXLAFlags() // before the plugin's client reads it
	b, err := backend.Lookup(pjrt.BackendName)
	if err != nil {
		t.Fatalf("the PJRT backend: %v (run make pjrt-cpu-plugin)", err)
	}
	checks, skipped := goldenChecks(t)
	failed := 0
	for _, c := range checks {
		if err := c.prepare(); err != nil {
			failed++
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if problems := c.compare(runPJRT(b, c)); problems != nil {
			failed++
			t.Errorf("%s through PJRT:\n  %v\nprogram (%s):\n%sStableHLO:\n%s", c.name, problems, c.about, ir.Print(c.m), c.hlo)
		}
	}
	t.Logf("%d modules run on %s, %d failed; skipped: %v", len(checks), b.Fingerprint(), failed, skipped)
}

// runPJRT compiles and runs c's StableHLO with b, in the shape of an
// xlacheck.Result so that check.compare judges it.
func runPJRT(b backend.Backend, c *check) xlacheck.Result {
	fail := func(stage string, err error) xlacheck.Result {
		return xlacheck.Result{ID: c.name, Stage: stage, Error: err.Error()}
	}
	exe, err := b.Compile(&backend.Program{Module: c.m, Entry: c.m.Entry(), HLO: c.hlo})
	if err != nil {
		return fail("compile", err)
	}
	args := make([]*backend.Buffer, len(c.inputs))
	for i, x := range c.inputs {
		if args[i], err = backend.View(x.Type, x.NPY().Data); err != nil {
			return fail("inputs", err)
		}
	}
	outs, err := exe.Run(args)
	if err != nil {
		return fail("run", err)
	}
	r := xlacheck.Result{ID: c.name, OK: true}
	for i, o := range outs {
		if i >= len(c.want) {
			break
		}
		dims := o.Type().Dims()
		if dims == nil {
			dims = []int64{}
		}
		if o.Type().DType != c.want[i].Type.DType {
			return fail("run", fmt.Errorf("result %d is %s, the executor's %s", i, o.Type(), c.want[i].Type))
		}
		r.Outputs = append(r.Outputs, &npy.Array{DType: c.want[i].NPY().DType, Shape: dims, Data: o.Bytes()})
	}
	return r
}
