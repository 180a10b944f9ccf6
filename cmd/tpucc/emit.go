package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
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
		g, ok := pjrt.Generation(c.target.Name())
		if !ok {
			return usagef("--emit=executable needs --target cpu or a TPU target (tpu-v6e, ...), not %s", c.target.Name())
		}
		if topology == "" {
			return usagef("--emit=executable needs --topology, such as %s", g.Topologies()[0])
		}
		if err := g.CheckTopology(topology); err != nil {
			return usagef("--topology %v", err)
		}
	default:
		return usagef("unknown --emit %q (want one of %s)", emit, strings.Join(emitKinds, ", "))
	}
	c.emit, c.topology = emit, topology
	return nil
}

// topologyHelp is --topology's help: the topologies of each TPU target.
func topologyHelp() string {
	lines := []string{"the TPU topology --emit=executable compiles for, one of the target's (v6e:2x2):"}
	for _, g := range pjrt.TPUGenerations {
		lines = append(lines, fmt.Sprintf("  %-8s %s: %s", g.Target, g.Prefix, strings.Join(g.Shapes, " ")))
	}
	return strings.Join(lines, "\n")
}

// compileExecutable compiles the StableHLO text of f for --target: for cpu
// through the pjrt backend's plugin (XLA:CPU), for a TPU through libtpu for
// the topology, without a TPU. It returns the artifact to write and, for a
// TPU, each chip's memory as libtpu laid it out (nil for cpu). What
// libtpu logs to standard error as it starts (its warnings about a host that
// is no TPU VM) is shown only when the compile fails.
func compileExecutable(e *env, c *buildConfig, f *ir.Func, text string) (*pjrt.Artifact, *pjrt.MemoryStats, error) {
	var a *pjrt.Artifact
	var stats *pjrt.MemoryStats
	// XLA:CPU's Shardy pass logs a warning about HloShardingV3 for every
	// sharded module; both plugins' logs are shown only when a compile fails.
	logged, err := pjrt.CaptureStderr(func() (err error) {
		if c.target.Name() == "cpu" {
			a, err = compileCPUExecutable(c, f, text)
			return err
		}
		a, stats, err = compileTPUExecutable(c, f, text)
		return err
	})
	var me *pjrt.MeshError
	if err != nil && !errors.As(err, &me) {
		e.stderr.Write(logged)
	}
	return a, stats, err
}

// shardMesh is f's mesh when f is split over more than one device.
func shardMesh(f *ir.Func) *ir.Mesh {
	if m := f.Module; m != nil && len(m.Meshes) > 0 && m.Meshes[0].Devices() > 1 {
		return m.Meshes[0]
	}
	return nil
}

// compileTPUExecutable compiles through libtpu for --topology: a program
// split over a mesh as one partition per chip of the topology.
func compileTPUExecutable(c *buildConfig, f *ir.Func, text string) (*pjrt.Artifact, *pjrt.MemoryStats, error) {
	path, err := pjrt.Find(pjrt.KindTPU)
	if err != nil {
		return nil, nil, err
	}
	p, err := pjrt.LoadForCompile(path)
	if err != nil {
		return nil, nil, err
	}
	topo, err := p.Topology(c.topology)
	if err != nil {
		return nil, nil, fmt.Errorf("--topology %s: %w", c.topology, err)
	}
	defer topo.Close()
	on := compiledFor{api: p.Version(), topology: c.topology}
	if on.platform, err = topo.PlatformName(); err != nil {
		return nil, nil, err
	}
	if on.version, err = topo.PlatformVersion(); err != nil {
		return nil, nil, err
	}
	if on.kind, err = topo.DeviceKind(); err != nil {
		return nil, nil, err
	}
	var exe *pjrt.Executable
	if on.mesh = shardMesh(f); on.mesh != nil {
		exe, on.devices, err = topo.CompileSharded(text, on.mesh)
	} else {
		exe, err = topo.Compile(text, pjrt.DefaultCompileOptions)
	}
	if err != nil {
		return nil, nil, err
	}
	defer exe.Close()
	stats, err := exe.MemoryStats()
	if err != nil {
		return nil, nil, err
	}
	a, err := newArtifact(c, f, text, exe, on)
	return a, &stats, err
}

