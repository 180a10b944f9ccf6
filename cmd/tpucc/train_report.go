package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// trainReport is tpucc train --report: the step of --batch rows of the
// tokens' length, compiled for one chip of a TPU topology through libtpu,
// and what it holds: the parameters, their gradients, the optimizer's state
// and the activations, against the chip's memory. A directory with
// config.json alone reports as its configuration describes it.
// With --mesh (and --fsdp) the step is split as training on that mesh
// splits it, compiled as one partition per chip of a topology of as many
// chips as the mesh has devices, and every figure is one chip's.
func trainReport(e *env, p *parsed, a *trainArgs, mesh *ir.Mesh) error {
	for _, f := range []string{"device", "backend", "labels", "unroll-layers", "remat-layers"} {
		if p.has(f) {
			return trainErrorf("--%s does not apply to --report", f)
		}
	}
	bc, err := reportTarget(p, mesh)
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
		text, err = m.TrainReportSplit(a.opt, B, L, bc.target, bc.topology, mesh, p.flag("fsdp"))
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
// --topology (by default its first, or with a mesh its first of as many
// chips as the mesh has devices), checked.
func reportTarget(p *parsed, mesh *ir.Mesh) (*buildConfig, error) {
	name := p.value("target", "tpu-v6e")
	g, ok := pjrt.Generation(name)
	if !ok {
		return nil, trainErrorf("--target %s: --report compiles for a TPU: want one of %s", name, strings.Join(tpuTargets(), ", "))
	}
	t, err := engine.LookupTarget(name)
	if err != nil {
		return nil, err
	}
	def := g.Topologies()[0]
	if mesh != nil {
		def = ""
		for _, tp := range g.Topologies() {
			if chips(tp) == mesh.Devices() {
				def = tp
				break
			}
		}
		if def == "" && !p.has("topology") {
			return nil, trainErrorf("--mesh %s has %d devices: no %s topology has as many chips (%s)", meshSpec(mesh), mesh.Devices(), name, strings.Join(g.Topologies(), " "))
		}
	}
	topo := p.value("topology", def)
	if err := g.CheckTopology(topo); err != nil {
		return nil, trainErrorf("--topology %v", err)
	}
	if mesh != nil && chips(topo) != mesh.Devices() {
		return nil, trainErrorf("--mesh %s has %d devices and --topology %s has %d chips: they must be equal", meshSpec(mesh), mesh.Devices(), topo, chips(topo))
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

// chips is the number of chips of a topology (v6e:2x4: 8).
func chips(topology string) int64 {
	_, shape, _ := strings.Cut(topology, ":")
	n := int64(1)
	for d := range strings.SplitSeq(shape, "x") {
		k, err := strconv.ParseInt(d, 10, 64)
		if err != nil {
			return 0
		}
		n *= k
	}
	return n
}

// meshSpec spells a mesh as --mesh takes it: dp=2,tp=2.
func meshSpec(m *ir.Mesh) string {
	parts := make([]string, len(m.Axes))
	for i, a := range m.Axes {
		parts[i] = a.Name + "=" + strconv.FormatInt(a.Size, 10)
	}
	return strings.Join(parts, ",")
}
