package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/ir"
	tpuccrt "github.com/tpucc/tpucc/runtime"
)

// emitKinds are the values --emit accepts.
var emitKinds = []string{"hlo", "executable"}

// checkEmit checks --emit and --topology together, before any file is read.
func checkEmit(c *buildConfig, emit, topology string) error {
	switch emit {
	case "hlo":
		if topology != "" {
			return usagef("--topology applies to --emit=executable only")
		}
	case "executable":
		if c.out == "" {
			return usagef("--emit=executable writes a binary file: give it with -o")
		}
		if c.target.Name() == "cpu" {
			if topology != "" {
				return usagef("--topology applies to TPU targets only")
			}
			break
		}
		if !strings.HasPrefix(c.target.Name(), "tpu-") {
			return usagef("--emit=executable needs --target cpu or a TPU target (tpu-v6e, ...), not %s", c.target.Name())
		}
		if topology == "" {
			return usagef("--emit=executable needs --topology, such as v6e:2x2")
		}
		gen := strings.TrimPrefix(c.target.Name(), "tpu-")
		if g, _, _ := strings.Cut(topology, ":"); g != gen {
			return usagef("--topology %s is not a %s topology (want %s:...)", topology, c.target.Name(), gen)
		}
	default:
		return usagef("unknown --emit %q (want one of %s)", emit, strings.Join(emitKinds, ", "))
	}
	c.emit, c.topology = emit, topology
	return nil
}

// compileExecutable compiles the StableHLO text of f for --target: for cpu
// through the pjrt backend's plugin (XLA:CPU), for a TPU through libtpu for
// the topology, without a TPU. It returns the artifact to write.
func compileExecutable(c *buildConfig, f *ir.Func, text string) (*pjrt.Artifact, error) {
	// An artifact runs on one device: a program split over a mesh would be
	// compiled for one partition and silently lose its shardings.
	if m := f.Module; m != nil && len(m.Meshes) > 0 && m.Meshes[0].Devices() > 1 {
		return nil, fmt.Errorf("--emit=executable does not take a program split over several devices yet (mesh @%s has %d): docs/SHARDING.md",
			m.Meshes[0].Name, m.Meshes[0].Devices())
	}
	if c.target.Name() == "cpu" {
		return compileCPUExecutable(c, f, text)
	}
	path, err := pjrt.Find(pjrt.KindTPU)
	if err != nil {
		return nil, err
	}
	p, err := pjrt.LoadForCompile(path)
	if err != nil {
		return nil, err
	}
	topo, err := p.Topology(c.topology)
	if err != nil {
		return nil, fmt.Errorf("--topology %s: %w", c.topology, err)
	}
	defer topo.Close()
	platform, err := topo.PlatformName()
	if err != nil {
		return nil, err
	}
	version, err := topo.PlatformVersion()
	if err != nil {
		return nil, err
	}
	kind, err := topo.DeviceKind()
	if err != nil {
		return nil, err
	}
	exe, err := topo.Compile(text, pjrt.DefaultCompileOptions)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	blob, err := exe.Serialize()
	if err != nil {
		return nil, err
	}
	return &pjrt.Artifact{
		Manifest: pjrt.Manifest{
			Entry:           signature(c, f),
			Target:          c.target.Name(),
			Topology:        c.topology,
			Platform:        platform,
			PlatformVersion: version,
			DeviceKind:      kind,
			PJRTAPI:         p.Version(),
			Tpucc:           tpuccrt.Version,
			StableHLOSHA256: pjrt.SHA256([]byte(text)),
		},
		Executable: blob,
	}, nil
}

// compileCPUExecutable compiles through the pjrt backend's client.
func compileCPUExecutable(c *buildConfig, f *ir.Func, text string) (*pjrt.Artifact, error) {
	b, err := pjrt.Open(pjrt.BackendName)
	if err != nil {
		return nil, err
	}
	cl := b.Client()
	exe, err := cl.Compile(text, nil, pjrt.DefaultCompileOptions)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	blob, err := exe.Serialize()
	if err != nil {
		return nil, err
	}
	return &pjrt.Artifact{
		Manifest: pjrt.Manifest{
			Entry:           signature(c, f),
			Target:          c.target.Name(),
			Platform:        cl.Platform(),
			PlatformVersion: cl.PlatformVersion(),
			DeviceKind:      cl.Devices()[0].Kind,
			PJRTAPI:         cl.Plugin().Version(),
			Tpucc:           tpuccrt.Version,
			StableHLOSHA256: pjrt.SHA256([]byte(text)),
		},
		Executable: blob,
	}, nil
}

// signature spells f's parameter and result types without layouts, with
// the draw limits computed before the passes ran.
func signature(c *buildConfig, f *ir.Func) pjrt.Signature {
	s := pjrt.Signature{Name: f.Name, Params: []string{}, Results: []string{}}
	for _, p := range f.Params {
		t := p.Type
		t.Layout = nil
		s.Params = append(s.Params, t.String())
		s.ParamNames = append(s.ParamNames, p.Name)
	}
	for _, t := range f.Results {
		t.Layout = nil
		s.Results = append(s.Results, t.String())
	}
	s.DrawLimits = c.limits
	return s
}

// writeExecutable writes the artifact atomically to the -o file.
func writeExecutable(c *buildConfig, a *pjrt.Artifact) error {
	out, err := newPending(c.out, func(w io.Writer) error {
		_, err := a.WriteTo(w)
		return err
	})
	if err != nil {
		return err
	}
	return commit([]*pending{out})
}
