package models

import (
	"fmt"
	"strings"

	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/target"
	"github.com/tpucc/tpucc/train"
)

// TrainReport compiles m's training step (TrainStep, batch rows of length
// tokens, the parameters and opt's state donated) for one chip of topology
// of the TPU target t through libtpu's compile-only client, without a TPU,
// and says what the chip holds: the parameters, their gradients, the
// optimizer's state and the activations, and whether all of it fits. The
// figures of the kinds are the types'; the verdict is libtpu's layout's.
func (m *Model) TrainReport(opt train.Optimizer, batch, length int64, t *target.Target, topology string) (string, error) {
	return m.TrainReportSplit(opt, batch, length, t, topology, nil, false)
}

// TrainReportSplit is TrainReport for the step split over mesh as
// NewTrainer splits it (TrainOptions.Mesh and FSDP: the weights over tp,
// and with fsdp over dp too, each state tensor like its weight, the batch
// rows over dp), compiled as one partition per chip of topology, whose
// chips must number the mesh's devices. Every figure is one chip's: the
// kinds' from the shardings (each device's pieces), the rest from libtpu's
// layout of the partitioned step. A nil mesh is TrainReport.
func (m *Model) TrainReportSplit(opt train.Optimizer, batch, length int64, t *target.Target, topology string, mesh *ir.Mesh, fsdp bool) (string, error) {
	step, nTrained, err := m.TrainStep(opt, batch, length, false)
	if err != nil {
		return "", err
	}
	if mesh != nil {
		args, results := m.trainShardings(mesh, len(opt.StateNames()), false, fsdp)
		if err := engine.ShardModule(step, mesh, args, results); err != nil {
			return "", err
		}
	}
	tm := TrainMemoryOf(step.Entry(), nTrained, opt) // before the compile's passes rewrite the step
	exe, _, err := engine.Compile(step, engine.Config{Target: t.Name(), Donate: opt.Donate(nTrained)})
	if err != nil {
		return "", err
	}
	stats, err := compileForChip(exe.HLO, topology, mesh)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	row := func(what string, n int64, note string) {
		fmt.Fprintf(&b, "%-24s %14d bytes  %10s  %s\n", what, n, gib(n), note)
	}
	grads, batchNote, compiled, verdict := "one per trained parameter, f32: computed within the step", "the tokens, i32", "compiled", "one "+t.Name()+" chip"
	if mesh == nil {
		fmt.Fprintf(&b, "training step: %s, batch %d × %d tokens, f32, on one chip of %s (%s)\n", opt.Kind, batch, length, topology, t.Name())
	} else {
		how := ""
		if fsdp {
			how = " with FSDP"
		}
		fmt.Fprintf(&b, "training step: %s, batch %d × %d tokens, f32, split over mesh %s%s on the %d chips of %s (%s); per chip:\n",
			opt.Kind, batch, length, meshString(mesh), how, mesh.Devices(), topology, t.Name())
		grads = "one per trained parameter, f32, split like it: computed within the step"
		batchNote = "the tokens, i32, their rows split over dp"
		compiled, verdict = "compiled per chip", "each "+t.Name()+" chip"
	}
	row("parameters", tm.Params, "trained, f32, donated: updated in place")
	if tm.Fixed > 0 {
		row("fixed weights", tm.Fixed, "not trained")
	}
	state := "none: " + string(opt.Kind) + " keeps no state"
	if names := opt.StateNames(); len(names) > 0 {
		state = strings.Join(names, " and ") + " per parameter, donated"
	}
	row("optimizer state", tm.State, state)
	row("gradients", tm.Grads, grads)
	saved := "each layer's input and the intermediates its backward reads, stacked per layer: within the temporaries"
	if mesh != nil {
		saved = "each layer's input and the intermediates its backward reads, stacked per layer, whole (before splitting): within the temporaries"
	}
	row("saved by layer loops", tm.Saved, saved)
	row("activations + gradients", stats.Temp, "libtpu's temporaries: what the backward pass keeps and the gradients as it makes them")
	row("batch", tm.Batch, batchNote)
	fmt.Fprintf(&b, "%s: arguments %d + outputs %d - aliased %d + temporaries %d + code %d = %d bytes (%s) of %s %s\n",
		compiled, stats.Arguments, stats.Outputs, stats.Alias, stats.Temp, stats.GeneratedCode, stats.Total(), gib(stats.Total()), gib(t.Memory), t.MemoryName)
	fits := "fits"
	if stats.Total() > t.Memory {
		fits = "does not fit"
	}
	fmt.Fprintf(&b, "the step %s %s: %s of %s\n", fits, verdict, gib(stats.Total()), gib(t.Memory))
	return b.String(), nil
}

// compileForChip compiles StableHLO text for one chip of a TPU topology
// through libtpu (pjrt.KindTPU), or split over mesh as one partition per
// chip, and returns one chip's memory as laid out.
func compileForChip(hlo, topology string, mesh *ir.Mesh) (pjrt.MemoryStats, error) {
	path, err := pjrt.Find(pjrt.KindTPU)
	if err != nil {
		return pjrt.MemoryStats{}, err
	}
	p, err := pjrt.LoadForCompile(path)
	if err != nil {
		return pjrt.MemoryStats{}, err
	}
	topo, err := p.Topology(topology)
	if err != nil {
		return pjrt.MemoryStats{}, fmt.Errorf("topology %s: %w", topology, err)
	}
	defer topo.Close()
	var exe *pjrt.Executable
	if mesh != nil {
		exe, _, err = topo.CompileSharded(hlo, mesh)
	} else {
		exe, err = topo.Compile(hlo, pjrt.DefaultCompileOptions)
	}
	if err != nil {
		return pjrt.MemoryStats{}, err
	}
	defer exe.Close()
	return exe.MemoryStats()
}

// gib writes a size in GiB, MiB or KiB with three significant digits.
func gib(n int64) string {
	switch x := float64(n); {
	case n >= 1<<30:
		return fmt.Sprintf("%.3g GiB", x/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.3g MiB", x/(1<<20))
	}
	return fmt.Sprintf("%.3g KiB", float64(n)/(1<<10))
}
