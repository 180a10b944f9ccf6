package pjrt

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers in xla.ExecutableBuildOptionsProto and xla.DeviceAssignmentProto
// (xla/pjrt/proto/compile_options.proto, xla/xla_data.proto).
const (
	fieldUseSPMDPartitioning  = 6
	fieldDeviceAssignment     = 9
	fieldUseShardyPartitioner = 19

	fieldReplicaCount       = 1 // DeviceAssignmentProto
	fieldComputationCount   = 2
	fieldComputationDevices = 3
	fieldReplicaDeviceIDs   = 1 // DeviceAssignmentProto.ComputationDevice
)

// marshalSPMD encodes a CompileOptionsProto for one replica split into
// len(devices) partitions by Shardy, partition p running on the device with
// ID devices[p].
func marshalSPMD(devices []int, platform string) ([]byte, error) {
	var assign []byte
	assign = protowire.AppendTag(assign, fieldReplicaCount, protowire.VarintType)
	assign = protowire.AppendVarint(assign, 1)
	assign = protowire.AppendTag(assign, fieldComputationCount, protowire.VarintType)
	assign = protowire.AppendVarint(assign, uint64(len(devices)))
	for _, id := range devices {
		var cd []byte
		cd = protowire.AppendTag(cd, fieldReplicaDeviceIDs, protowire.VarintType)
		cd = protowire.AppendVarint(cd, uint64(id))
		assign = protowire.AppendTag(assign, fieldComputationDevices, protowire.BytesType)
		assign = protowire.AppendBytes(assign, cd)
	}
	var build []byte
	for _, f := range []struct {
		num protowire.Number
		v   uint64
	}{{fieldNumReplicas, 1}, {fieldNumPartitions, uint64(len(devices))}, {fieldUseSPMDPartitioning, 1}} {
		build = protowire.AppendTag(build, f.num, protowire.VarintType)
		build = protowire.AppendVarint(build, f.v)
	}
	build = protowire.AppendTag(build, fieldDeviceAssignment, protowire.BytesType)
	build = protowire.AppendBytes(build, assign)
	build = protowire.AppendTag(build, fieldUseShardyPartitioner, protowire.VarintType)
	build = protowire.AppendVarint(build, 1)
	// The same semantics as every other compile (docs/ops.md).
	return compileOptions(build, SemanticsOverrides(platform))
}

// Sharded is a program compiled for a mesh: partition p runs on the
// client's device p, and the entry's parameters and results are split as
// their shardings say.
type Sharded struct {
	exe     *LoadedExecutable
	mesh    *ir.Mesh
	devices []int // partition p runs on the device with ID devices[p]
	args    []*ir.Sharding
	results []*ir.Sharding
	params  []ir.Type // whole parameter types
	outs    []ir.Type // whole result types
}

// CompileSharded compiles StableHLO text lowered from a module with mesh
// (lower/stablehlo writes it with Shardy's annotations) for the client's
// first mesh.Devices() devices. args and results are the entry's shardings
// as the lowering wrote them (stablehlo.EntryShardings); params and outs
// the entry's whole parameter and result types.
func (c *Client) CompileSharded(stablehlo string, mesh *ir.Mesh, params, outs []ir.Type, args, results []*ir.Sharding) (*Sharded, error) {
	ids, err := c.meshDevices(mesh, params, outs, args, results)
	if err != nil {
		return nil, err
	}
	opts, err := marshalSPMD(ids, c.platform)
	if err != nil {
		return nil, err
	}
	h, err := c.compileOptions(stablehlo, opts)
	if err != nil {
		return nil, err
	}
	return c.newSharded(h, mesh, ids, params, outs, args, results)
}

// LoadSharded loads an executable CompileSharded made and Sharded.Serialize
// wrote (by the same plugin build), for the same mesh, types and shardings:
// its partitions run on the client's first mesh.Devices() devices, as they
// were compiled to. The executable's result pieces are checked against the
// shardings, as after a compile.
func (c *Client) LoadSharded(blob []byte, mesh *ir.Mesh, params, outs []ir.Type, args, results []*ir.Sharding) (*Sharded, error) {
	ids, err := c.meshDevices(mesh, params, outs, args, results)
	if err != nil {
		return nil, err
	}
	h, err := c.deserialize(blob)
	if err != nil {
		return nil, err
	}
	return c.newSharded(h, mesh, ids, params, outs, args, results)
}

