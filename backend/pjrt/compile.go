package pjrt

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"unsafe"

	"github.com/tpucc/tpucc/ir"
	"google.golang.org/protobuf/encoding/protowire"
)

// CompileOptions are the fields of xla.CompileOptionsProto this client sets.
type CompileOptions struct {
	Replicas   int // executable_build_options.num_replicas
	Partitions int // executable_build_options.num_partitions
	// Overrides are XLA debug options by name (env_option_overrides), each
	// a bool, int, int64, float32 or string. Client.Compile and
	// Topology.Compile add SemanticsOverrides for the plugin's platform
	// before them; one given here of the same name replaces it.
	Overrides []Option
}

// Field numbers in xla.CompileOptionsProto, ExecutableBuildOptionsProto and
// OptionOverrideProto (a map entry's key is field 1, its value field 2).
const (
	fieldExecutableBuildOptions = 3
	fieldNumReplicas            = 4
	fieldNumPartitions          = 5
	fieldEnvOptionOverrides     = 7
	fieldOverrideString         = 1
	fieldOverrideBool           = 2
	fieldOverrideInt            = 3
	fieldOverrideDouble         = 4
)

// SemanticsOverrides are the XLA debug options that make a plugin of
// platform keep docs/ops.md: every f16/bf16 op rounded to its type
// (xla_allow_excess_precision=false; by default XLA keeps a chain of bf16
// ops in f32 and the result differs by a bf16 unit), and min/max
// propagating NaN (XLA:CPU's default, fast min/max, drops NaNs from max
// reductions; XLA:GPU has the same option). XLA:TPU has no fast min/max
// debug option, so a TPU compile carries only the first. Each name is a
// field of xla.DebugOptions, which every plugin built from XLA knows; a
// plugin refuses a name it does not know, so no other is sent.
func SemanticsOverrides(platform string) []Option {
	opts := []Option{{"xla_allow_excess_precision", false}}
	switch platform {
	case "cpu":
		opts = append(opts, Option{"xla_cpu_enable_fast_min_max", false})
	case "cuda", "rocm", "gpu":
		opts = append(opts, Option{"xla_gpu_enable_fast_min_max", false})
	}
	return opts
}

// withSemantics is o with SemanticsOverrides(platform) first, less those
// that o overrides itself.
func (o CompileOptions) withSemantics(platform string) CompileOptions {
	var all []Option
	for _, s := range SemanticsOverrides(platform) {
		if !slices.ContainsFunc(o.Overrides, func(x Option) bool { return x.Name == s.Name }) {
			all = append(all, s)
		}
	}
	o.Overrides = append(all, o.Overrides...)
	return o
}

// Marshal encodes o as a serialized xla.CompileOptionsProto. Counts below
// one are refused here: an XLA:CPU plugin aborts the process on them.
func (o CompileOptions) Marshal() ([]byte, error) {
	if o.Replicas < 1 || o.Partitions < 1 {
		return nil, fmt.Errorf("pjrt: %d replicas and %d partitions: both must be at least 1", o.Replicas, o.Partitions)
	}
	var build []byte
	build = protowire.AppendTag(build, fieldNumReplicas, protowire.VarintType)
	build = protowire.AppendVarint(build, uint64(o.Replicas))
	build = protowire.AppendTag(build, fieldNumPartitions, protowire.VarintType)
	build = protowire.AppendVarint(build, uint64(o.Partitions))
	return compileOptions(build, o.Overrides)
}

// compileOptions encodes a CompileOptionsProto of the encoded
// ExecutableBuildOptionsProto build and the option overrides.
func compileOptions(build []byte, overrides []Option) ([]byte, error) {
	var out []byte
	out = protowire.AppendTag(out, fieldExecutableBuildOptions, protowire.BytesType)
	out = protowire.AppendBytes(out, build)
	for _, ov := range overrides {
		entry, err := overrideEntry(ov)
		if err != nil {
			return nil, err
		}
		out = protowire.AppendTag(out, fieldEnvOptionOverrides, protowire.BytesType)
		out = protowire.AppendBytes(out, entry)
	}
	return out, nil
}

