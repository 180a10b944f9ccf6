package models

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// prefillArgs are the arguments of a prefill over o's prompts, left-padded,
// into an empty cache.
func prefillArgs(m *Model, o oracle) ([]*backend.Buffer, []ir.Type) {
	r := Request{Prompts: o.Prompts, MaxNew: len(o.Greedy[0])}
	padded, capacity, _ := r.Shape()
	B := len(o.Prompts)
	tokens, start := backend.New(ir.Tensor(ir.I32, int64(B), int64(padded))), backend.New(ir.Tensor(ir.I32, int64(B)))
	for b, p := range o.Prompts {
		pad := padded - len(p)
		start.SetInt64(b, int64(pad))
		for i, id := range p {
			tokens.SetInt64(b*padded+pad+i, int64(id))
		}
	}
	args := []*backend.Buffer{tokens, start, backend.New(ir.Tensor(ir.I32))}
	for _, t := range m.CacheTypes(int64(B), int64(capacity)) {
		args = append(args, backend.New(t))
	}
	for _, p := range m.Params {
		args = append(args, p.Buffer)
	}
	types := make([]ir.Type, len(args))
	for i, a := range args {
		types[i] = a.Type()
	}
	return args, types
}

func toArray(b *backend.Buffer) *npy.Array {
	return &npy.Array{DType: b.Type().DType.String(), Shape: b.Type().Dims(), Data: b.Bytes()}
}

// TestExportRunsOnXLA lowers each model's prefill step for the CPU, runs the
// StableHLO on XLA:CPU with the prompts and the checkpoint's weights, and
// requires the logits tpucc's backend computes (1e-4 of the largest).
func TestExportRunsOnXLA(t *testing.T) {
	root := oracleDirs(t)
	h, err := xlacheck.Find()
	if err != nil {
		t.Fatalf("the XLA oracle is required: %v", err)
	}
	var cases []xlacheck.Case
	var want []*backend.Buffer
	for _, name := range oracleModels {
		m, err := Load(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		args, types := prefillArgs(m, readOracle(t, filepath.Join(root, name)))
		mod, err := m.Trace("prefill", types, false)
		if err != nil {
			t.Fatal(err)
		}
		b, err := engine.OpenBackend("")
		if err != nil {
			t.Fatal(err)
		}
		exe, _, err := engine.Compile(mod, engine.Config{Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		out, err := exe.Run(args)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, out[0])
		c := xlacheck.Case{ID: name, Module: exe.HLO}
		for _, a := range args {
			c.Inputs = append(c.Inputs, toArray(a))
		}
		cases = append(cases, c)
	}
	res, err := h.Run(cases)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if !r.OK {
			t.Errorf("%s: XLA:CPU failed at %s: %s", r.ID, r.Stage, r.Error)
			continue
		}
		got, err := backend.View(want[i].Type(), r.Outputs[0].Data)
		if err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		g, w := got.Float32s(), want[i].Float32s()
		scale, worst := 0.0, 0.0
		for j := range w {
			scale = math.Max(scale, math.Abs(float64(w[j])))
			worst = math.Max(worst, math.Abs(float64(g[j]-w[j])))
		}
		if worst > 1e-4*scale {
			t.Errorf("%s: XLA:CPU's logits differ from tpucc's by %.3g (largest %.3g)", r.ID, worst, scale)
		}
	}
}

// TestExportCompilesForTPU lowers every model's prefill and decode steps for
// TPU v5e and v6e and compiles them with libtpu's compile-only client.
func TestExportCompilesForTPU(t *testing.T) {
	root := oracleDirs(t)
	h, err := xlacheck.FindTPU()
	if err != nil {
		t.Fatalf("the TPU compile-only harness is required: %v", err)
	}
	for _, target := range []struct{ name, topology string }{{"tpu-v5e", "v5e:2x2"}, {"tpu-v6e", "v6e:2x2"}} {
		var mods []xlacheck.TPUModule
		for _, name := range oracleModels {
			m, err := Load(filepath.Join(root, name))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for _, step := range []struct {
				name   string
				tokens int64
			}{{"prefill", 32}, {"decode", 1}} {
				mod, err := m.Trace(step.name, m.StepTypes(2, step.tokens, 64), false)
				if err != nil {
					t.Fatal(err)
				}
				exe, _, err := engine.Compile(mod, engine.Config{Target: target.name})
				if err != nil {
					t.Fatalf("%s %s for %s: %v", name, step.name, target.name, err)
				}
				mods = append(mods, xlacheck.TPUModule{ID: name + "." + step.name, Text: exe.HLO})
			}
		}
		res, err := h.CompileTPU(mods, []string{target.topology})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if !r.OK {
				t.Errorf("%s on %s: %s", r.ID, r.Topology, r.Error)
			}
		}
	}
}