// meshDevices checks that the client has mesh's devices and that there is
// one sharding per parameter and result, and returns the device IDs that
// the partitions run on, partition p on the client's device p.
func (c *Client) meshDevices(mesh *ir.Mesh, params, outs []ir.Type, args, results []*ir.Sharding) ([]int, error) {
	if err := c.use(); err != nil {
		return nil, err
	}
	n := int(mesh.Devices())
	if n > len(c.devices) {
		return nil, fmt.Errorf("pjrt: mesh @%s needs %d devices, the client has %d (the XLA:CPU plugin takes cpu_device_count=%d)", mesh.Name, n, len(c.devices), n)
	}
	if len(args) != len(params) || len(results) != len(outs) {
		return nil, fmt.Errorf("pjrt: %d parameter and %d result shardings for %d parameters and %d results", len(args), len(results), len(params), len(outs))
	}
	ids := make([]int, n)
	for i := range ids {
		ids[i] = c.devices[i].ID
	}
	return ids, nil
}

// newSharded wraps the loaded executable h as a Sharded: the shardings at
// the program's boundary, each parameter's piece type, and the check of
// the result pieces.
func (c *Client) newSharded(h uintptr, mesh *ir.Mesh, ids []int, params, outs []ir.Type, args, results []*ir.Sharding) (*Sharded, error) {
	sh := &Sharded{mesh: mesh, devices: ids, params: params, outs: outs}
	shards := make([]ir.Type, len(params))
	for i, t := range params {
		sh.args = append(sh.args, boundarySharding(args[i], t, mesh))
		shards[i] = shardType(t, sh.args[i], mesh)
	}
	for i, t := range outs {
		sh.results = append(sh.results, boundarySharding(results[i], t, mesh))
	}
	var err error
	if sh.exe, err = c.newLoaded(h, shards); err != nil {
		return nil, err
	}
	if err := sh.checkOutputs(); err != nil {
		sh.Close()
		return nil, err
	}
	return sh, nil
}

// boundarySharding is how the partitioner splits a parameter or result of
// type t that s splits: for each dimension, the longest run of its axes,
// major first, whose sizes multiply to a divisor of the dimension. The
// pinned XLA:CPU plugin keeps an uneven split inside the program (padding
// it) but drops the axes that do not divide evenly at the program's
// boundary, so that a value split 5 ways over 4 devices is passed whole.
func boundarySharding(s *ir.Sharding, t ir.Type, mesh *ir.Mesh) *ir.Sharding {
	out := &ir.Sharding{Mesh: s.Mesh, Dims: make([][]string, len(s.Dims))}
	for d, axes := range s.Dims {
		out.Dims[d] = []string{}
		parts := int64(1)
		for _, a := range axes {
			parts *= mesh.Axes[mesh.Axis(a)].Size
			if t.Shape[d].Size%parts != 0 {
				break
			}
			out.Dims[d] = append(out.Dims[d], a)
		}
	}
	return out
}

// checkOutputs compares each result's piece with the executable's output
// types, where the plugin reports them, so that a plugin splitting the
// results otherwise fails here instead of gathering wrong numbers.
func (s *Sharded) checkOutputs() error {
	if s.exe.outTypes == nil {
		return nil
	}
	if len(s.exe.outTypes) != len(s.outs) {
		return fmt.Errorf("pjrt: the executable has %d results, the program %d", len(s.exe.outTypes), len(s.outs))
	}
	for i, t := range s.outs {
		want, got := shardType(t, s.results[i], s.mesh), s.exe.outTypes[i]
		got.Layout = nil
		if !got.Equal(want) {
			return fmt.Errorf("pjrt: result %d (%s split %s) is %s on each device, the executable makes %s", i, t, s.results[i], want, got)
		}
	}
	return nil
}