// compileCPUExecutable compiles through the pjrt backend's client; a
// program split over a mesh for that many XLA:CPU devices (a client of
// them is made when the backend's has fewer, as for a run).
func compileCPUExecutable(c *buildConfig, f *ir.Func, text string) (*pjrt.Artifact, error) {
	b, err := pjrt.Open(pjrt.BackendName)
	if err != nil {
		return nil, err
	}
	cl := b.Client()
	on := compiledFor{mesh: shardMesh(f)}
	var exe interface {
		Serialize() ([]byte, error)
		Close() error
	}
	if on.mesh != nil {
		if cl, err = b.MeshClient(on.mesh); err != nil {
			return nil, err
		}
		params, results := entryTypes(f)
		args, res := f.EntryShardings()
		var s *pjrt.Sharded
		if s, err = cl.CompileSharded(text, on.mesh, params, results, args, res); err == nil {
			exe, on.devices = s, s.Devices()
		}
	} else {
		exe, err = cl.Compile(text, nil, pjrt.DefaultCompileOptions)
	}
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	on.platform, on.version, on.kind, on.api = cl.Platform(), cl.PlatformVersion(), cl.Devices()[0].Kind, cl.Plugin().Version()
	return newArtifact(c, f, text, exe, on)
}

// entryTypes are f's parameter and result types without layouts.
func entryTypes(f *ir.Func) (params, results []ir.Type) {
	for _, p := range f.Params {
		t := p.Type
		t.Layout = nil
		params = append(params, t)
	}
	for _, t := range f.Results {
		t.Layout = nil
		results = append(results, t)
	}
	return params, results
}

// compiledFor is what a PJRT plugin says about the device it compiled for.
type compiledFor struct {
	platform, version, kind, api string
	topology                     string // --topology, for a compile-only client
	mesh                         *ir.Mesh
	devices                      []int // the device assignment of a program split over mesh
}

// newArtifact serializes exe with its manifest: the one place a manifest is
// written, for every plugin.
func newArtifact(c *buildConfig, f *ir.Func, text string, exe interface{ Serialize() ([]byte, error) }, on compiledFor) (*pjrt.Artifact, error) {
	blob, err := exe.Serialize()
	if err != nil {
		return nil, err
	}
	var mesh *pjrt.ManifestMesh
	if on.mesh != nil {
		mesh = &pjrt.ManifestMesh{Name: on.mesh.Name, Devices: on.devices, Params: [][][]string{}, Results: [][][]string{}}
		for _, x := range on.mesh.Axes {
			mesh.Axes = append(mesh.Axes, pjrt.MeshAxis{Name: x.Name, Size: x.Size})
		}
		args, res := f.EntryShardings()
		for _, s := range args {
			mesh.Params = append(mesh.Params, manifestDims(s))
		}
		for _, s := range res {
			mesh.Results = append(mesh.Results, manifestDims(s))
		}
	}
	return &pjrt.Artifact{
		Manifest: pjrt.Manifest{
			Mesh:            mesh,
			Entry:           signature(c, f),
			Target:          c.target.Name(),
			Topology:        on.topology,
			Platform:        on.platform,
			PlatformVersion: on.version,
			DeviceKind:      on.kind,
			PJRTAPI:         on.api,
			Tpucc:           engine.Version,
			StableHLOSHA256: pjrt.SHA256([]byte(text)),
		},
		Executable: blob,
	}, nil
}

// manifestDims is s's axes per dimension, [] (not null) for a whole one.
func manifestDims(s *ir.Sharding) [][]string {
	out := make([][]string, len(s.Dims))
	for d, axes := range s.Dims {
		out[d] = append([]string{}, axes...)
	}
	return out
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

// signingKey is the user's key for executable files and its file
// (pjrt.UserKey), nil when none is configured; a key file that is refused
// is an error naming it.
func signingKey() ([]byte, string, error) {
	key, path, err := pjrt.UserKey()
	var ke *pjrt.KeyError
	if errors.As(err, &ke) {
		return nil, "", fileErrorf(ke.Path, "signing key: %s", ke.Reason)
	}
	return key, path, err
}

// writeExecutable writes the artifact atomically to the -o file, signed
// with key when there is one.
func writeExecutable(c *buildConfig, a *pjrt.Artifact, key []byte) error {
	if key != nil {
		if err := a.Sign(key); err != nil {
			return err
		}
	}
	out, err := newPending(c.out, func(w io.Writer) error {
		_, err := a.WriteTo(w)
		return err
	})
	if err != nil {
		return err
	}
	return commit([]*pending{out})
}
