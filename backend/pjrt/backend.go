package pjrt

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// The names the PJRT backends register under: BackendName runs on the
// plugin named by $TPUCC_PJRT_PLUGIN, else on the pinned XLA:CPU plugin
// (make pjrt-cpu-plugin); TPUName on libtpu and GPUName on the CUDA plugin,
// each only where the machine has such a device.
const (
	BackendName = "pjrt"
	TPUName     = "pjrt-tpu"
	GPUName     = "pjrt-gpu"
)

// The environment variables that hold each backend's client create options
// (ParseOptions), such as TPUCC_PJRT_GPU_OPTIONS=preallocate=false for the
// CUDA plugin. Plugins refuse names they do not know, so each backend has
// its own.
const (
	EnvOptions    = "TPUCC_PJRT_OPTIONS"
	EnvTPUOptions = "TPUCC_PJRT_TPU_OPTIONS"
	EnvGPUOptions = "TPUCC_PJRT_GPU_OPTIONS"
)

func init() {
	backend.Register(BackendName, opener(BackendName, EnvOptions, openCPU))
	backend.Register(TPUName, opener(TPUName, EnvTPUOptions, openTPU))
	backend.Register(GPUName, opener(GPUName, EnvGPUOptions, openGPU))
}

// opener opens one client for the process on first use, with load and the
// create options in the environment variable env.
func opener(name, env string, load func() (*Plugin, error)) func() (backend.Backend, error) {
	var (
		once sync.Once
		b    *Backend
		err  error
	)
	return func() (backend.Backend, error) {
		once.Do(func() {
			var opts []Option
			if opts, err = ParseOptions(os.Getenv(env)); err != nil {
				err = fmt.Errorf("pjrt: $%s: %w", env, err)
				return
			}
			var p *Plugin
			if p, err = load(); err != nil {
				return
			}
			var c *Client
			if c, err = p.NewClient(opts...); err == nil {
				b = &Backend{c: c, name: name, grow: c.Platform() == "cpu" && !hasOption(opts, "cpu_device_count")}
			}
		})
		if err != nil {
			return nil, err
		}
		return b, nil
	}
}

func openCPU() (*Plugin, error) {
	if path := os.Getenv(EnvPlugin); path != "" {
		return Load(path)
	}
	return LoadCPU()
}

// ErrNoTPU and ErrNoGPU are the errors of opening a device's backend on a
// machine without one.
var (
	ErrNoTPU = errors.New("no TPU device on this machine (no TPU chip among the PCI devices in /sys/bus/pci/devices)")
	ErrNoGPU = errors.New("no GPU device on this machine (no NVIDIA display controller among the PCI devices in /sys/bus/pci/devices)")
)

func openTPU() (*Plugin, error) {
	if !backend.HasTPU() {
		return nil, ErrNoTPU
	}
	path, err := Find(KindTPU)
	if err != nil {
		return nil, err
	}
	return Load(path)
}

func openGPU() (*Plugin, error) {
	if !backend.HasGPU() {
		return nil, ErrNoGPU
	}
	path, err := Find(KindCUDA)
	if err != nil {
		return nil, err
	}
	return Load(path)
}

// Open opens the backend registered as name (BackendName, TPUName or
// GPUName) as a *Backend.
func Open(name string) (*Backend, error) {
	b, err := backend.Lookup(name)
	if err != nil {
		return nil, err
	}
	pb, ok := b.(*Backend)
	if !ok {
		return nil, fmt.Errorf("pjrt: %s is not a PJRT backend", name)
	}
	return pb, nil
}

// ForPlatform is the backend that runs executables of a plugin platform
// (a manifest's platform): cpu, tpu, cuda.
func ForPlatform(platform string) (string, error) {
	switch platform {
	case "cpu":
		return BackendName, nil
	case "tpu":
		return TPUName, nil
	case "cuda", "gpu":
		return GPUName, nil
	}
	return "", fmt.Errorf("no PJRT backend for platform %q", platform)
}

// Backend is a backend.Backend that compiles a program's StableHLO with a
// PJRT client and runs it on the client's first device.
type Backend struct {
	c    *Client
	name string
	// grow: c is XLA:CPU made without a cpu_device_count, so a program
	// over a larger mesh gets a client of that many devices (forMesh).
	grow   bool
	meshMu sync.Mutex
	meshed map[int64]*Client // those clients, by device count

	compiles, loads atomic.Int64 // programs compiled, and loaded from NativeCode
}

// NewBackend runs programs on c.
func NewBackend(c *Client) *Backend { return &Backend{c: c, name: BackendName} }

// Client is the backend's PJRT client.
func (b *Backend) Client() *Client { return b.c }

// hasOption reports whether opts sets the option called name.
func hasOption(opts []Option, name string) bool {
	for _, o := range opts {
		if o.Name == name {
			return true
		}
	}
	return false
}

