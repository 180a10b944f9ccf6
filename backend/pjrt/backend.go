package pjrt

import (
	"fmt"
	"os"
	"sync"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// BackendName is the name the PJRT backend registers under. It runs on the
// plugin named by $TPUCC_PJRT_PLUGIN, else on the pinned XLA:CPU plugin
// (make pjrt-cpu-plugin).
const BackendName = "pjrt"

func init() { backend.Register(BackendName, openDefault) }

var (
	defaultOnce    sync.Once
	defaultBackend *Backend
	defaultErr     error
)

// openDefault opens one client for the process, on first use.
func openDefault() (backend.Backend, error) {
	defaultOnce.Do(func() {
		var p *Plugin
		if path := os.Getenv(EnvPlugin); path != "" {
			p, defaultErr = Load(path)
		} else {
			p, defaultErr = LoadCPU()
		}
		if defaultErr != nil {
			return
		}
		var c *Client
		if c, defaultErr = p.NewClient(); defaultErr == nil {
			defaultBackend = NewBackend(c)
		}
	})
	if defaultErr != nil {
		return nil, defaultErr
	}
	return defaultBackend, nil
}

// Backend is a backend.Backend that compiles a program's StableHLO with a
// PJRT client and runs it on the client's first device.
type Backend struct {
	c *Client
}

// NewBackend runs programs on c.
func NewBackend(c *Client) *Backend { return &Backend{c: c} }

// Name is BackendName.
func (b *Backend) Name() string { return BackendName }

// Fingerprint names the plugin's platform, its version, the C API version
// and the device kind: what a compiled executable depends on.
func (b *Backend) Fingerprint() string {
	return fmt.Sprintf("pjrt platform=%s version=%q api=%s device=%q",
		b.c.Platform(), b.c.PlatformVersion(), b.c.p.Version(), b.c.devices[0].Kind)
}

// Compile compiles p.HLO for one device.
func (b *Backend) Compile(p *backend.Program) (backend.Executable, error) {
	if p.Entry == nil || p.HLO == "" {
		return nil, fmt.Errorf("pjrt: program has no entry or no StableHLO")
	}
	params := make([]ir.Type, len(p.Entry.Params))
	for i, v := range p.Entry.Params {
		if !v.Type.IsStatic() {
			return nil, fmt.Errorf("pjrt: parameter %d of @%s is %s: PJRT runs static shapes only", i, p.Entry.Name, v.Type)
		}
		params[i] = v.Type
		params[i].Layout = nil
	}
	results := make([]ir.Type, len(p.Entry.Results))
	for i, t := range p.Entry.Results {
		results[i] = t
		results[i].Layout = nil
	}
	exe, err := b.c.Compile(p.HLO, params, DefaultCompileOptions)
	if err != nil {
		return nil, err
	}
	if exe.NumOutputs() != len(results) {
		exe.Close()
		return nil, fmt.Errorf("pjrt: the compiled program returns %d results, @%s %d", exe.NumOutputs(), p.Entry.Name, len(results))
	}
	return &executable{exe: exe, results: results}, nil
}

type executable struct {
	exe     *LoadedExecutable
	results []ir.Type
}

// Run copies args to the device, executes, and copies the results back.
func (e *executable) Run(args []*backend.Buffer) ([]*backend.Buffer, error) {
	c := e.exe.c
	in := make([]*Buffer, 0, len(args))
	defer func() {
		for _, b := range in {
			b.Close()
		}
	}()
	for i, a := range args {
		if a == nil {
			return nil, fmt.Errorf("pjrt: argument %d is nil", i)
		}
		b, err := c.FromHost(a.Type(), a.Bytes())
		if err != nil {
			return nil, fmt.Errorf("pjrt: argument %d: %w", i, err)
		}
		in = append(in, b)
	}
	outs, err := e.exe.Execute(in)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, b := range outs {
			b.Close()
		}
	}()
	res := make([]*backend.Buffer, len(outs))
	for i, o := range outs {
		if !o.Type().Equal(e.results[i]) {
			return nil, fmt.Errorf("pjrt: result %d is %s, the program declares %s", i, o.Type(), e.results[i])
		}
		data, err := o.ToHost()
		if err != nil {
			return nil, err
		}
		if res[i], err = backend.View(o.Type(), data); err != nil {
			return nil, err
		}
	}
	return res, nil
}
