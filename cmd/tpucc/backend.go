package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/models"
)

// backendFlag selects the backend tpucc run executes on.
var backendFlag = flagSpec{name: "backend", kind: valueFlag, arg: "NAME",
	doc: "the backend to run on: " + strings.Join(backend.Names(), ", ") + " (default: the default device's)"}

// deviceFlag selects the device tpucc run executes on, by its backend.
var deviceFlag = flagSpec{name: "device", kind: valueFlag, arg: "NAME",
	doc: "the device to run on: " + strings.Join(engine.Devices(), ", ") + "\n(default: tpu on a machine with TPU chips, else cpu)"}

// meshFlag splits a model over several devices of --device.
var meshFlag = flagSpec{name: "mesh", kind: valueFlag, arg: "AXES",
	doc: "split the model over devices: tp=N splits its weights (Megatron-style), dp=N its batch,\n" +
		"dp=2,tp=2 both (needs --device pjrt, tpu or gpu; on pjrt's XLA:CPU the devices are made;\ndocs/SHARDING.md)"}

// meshValue is --mesh, or nil; it needs a device of several chips, but for
// --report, which compiles for a TPU topology's chips and runs nothing.
func meshValue(p *parsed) (*ir.Mesh, error) {
	spec := p.value("mesh", "")
	if spec == "" {
		return nil, nil
	}
	m, err := models.ParseMesh(spec)
	if err != nil {
		return nil, usagef("--mesh: %v", err)
	}
	switch p.value("device", "") {
	case "pjrt", "tpu", "gpu":
		return m, nil
	case "":
		if p.flag("report") {
			return m, nil
		}
	}
	return nil, usagef("--mesh %s splits a model over a device's chips: give --device pjrt, tpu or gpu", spec)
}

// precisionFlag sets the precision every product asks of the device.
var precisionFlag = flagSpec{name: "precision", kind: valueFlag, arg: "P",
	doc: "the precision of every matrix product on the device: " + strings.Join(stablehlo.Precisions, ", ") +
		"\n(as JAX's default_matmul_precision; default: f32 products run in TF32 on an NVIDIA GPU\nand in one bf16 pass on a TPU, highest keeps f32; tpucc's CPU backends compute f32 products in f32,\nand a bf16 checkpoint's in bf16 (activations rounded, f32 sums) unless highest)"}

// precisionValue is --precision's value, checked.
func precisionValue(p *parsed) (string, error) {
	v := p.value("precision", "")
	if p.has("precision") && !slices.Contains(stablehlo.Precisions, v) {
		return "", usagef("--precision %s: want one of %s", v, strings.Join(stablehlo.Precisions, ", "))
	}
	return v, nil
}

// openRunBackend opens the backend --backend or --device name for the
// command cmd (run, generate). An unknown name is a usage error; a device
// the machine lacks is not.
func openRunBackend(cmd, name, device string) (backend.Backend, error) {
	if device == "" {
		b, err := engine.OpenBackend(name)
		if err != nil {
			return nil, usagef("--backend: %v", err)
		}
		return b, nil
	}
	if name != "" {
		return nil, usagef("--backend and --device are exclusive")
	}
	bname, err := engine.DeviceBackend(device)
	if err != nil {
		return nil, usagef("--device: %v", err)
	}
	if device == "cpu" { // the default backend, or its fallback
		return engine.OpenDevice(device)
	}
	b, err := backend.Lookup(bname)
	if err != nil {
		return nil, fmt.Errorf("tpucc %s: --device %s: %v", cmd, device, err)
	}
	return b, nil
}

// runOn compiles f of m through the one compile path (the default pipeline
// for the cpu target) with backend b and runs it on args. With a non-nil
// report it writes one line there: what compiling took by stage, and the run.
func runOn(b backend.Backend, m *ir.Module, f *ir.Func, args []*backend.Buffer, precision string, report io.Writer) ([]*backend.Buffer, error) {
	exe, times, err := engine.Compile(m, engine.Config{Entry: f.Name, Backend: b, Precision: precision})
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	out, err := exe.Run(args)
	if err == nil && report != nil {
		fmt.Fprintln(report, timeReport(b.Name(), times, exe.Exec, time.Since(t0)))
	}
	return out, err
}

// timeReport is tpucc run --time's line: the passes, lowering, the
// backend's compile (with its own stages when it reports them) and the run.
func timeReport(name string, t engine.StageTimes, x backend.Executable, run time.Duration) string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	line := fmt.Sprintf("time: passes %s, lower %s, backend %s %s", ms(t.Passes), ms(t.Lower), name, ms(t.Backend))
	if s, ok := x.(backend.Staged); ok {
		var parts []string
		for _, st := range s.CompileStages() {
			parts = append(parts, st.Name+" "+ms(st.Time))
		}
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	return line + ", run " + ms(run)
}