// forMesh is the client that runs programs over mesh: the backend's own
// when it has the devices. XLA:CPU's device count is a create option, so
// where the user did not choose it ($TPUCC_PJRT_OPTIONS) a client of
// exactly the mesh's devices is made once and kept for the process: `tpucc
// generate --device pjrt --mesh tp=4` needs no environment variable.
func (b *Backend) forMesh(mesh *ir.Mesh) (*Client, error) {
	return b.forDevices(mesh.Devices(), "mesh @"+mesh.Name)
}

// forDevices is forMesh for n devices that what (a mesh, the replicas)
// runs on.
func (b *Backend) forDevices(n int64, what string) (*Client, error) {
	if n <= int64(len(b.c.devices)) || !b.grow {
		return b.c, nil
	}
	b.meshMu.Lock()
	defer b.meshMu.Unlock()
	if c := b.meshed[n]; c != nil {
		return c, nil
	}
	c, err := b.c.p.NewClient(Option{"cpu_device_count", n})
	if err != nil {
		return nil, fmt.Errorf("pjrt: a client of %d XLA:CPU devices for %s: %w", n, what, err)
	}
	if b.meshed == nil {
		b.meshed = map[int64]*Client{}
	}
	b.meshed[n] = c
	return c, nil
}

// MeshClient is the client that runs programs over mesh (see forMesh):
// the backend's own when it has the devices, else, on XLA:CPU without a
// cpu_device_count of the user's, one of exactly the mesh's devices.
func (b *Backend) MeshClient(mesh *ir.Mesh) (*Client, error) { return b.forMesh(mesh) }

// UploadSharded splits h over mesh's devices as s says
// (backend.ShardUploader): each device receives its piece, copied from h
// one piece at a time; when h's storage is a backend.BoxReader (a model's
// stacked layers), each piece is read from it without h's whole array
// being made. A buffer already split that way on the same devices is
// returned as it is.
func (b *Backend) UploadSharded(h *backend.Buffer, mesh *ir.Mesh, s *ir.Sharding) (*backend.Buffer, error) {
	c, err := b.forMesh(mesh)
	if err != nil {
		return nil, err
	}
	if d, ok := h.Device().(*ShardedBuffer); ok && d.Sharding.Equal(s) && len(d.Shards) > 0 && d.Shards[0].c == c {
		return h, nil
	}
	if why := h.Donated(); why != "" {
		return nil, fmt.Errorf("pjrt: uploading %s: %s", h.Type(), why)
	}
	var d *ShardedBuffer
	if src, ok := h.Device().(backend.BoxReader); ok {
		d, err = c.FromBoxesSharded(h.Type(), src, mesh, s)
	} else {
		d, err = c.FromHostSharded(h.Type(), h.Bytes(), mesh, s)
	}
	if err != nil {
		return nil, err
	}
	return backend.OnDevice(h.Type(), d), nil
}

// Name is the name the backend was opened by.
func (b *Backend) Name() string { return b.name }

// Fingerprint names the plugin's platform, its version, the C API version,
// the device kind and the XLA options every compile carries: what a
// compiled executable depends on.
func (b *Backend) Fingerprint() string {
	var opts []string
	for _, o := range SemanticsOverrides(b.c.Platform()) {
		opts = append(opts, fmt.Sprintf("%s=%v", o.Name, o.Value))
	}
	return fmt.Sprintf("pjrt platform=%s version=%q api=%s device=%q options=%s",
		b.c.Platform(), b.c.PlatformVersion(), b.c.p.Version(), b.c.devices[0].Kind, strings.Join(opts, ","))
}

// Compile compiles p.HLO for one device.
func (b *Backend) Compile(p *backend.Program) (backend.Executable, error) {
	return b.compile(p, nil)
}

// compile compiles p.HLO, or loads code (a serialized executable) when it
// is given and checks out (see CompileExpecting).
func (b *Backend) compile(p *backend.Program, code *backend.NativeCode) (backend.Executable, error) {
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
	if mesh := programMesh(p); mesh != nil {
		return b.compileSharded(p, mesh, params, results, code)
	}
	if r := backend.Replicas(p); r > 1 {
		return b.compileReplicated(p, r, params, results)
	}
	exe := b.load(p, code, params)
	if exe == nil {
		var err error
		if exe, err = b.c.Compile(p.HLO, params, DefaultCompileOptions); err != nil {
			return nil, err
		}
		b.compiles.Add(1)
	}
	if exe.NumOutputs() != len(results) {
		exe.Close()
		return nil, fmt.Errorf("pjrt: the compiled program returns %d results, @%s %d", exe.NumOutputs(), p.Entry.Name, len(results))
	}
	return &executable{exe: exe, results: results, id: b.codeID(p.HLO)}, nil
}

type executable struct {
	exe     *LoadedExecutable
	results []ir.Type
	id      string // NativeCode's ID, without the executable's hash

	once   sync.Once
	code   backend.NativeCode
	codeOK bool
}

// Run copies args to the device, executes, and copies the results back.
func (e *executable) Run(args []*backend.Buffer) ([]*backend.Buffer, error) {
	return e.RunWith(args, backend.RunOptions{})
}