// overrideEntry encodes one env_option_overrides map entry: the name, and
// an OptionOverrideProto holding the value.
func overrideEntry(o Option) ([]byte, error) {
	var v []byte
	switch x := o.Value.(type) {
	case bool:
		v = protowire.AppendTag(v, fieldOverrideBool, protowire.VarintType)
		v = protowire.AppendVarint(v, protowire.EncodeBool(x))
	case int:
		v = protowire.AppendTag(v, fieldOverrideInt, protowire.VarintType)
		v = protowire.AppendVarint(v, uint64(int64(x)))
	case int64:
		v = protowire.AppendTag(v, fieldOverrideInt, protowire.VarintType)
		v = protowire.AppendVarint(v, uint64(x))
	case float32:
		v = protowire.AppendTag(v, fieldOverrideDouble, protowire.Fixed64Type)
		v = protowire.AppendFixed64(v, math.Float64bits(float64(x)))
	case string:
		v = protowire.AppendTag(v, fieldOverrideString, protowire.BytesType)
		v = protowire.AppendString(v, x)
	default:
		return nil, fmt.Errorf("pjrt: compile option %s: value of type %T (want bool, int, int64, float32 or string)", o.Name, o.Value)
	}
	var e []byte
	e = protowire.AppendTag(e, 1, protowire.BytesType)
	e = protowire.AppendString(e, o.Name)
	e = protowire.AppendTag(e, 2, protowire.BytesType)
	return protowire.AppendBytes(e, v), nil
}

// DefaultCompileOptions run on one device.
var DefaultCompileOptions = CompileOptions{Replicas: 1, Partitions: 1}

// newProgram lays out a PJRT_Program over code. The caller keeps code and
// the returned keep-alive values reachable for the duration of the call.
func newProgram(code string) (*program, []byte, []byte) {
	text := []byte(code)
	if len(text) == 0 {
		text = []byte{0}
		text = text[:0:1]
	}
	format := []byte("mlir")
	pr := &program{
		structSize: unsafe.Sizeof(program{}),
		code:       unsafe.Pointer(unsafe.SliceData(text[:cap(text)])),
		codeLen:    uintptr(len(text)),
		format:     unsafe.Pointer(&format[0]),
		formatLen:  uintptr(len(format)),
	}
	return pr, text, format
}

// Executable is a compiled, unloaded program (PJRT_Executable): what a
// compile for a topology yields, and what serializes.
type Executable struct {
	p   *Plugin
	h   uintptr
	cln runtime.Cleanup
}

func (p *Plugin) newExecutable(h uintptr) *Executable {
	e := &Executable{p: p, h: h}
	p.live.Add(1)
	e.cln = runtime.AddCleanup(e, func(h uintptr) { p.destroyExecutable(h) }, h)
	return e
}

func (p *Plugin) destroyExecutable(h uintptr) {
	a := &executableArgs{structSize: unsafe.Sizeof(executableArgs{}), executable: h}
	p.call(fnExecutableDestroy, unsafe.Pointer(a))
	p.live.Add(-1)
}

// Close destroys the executable. It is safe to call twice.
func (e *Executable) Close() error {
	if e == nil || e.h == 0 {
		return nil
	}
	e.cln.Stop()
	e.p.destroyExecutable(e.h)
	e.h = 0
	return nil
}

// withProgram marshals o and builds the PJRT program for stablehlo, then
// calls do with pointers to both, keeping that Go memory alive until do has
// returned (the plugin reads it during the call).
func withProgram(stablehlo string, o CompileOptions, do func(program, options unsafe.Pointer, n uintptr) error) error {
	opts, err := o.Marshal()
	if err != nil {
		return err
	}
	pr, text, format := newProgram(stablehlo)
	err = do(unsafe.Pointer(pr), unsafe.Pointer(&opts[0]), uintptr(len(opts)))
	runtime.KeepAlive(pr)
	runtime.KeepAlive(text)
	runtime.KeepAlive(format)
	runtime.KeepAlive(opts)
	return err
}

// Compile compiles StableHLO text for a topology, without a client or a
// device: the ahead-of-time path. o carries SemanticsOverrides for the
// topology's platform.
func (t *Topology) Compile(stablehlo string, o CompileOptions) (*Executable, error) {
	if t.h == 0 {
		return nil, errors.New("pjrt: compile on a closed topology")
	}
	platform, err := t.PlatformName()
	if err != nil {
		return nil, err
	}
	a := &compileArgs{structSize: unsafe.Sizeof(compileArgs{}), topology: t.h}
	err = withProgram(stablehlo, o.withSemantics(platform), func(pr, opts unsafe.Pointer, n uintptr) error {
		a.program, a.options, a.optionsLen = pr, opts, n
		return t.p.call(fnCompile, unsafe.Pointer(a))
	})
	if err != nil {
		return nil, err
	}
	return t.p.newExecutable(a.executable), nil
}

