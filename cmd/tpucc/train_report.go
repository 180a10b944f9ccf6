package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/tensor"
)

// trainReport is tpucc train --report: the step of --batch rows of the
// tokens' length, compiled for one chip of a TPU topology through libtpu,
// and what it holds: the parameters, their gradients, the optimizer's state
// and the activations, against the chip's memory. A directory with
// config.json alone reports as its configuration describes it.
func trainReport(e *env, p *parsed, a *trainArgs) error {
	for _, f := range []string{"device", "backend", "mesh", "fsdp", "labels"} {
		if p.has(f) {
			return trainErrorf("--%s does not apply to --report", f)
		}
	}
	bc, err := reportTarget(p)
	if err != nil {
		return err
	}
	tok, err := tensor.ReadNPY(a.tokens)
	if err != nil {
		return err
	}
	if tok.Rank() != 2 || tok.Shape()[1] < 2 {
		return fmt.Errorf("%s: the array is %s; want i32[rows, L] with at least one row of at least 2 tokens", a.tokens, tok.Type())
	}
	m, err := exportModel(e, a.dir, "", false)
	if err != nil {
		return err
	}
	defer m.Close()
	B, L := int64(a.batch), tok.Shape()[1]
	fmt.Fprintf(e.stderr, "tpucc: compiling the training step (%s, batch %d × %d tokens) for %s\n", a.opt.Kind, B, L, bc.topology)
	var text string
	logged, err := pjrt.CaptureStderr(func() (err error) {
		text, err = m.TrainReport(a.opt, B, L, bc.target, bc.topology)
		return err
	})
	if err != nil {
		e.stderr.Write(logged)
		return err
	}
	io.WriteString(e.stdout, text)
	return nil
}

// reportTarget is --target (a TPU generation, tpu-v6e by default) and
// --topology (its first by default), checked.
func reportTarget(p *parsed) (*buildConfig, error) {
	name := p.value("target", "tpu-v6e")
	g, ok := pjrt.Generation(name)
	if !ok {
		return nil, trainErrorf("--target %s: --report compiles for a TPU: want one of %s", name, strings.Join(tpuTargets(), ", "))
	}
	t, err := engine.LookupTarget(name)
	if err != nil {
		return nil, err
	}
	topo := p.value("topology", g.Topologies()[0])
	if err := g.CheckTopology(topo); err != nil {
		return nil, trainErrorf("--topology %v", err)
	}
	return &buildConfig{target: t, emit: "executable", topology: topo}, nil
}

func tpuTargets() []string {
	var out []string
	for _, g := range pjrt.TPUGenerations {
		out = append(out, g.Target)
	}
	return out
}