// ArgSharding returns how parameter i is split at the program's boundary:
// what FromHostSharded must be given for it (see boundarySharding).
func (s *Sharded) ArgSharding(i int) *ir.Sharding { return s.args[i] }

// Devices is the device assignment: partition p runs on the device with
// ID Devices()[p].
func (s *Sharded) Devices() []int { return slices.Clone(s.devices) }

// Serialize returns the executable's serialized form, for LoadSharded.
func (s *Sharded) Serialize() ([]byte, error) { return s.exe.Serialize() }

// Close releases the executable.
func (s *Sharded) Close() error { return s.exe.Close() }

// ShardedBuffer is a tensor split over a mesh: Shards[p] is device p's
// piece, of the padded shard shape (uneven splits pad the last pieces).
type ShardedBuffer struct {
	Type     ir.Type // the whole tensor's
	Mesh     *ir.Mesh
	Sharding *ir.Sharding
	Shards   []*Buffer
}

// Close releases every shard.
func (b *ShardedBuffer) Close() error {
	var errs []error
	for _, s := range b.Shards {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// shardType is the type of each device's piece of t split by s: every
// dimension divided by its number of parts, rounded up (XLA pads).
func shardType(t ir.Type, s *ir.Sharding, mesh *ir.Mesh) ir.Type {
	parts := s.Parts(mesh)
	out := ir.Type{DType: t.DType, Shape: make([]ir.Dim, len(t.Shape))}
	for d, dim := range t.Shape {
		out.Shape[d] = ir.D((dim.Size + parts[d] - 1) / parts[d])
	}
	return out
}

// shardStart returns where device p's piece of a tensor of type t starts
// in each dimension. Devices are numbered row-major over the mesh's axes;
// the axes splitting one dimension count major to minor.
func shardStart(p int, t ir.Type, s *ir.Sharding, mesh *ir.Mesh) []int64 {
	coord := make(map[string]int64, len(mesh.Axes))
	rest := int64(p)
	for i := len(mesh.Axes) - 1; i >= 0; i-- {
		a := mesh.Axes[i]
		coord[a.Name] = rest % a.Size
		rest /= a.Size
	}
	size := shardType(t, s, mesh)
	start := make([]int64, len(t.Shape))
	for d, axes := range s.Dims {
		idx := int64(0)
		for _, a := range axes {
			idx = idx*mesh.Axes[mesh.Axis(a)].Size + coord[a]
		}
		start[d] = idx * size.Shape[d].Size
	}
	return start
}

func sizes(t ir.Type) []int64 {
	out := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		out[i] = d.Size
	}
	return out
}

// FromHostSharded splits data, a dense row-major array of static type t,
// by s over mesh and copies each piece to its device.
func (c *Client) FromHostSharded(t ir.Type, data []byte, mesh *ir.Mesh, s *ir.Sharding) (*ShardedBuffer, error) {
	total, ok := t.NumElements()
	if !ok || int64(len(data)) != total*int64(t.DType.Size()) {
		return nil, fmt.Errorf("pjrt: %d bytes for %s", len(data), t)
	}
	return c.FromBoxesSharded(t, wholeArray(data), mesh, s)
}

// wholeArray reads boxes of a dense row-major array in host memory.
type wholeArray []byte

func (a wholeArray) ReadBox(dims []int64, piece []byte, pdims, start []int64, elem int) {
	backend.CopyBox(a, dims, piece, pdims, start, elem, true)
}

// FromBoxesSharded is FromHostSharded for a tensor read piece by piece
// from src: each device's piece is read, copied to the device and dropped
// before the next, so the host holds one piece at a time.
func (c *Client) FromBoxesSharded(t ir.Type, src backend.BoxReader, mesh *ir.Mesh, s *ir.Sharding) (*ShardedBuffer, error) {
	n := int(mesh.Devices())
	if n > len(c.devices) {
		return nil, fmt.Errorf("pjrt: mesh @%s needs %d devices, the client has %d", mesh.Name, n, len(c.devices))
	}
	if len(s.Dims) != t.Rank() {
		return nil, fmt.Errorf("pjrt: sharding %s for %s: rank differs", s, t)
	}
	st := shardType(t, s, mesh)
	sn, _ := st.NumElements()
	out := &ShardedBuffer{Type: t, Mesh: mesh, Sharding: s}
	for p := 0; p < n; p++ {
		piece := make([]byte, sn*int64(t.DType.Size()))
		src.ReadBox(sizes(t), piece, sizes(st), shardStart(p, t, s, mesh), t.DType.Size())
		b, err := c.fromHostOn(p, st, piece, copyHost)
		if err != nil {
			out.Close()
			return nil, err
		}
		out.Shards = append(out.Shards, b)
	}
	return out, nil
}

// ToHost gathers the pieces into one dense row-major array of b.Type.
func (b *ShardedBuffer) ToHost() ([]byte, error) {
	total, _ := b.Type.NumElements()
	out := make([]byte, total*int64(b.Type.DType.Size()))
	for p, s := range b.Shards {
		piece, err := s.ToHost()
		if err != nil {
			return nil, err
		}
		backend.CopyBox(out, sizes(b.Type), piece, sizes(s.Type()), shardStart(p, b.Type, b.Sharding, b.Mesh), b.Type.DType.Size(), false)
	}
	return out, nil
}

// Execute runs the program on every device of the mesh. Each argument must
// be split as the program's parameter is; the results stay on the devices,
// split as the program's results are, for the caller to close.
func (s *Sharded) Execute(args []*ShardedBuffer) ([]*ShardedBuffer, error) {
	return s.ExecuteDonating(args, nil)
}

// ExecuteDonating is Execute that lets the program consume the arguments
// at the positions in donate, as LoadedExecutable.ExecuteDonating does for
// one device: a parameter the program marks as a donor may have every
// device's piece reused for a result (the plugin then deletes the pieces;
// Close still releases them). Every other argument is named in the call's
// non_donatable_input_indices, which holds for every device's list.
func (s *Sharded) ExecuteDonating(args []*ShardedBuffer, donate []int) ([]*ShardedBuffer, error) {
	e := s.exe
	if e.h == 0 {
		return nil, errors.New("pjrt: execute of a closed executable")
	}
	if len(args) != len(s.params) {
		return nil, fmt.Errorf("pjrt: %d arguments, the program takes %d", len(args), len(s.params))
	}
	n := int(s.mesh.Devices())
	for i, a := range args {
		if !a.Type.Equal(s.params[i]) || !a.Sharding.Equal(s.args[i]) || len(a.Shards) != n {
			return nil, fmt.Errorf("pjrt: argument %d is %s split %s, the program takes %s split %s", i, a.Type, a.Sharding, s.params[i], s.args[i])
		}
	}
	perDevice := make([][]*Buffer, n)
	for p := range perDevice {
		for _, a := range args {
			perDevice[p] = append(perDevice[p], a.Shards[p])
		}
	}
	outv, err := e.executeOnDevices(perDevice, donate)
	runtime.KeepAlive(args)
	return s.gather(outv, err)
}

// executeOnDevices runs e once on each of its devices in one
// PJRT_LoadedExecutable_Execute call, args[p] being device p's arguments,
// and returns each device's output handles (nil on error; a handle made
// before an error is in the lists for the caller to release). The
// arguments not in donate are named non-donatable for every device.
func (e *LoadedExecutable) executeOnDevices(args [][]*Buffer, donate []int) ([][]uintptr, error) {
	n, nargs := len(args), len(e.params)
	argv := make([][]uintptr, n)
	outv := make([][]uintptr, n)
	argLists := make([]unsafe.Pointer, n)
	outLists := make([]unsafe.Pointer, n)
	for p := 0; p < n; p++ {
		if len(args[p]) != nargs {
			return nil, fmt.Errorf("pjrt: device %d has %d arguments, the program takes %d", p, len(args[p]), nargs)
		}
		argv[p] = make([]uintptr, nargs+1) // +1: never an empty array
		for i, b := range args[p] {
			if b == nil || b.h == 0 || b.c != e.c || !b.typ.Equal(e.params[i]) {
				return nil, fmt.Errorf("pjrt: argument %d: device %d's piece is closed, of another client or not %s", i, p, e.params[i])
			}
			argv[p][i] = b.h
		}
		outv[p] = make([]uintptr, e.outputs+1)
		argLists[p], outLists[p] = unsafe.Pointer(&argv[p][0]), unsafe.Pointer(&outv[p][0])
	}
	events := make([]uintptr, n)
	opts := executeOptions{structSize: unsafe.Sizeof(executeOptions{})}
	keep := nonDonatable(nil, nargs, donate)
	if len(keep) > 0 {
		opts.nonDonatable, opts.numNonDon = unsafe.Pointer(&keep[0]), uintptr(len(keep))
	}
	a := executeArgs{
		structSize: unsafe.Sizeof(executeArgs{}), executable: e.h, options: unsafe.Pointer(&opts),
		argumentLists: unsafe.Pointer(&argLists[0]), numDevices: uintptr(n), numArgs: uintptr(nargs),
		outputLists: unsafe.Pointer(&outLists[0]), deviceCompleteEvents: unsafe.Pointer(&events[0]),
	}
	err := e.c.p.call(fnLoadedExecutableExecute, unsafe.Pointer(&a))
	for _, ev := range events {
		if ev == 0 {
			continue
		}
		w := eventArgs{structSize: unsafe.Sizeof(eventArgs{}), event: ev}
		if werr := e.c.p.call(fnEventAwait, unsafe.Pointer(&w)); err == nil {
			err = werr
		}
		d := eventArgs{structSize: unsafe.Sizeof(eventArgs{}), event: ev}
		if derr := e.c.p.call(fnEventDestroy, unsafe.Pointer(&d)); err == nil {
			err = derr
		}
	}
	runtime.KeepAlive(args)
	runtime.KeepAlive(argv)
	runtime.KeepAlive(keep)
	return outv, err
}

// gather wraps each device's outputs as the results' pieces, or releases
// them all on error.
func (s *Sharded) gather(outv [][]uintptr, err error) ([]*ShardedBuffer, error) {
	perDevice := make([][]*Buffer, len(outv))
	for p, hs := range outv {
		bs, rerr := s.exe.results(hs[:s.exe.outputs], err, false)
		if err == nil {
			err = rerr
		}
		perDevice[p] = bs
	}
	if err == nil {
		for _, bs := range perDevice {
			if len(bs) != len(s.outs) {
				err = fmt.Errorf("pjrt: a device gave %d results, the program has %d", len(bs), len(s.outs))
			}
		}
	}
	if err != nil {
		for _, bs := range perDevice {
			for _, b := range bs {
				b.Close()
			}
		}
		return nil, err
	}
	out := make([]*ShardedBuffer, len(s.outs))
	for i, t := range s.outs {
		out[i] = &ShardedBuffer{Type: t, Mesh: s.mesh, Sharding: s.results[i]}
		for _, bs := range perDevice {
			out[i].Shards = append(out[i].Shards, bs[i])
		}
	}
	return out, nil
}

// compileOptions compiles stablehlo with the serialized compile options
// opts (a device assignment over several devices: marshalSPMD,
// marshalReplicas) and returns the loaded executable's handle.
func (c *Client) compileOptions(stablehlo string, opts []byte) (uintptr, error) {
	pr, text, format := newProgram(stablehlo)
	a := &clientCompileArgs{structSize: unsafe.Sizeof(clientCompileArgs{}), client: c.h,
		program: unsafe.Pointer(pr), options: unsafe.Pointer(&opts[0]), optionsLen: uintptr(len(opts))}
	err := c.p.call(fnClientCompile, unsafe.Pointer(a))
	runtime.KeepAlive(pr)
	runtime.KeepAlive(text)
	runtime.KeepAlive(format)
	runtime.KeepAlive(opts)
	return a.executable, err
}