// RunWith executes on args, taking an argument that already lives on this
// client's device as it is, and leaves the results on the device when asked.
// The arguments in o.Donate, and the copies made here for the call, may be
// consumed by the program: a parameter its StableHLO marks as a donor then
// lends its device memory to a result (see ExecuteDonating). Any other
// argument of the caller's is left intact.
func (e *executable) RunWith(args []*backend.Buffer, o backend.RunOptions) ([]*backend.Buffer, error) {
	if err := checkInto(e.results, args, o); err != nil {
		return nil, err
	}
	in, owned, err := e.inputs(args, o.Donate)
	defer func() {
		for i, b := range in {
			if owned[i] {
				b.Close()
			}
		}
	}()
	if err != nil {
		return nil, err
	}
	donate := o.Donate
	for i, own := range owned {
		if own && !in[i].lends && !slices.Contains(donate, i) {
			donate = append(slices.Clip(donate), i) // a copy of ours, never lent memory
		}
	}
	outs, err := e.exe.execute(in, donate, !o.KeepOnDevice)
	if err != nil {
		return nil, err
	}
	if !o.KeepOnDevice {
		defer closeAll(outs) // copied out below; closing twice is harmless
	}
	res := make([]*backend.Buffer, len(outs))
	for i, b := range outs {
		if err == nil && !b.Type().Equal(e.results[i]) {
			err = fmt.Errorf("pjrt: result %d is %s, the program declares %s", i, b.Type(), e.results[i])
		}
		if err == nil && o.KeepOnDevice {
			res[i] = backend.OnDevice(b.Type(), b)
			continue
		}
		if err == nil {
			res[i], err = toHostInto(b, o.Into, i)
		}
		b.Close()
	}
	if err != nil {
		closeOnDevice(res)
		return nil, err
	}
	return res, nil
}

// closeOnDevice frees the device buffers among results a failed call made
// before it failed: the caller gets none of them.
func closeOnDevice(res []*backend.Buffer) {
	for _, r := range res {
		if r != nil && r.Device() != nil {
			r.Device().Close()
		}
	}
}

// Upload copies h into the device's memory (backend.Uploader); a buffer
// already on this client's device is returned as it is.
func (b *Backend) Upload(h *backend.Buffer) (*backend.Buffer, error) {
	if d, ok := h.Device().(*Buffer); ok && d.c == b.c {
		return h, nil
	}
	if why := h.Donated(); why != "" {
		return nil, fmt.Errorf("pjrt: uploading %s: %s", h.Type(), why)
	}
	d, err := b.c.FromHost(h.Type(), h.Bytes())
	if err != nil {
		return nil, err
	}
	return backend.OnDevice(h.Type(), d), nil
}

// inputs gives each argument a device buffer of this client: its own when
// it has one, else one made here (owned, closed after the call). On XLA:CPU
// an argument the call does not donate lends its memory to the buffer when
// XLA can read it in place (lendHost: no allocation or copy in the plugin;
// two 4 MiB arguments of an add, 1.5-2.5 ms a call copied, 0.6-1.0 ms lent);
// any other is copied.
func (e *executable) inputs(args []*backend.Buffer, donate []int) (in []*Buffer, owned []bool, err error) {
	c := e.exe.c
	in = make([]*Buffer, 0, len(args))
	owned = make([]bool, 0, len(args))
	for i, a := range args {
		if a == nil {
			return in, owned, fmt.Errorf("pjrt: argument %d is nil", i)
		}
		if d, ok := a.Device().(*Buffer); ok && d.c == c && d.typ.Equal(a.Type().WithShape(a.Type().Shape)) {
			in, owned = append(in, d), append(owned, false)
			continue
		}
		if why := a.Donated(); why != "" {
			return in, owned, fmt.Errorf("pjrt: argument %d: %s %s", i, a.Type(), why)
		}
		mode := copyTransient
		if c.platform == "cpu" && lendable(a.Bytes()) && !slices.Contains(donate, i) {
			mode = lendHost
		}
		b, err := c.fromHost(a.Type(), a.Bytes(), mode) // closed by RunWith
		if err != nil {
			return in, owned, fmt.Errorf("pjrt: argument %d: %w", i, err)
		}
		in, owned = append(in, b), append(owned, true)
	}
	return in, owned, nil
}

// lendable: data is worth lending to XLA:CPU, which would copy it anyway
// (after the pinning lending costs) unless it starts at a multiple of
// backend.Alignment, XLA:CPU's alignment for reading in place.
func lendable(data []byte) bool {
	return len(data) > 0 && uintptr(unsafe.Pointer(&data[0]))%backend.Alignment == 0
}

func closeAll(bs []*Buffer) {
	for _, b := range bs {
		b.Close()
	}
}

func toHost(b *Buffer) (*backend.Buffer, error) {
	data, err := b.ToHost()
	if err != nil {
		return nil, err
	}
	return backend.View(b.Type(), data)
}
