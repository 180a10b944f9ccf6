package pjrt

import (
	"errors"
	"fmt"

	"github.com/tpucc/tpucc/ir"
	"google.golang.org/protobuf/encoding/protowire"
)

// marshalReplicas encodes a CompileOptionsProto for len(devices) replicas
// of one partition, replica r running on the device with ID devices[r]: a
// program whose collectives exchange values between replicas (StableHLO's
// mhlo.num_replicas, JAX's pmap), not one the partitioner splits.
func marshalReplicas(devices []int, platform string) ([]byte, error) {
	var cd []byte
	for _, id := range devices {
		cd = protowire.AppendTag(cd, fieldReplicaDeviceIDs, protowire.VarintType)
		cd = protowire.AppendVarint(cd, uint64(id))
	}
	var assign []byte
	assign = protowire.AppendTag(assign, fieldReplicaCount, protowire.VarintType)
	assign = protowire.AppendVarint(assign, uint64(len(devices)))
	assign = protowire.AppendTag(assign, fieldComputationCount, protowire.VarintType)
	assign = protowire.AppendVarint(assign, 1)
	assign = protowire.AppendTag(assign, fieldComputationDevices, protowire.BytesType)
	assign = protowire.AppendBytes(assign, cd)
	var build []byte
	build = protowire.AppendTag(build, fieldNumReplicas, protowire.VarintType)
	build = protowire.AppendVarint(build, uint64(len(devices)))
	build = protowire.AppendTag(build, fieldNumPartitions, protowire.VarintType)
	build = protowire.AppendVarint(build, 1)
	build = protowire.AppendTag(build, fieldDeviceAssignment, protowire.BytesType)
	build = protowire.AppendBytes(build, assign)
	return compileOptions(build, SemanticsOverrides(platform))
}

// Replicated is a program compiled to run as several replicas, replica r
// on the client's device r, each with its own arguments and results.
type Replicated struct {
	exe      *LoadedExecutable
	replicas int
	outs     []ir.Type
}

// CompileReplicated compiles StableHLO text for replicas replicas of one
// partition on the client's first replicas devices. The text's
// mhlo.num_replicas should say as many (XLA takes the count from the
// compile options). params and outs are the entry's parameter and result
// types, the same in every replica.
func (c *Client) CompileReplicated(stablehlo string, replicas int, params, outs []ir.Type) (*Replicated, error) {
	if err := c.use(); err != nil {
		return nil, err
	}
	if replicas < 1 || replicas > len(c.devices) {
		return nil, fmt.Errorf("pjrt: %d replicas need as many devices, the client has %d (the XLA:CPU plugin takes cpu_device_count=%d)", replicas, len(c.devices), replicas)
	}
	ids := make([]int, replicas)
	for i := range ids {
		ids[i] = c.devices[i].ID
	}
	opts, err := marshalReplicas(ids, c.platform)
	if err != nil {
		return nil, err
	}
	h, err := c.compileOptions(stablehlo, opts)
	if err != nil {
		return nil, err
	}
	exe, err := c.newLoaded(h, params)
	if err != nil {
		return nil, err
	}
	r := &Replicated{exe: exe, replicas: replicas, outs: outs}
	if exe.NumOutputs() != len(outs) {
		exe.Close()
		return nil, fmt.Errorf("pjrt: the executable has %d results, the program %d", exe.NumOutputs(), len(outs))
	}
	return r, nil
}

// Replicas is the number of replicas the program runs as.
func (r *Replicated) Replicas() int { return r.replicas }

// Execute runs every replica at once, args[r] being replica r's arguments
// (copied to the client's device r: FromHostOn), and returns each replica's results on its
// device, for the caller to close. No argument is donated.
func (r *Replicated) Execute(args [][]*Buffer) ([][]*Buffer, error) {
	e := r.exe
	if e.h == 0 {
		return nil, errors.New("pjrt: execute of a closed executable")
	}
	if len(args) != r.replicas {
		return nil, fmt.Errorf("pjrt: arguments for %d replicas, the program runs %d", len(args), r.replicas)
	}
	outv, err := e.executeOnDevices(args, nil)
	out := make([][]*Buffer, len(outv))
	for rep, hs := range outv {
		bs, rerr := e.results(hs[:e.outputs], err, false)
		if err == nil {
			err = rerr
		}
		out[rep] = bs
	}
	if err != nil {
		for _, bs := range out {
			for _, b := range bs {
				b.Close()
			}
		}
		return nil, err
	}
	return out, nil
}

// Close releases the executable.
func (r *Replicated) Close() error { return r.exe.Close() }