// CompileSharded compiles StableHLO text lowered from a module with mesh
// (Shardy's annotations, as for Client.CompileSharded) for every chip of
// the topology: one partition per chip, partition p on the topology's p-th
// device. The mesh must have as many devices as the topology has chips: a
// program for fewer would leave chips idle, one for more cannot be placed.
// It returns the device IDs of the assignment with the executable.
func (t *Topology) CompileSharded(stablehlo string, mesh *ir.Mesh) (*Executable, []int, error) {
	if t.h == 0 {
		return nil, nil, errors.New("pjrt: compile on a closed topology")
	}
	ids, err := t.DeviceIDs()
	if err != nil {
		return nil, nil, err
	}
	if n := mesh.Devices(); n != int64(len(ids)) {
		return nil, nil, &MeshError{Mesh: mesh.Name, Devices: n, Topology: t.name, Chips: len(ids)}
	}
	platform, err := t.PlatformName()
	if err != nil {
		return nil, nil, err
	}
	opts, err := marshalSPMD(ids, platform)
	if err != nil {
		return nil, nil, err
	}
	pr, text, format := newProgram(stablehlo)
	a := &compileArgs{structSize: unsafe.Sizeof(compileArgs{}), topology: t.h,
		program: unsafe.Pointer(pr), options: unsafe.Pointer(&opts[0]), optionsLen: uintptr(len(opts))}
	err = t.p.call(fnCompile, unsafe.Pointer(a))
	runtime.KeepAlive(pr)
	runtime.KeepAlive(text)
	runtime.KeepAlive(format)
	runtime.KeepAlive(opts)
	if err != nil {
		return nil, nil, err
	}
	return t.p.newExecutable(a.executable), ids, nil
}

// MeshError is CompileSharded's refusal of a mesh whose device count is
// not the topology's chip count: the user's mistake, not the plugin's.
type MeshError struct {
	Mesh     string
	Devices  int64
	Topology string
	Chips    int
}

func (e *MeshError) Error() string {
	return fmt.Sprintf("mesh @%s has %d devices and topology %s has %d chips: they must be equal", e.Mesh, e.Devices, e.Topology, e.Chips)
}

// Serialize returns the executable's serialized form, which a client of the
// same plugin and device kind can load.
func (e *Executable) Serialize() ([]byte, error) {
	if e.h == 0 {
		return nil, errors.New("pjrt: serialize of a closed executable")
	}
	a := &executableSerializeArgs{structSize: unsafe.Sizeof(executableSerializeArgs{}), executable: e.h}
	if err := e.p.call(fnExecutableSerialize, unsafe.Pointer(a)); err != nil {
		return nil, err
	}
	out := cBytes(a.bytes, a.bytesLen)
	if a.deleter != 0 {
		callC(a.deleter, a.serialized)
	}
	return out, nil
}

// NumOutputs is the number of results the executable returns.
func (e *Executable) NumOutputs() (int, error) {
	a := &executableNumOutputsArgs{structSize: unsafe.Sizeof(executableNumOutputsArgs{}), executable: e.h}
	if err := e.p.call(fnExecutableNumOutputs, unsafe.Pointer(a)); err != nil {
		return 0, err
	}
	return int(a.numOutputs), nil
}

// OutputTypes are the types of the executable's results, as the plugin
// reports them.
func (e *Executable) OutputTypes() ([]ir.Type, error) {
	ta := &executableOutputTypesArgs{structSize: unsafe.Sizeof(executableOutputTypesArgs{}), executable: e.h}
	if err := e.p.call(fnExecutableOutputElementTypes, unsafe.Pointer(ta)); err != nil {
		return nil, err
	}
	da := &executableOutputDimsArgs{structSize: unsafe.Sizeof(executableOutputDimsArgs{}), executable: e.h}
	if err := e.p.call(fnExecutableOutputDimensions, unsafe.Pointer(da)); err != nil {
		return nil, err
	}
	if ta.numTypes != da.numOutputs || ta.numTypes > 1<<16 {
		return nil, fmt.Errorf("pjrt: the executable reports %d output types and %d output shapes", ta.numTypes, da.numOutputs)
	}
	if ta.numTypes == 0 {
		return []ir.Type{}, nil
	}
	types := unsafe.Slice((*int32)(cPtr(ta.types)), ta.numTypes)
	ranks := unsafe.Slice((*uintptr)(cPtr(da.dimSizes)), da.numOutputs)
	total := uintptr(0)
	for _, r := range ranks {
		if r > 64 {
			return nil, fmt.Errorf("pjrt: an output of rank %d", r)
		}
		total += r
	}
	var dims []int64
	if total > 0 {
		dims = unsafe.Slice((*int64)(cPtr(da.dims)), total)
	}
	out := make([]ir.Type, len(types))
	for i, bt := range types {
		dt, ok := dtypeOf(bt)
		if !ok {
			return nil, fmt.Errorf("pjrt: output %d of PJRT element type %d, which tpucc has no dtype for", i, bt)
		}
		out[i] = ir.Type{DType: dt, Shape: []ir.Dim{}}
		for _, n := range dims[:ranks[i]] {
			out[i].Shape = append(out[i].Shape, ir.D(n))
		}
		dims = dims[ranks[i]:]
	}
	return out, nil
}
