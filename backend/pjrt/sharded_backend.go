package pjrt

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// programMesh is the mesh p runs on: its module's first mesh when that has
// several devices, nil for a one-device program.
func programMesh(p *backend.Program) *ir.Mesh {
	if p.Module == nil || len(p.Module.Meshes) == 0 || p.Module.Meshes[0].Devices() < 2 {
		return nil
	}
	return p.Module.Meshes[0]
}

// shardedExecutable runs a program compiled for a mesh through the
// backend.Executable interface: host arguments are split over the devices,
// results are gathered, or kept on the devices as ShardedBuffers
// (RunOptions.KeepOnDevice) that a later call takes as they are.
type shardedExecutable struct {
	s *Sharded
	c *Client
}

func (b *Backend) compileSharded(p *backend.Program, mesh *ir.Mesh, params, results []ir.Type) (backend.Executable, error) {
	args, res := p.Entry.EntryShardings()
	c, err := b.forMesh(mesh)
	if err != nil {
		return nil, err
	}
	s, err := c.CompileSharded(p.HLO, mesh, params, results, args, res)
	if err != nil {
		return nil, err
	}
	b.compiles.Add(1)
	return &shardedExecutable{s: s, c: c}, nil
}

func (e *shardedExecutable) Run(args []*backend.Buffer) ([]*backend.Buffer, error) {
	return e.RunWith(args, backend.RunOptions{})
}

// RunWith runs on every device of the mesh. The arguments in o.Donate, and
// the pieces split here for the call, may be consumed by the program (a
// parameter its StableHLO marks as a donor lends its pieces to a result);
// any other argument of the caller's is left intact.
func (e *shardedExecutable) RunWith(args []*backend.Buffer, o backend.RunOptions) ([]*backend.Buffer, error) {
	if o.Into != nil {
		return nil, errors.New("pjrt: a program over a mesh does not write its results into storage the caller gives (RunOptions.Into): its results are pieces on several devices")
	}
	in := make([]*ShardedBuffer, len(args))
	var owned []*ShardedBuffer
	donate := slices.Clip(o.Donate)
	defer func() {
		for _, b := range owned {
			b.Close()
		}
	}()
	for i, a := range args {
		if a == nil {
			return nil, fmt.Errorf("pjrt: argument %d is nil", i)
		}
		want := e.s.ArgSharding(i)
		if d, ok := a.Device().(*ShardedBuffer); ok && d.Sharding.Equal(want) && len(d.Shards) > 0 && d.Shards[0].c == e.c {
			in[i] = d
			continue
		}
		if why := a.Donated(); why != "" {
			return nil, fmt.Errorf("pjrt: argument %d: %s %s", i, a.Type(), why)
		}
		var b *ShardedBuffer
		var err error
		if src, ok := a.Device().(backend.BoxReader); ok {
			b, err = e.c.FromBoxesSharded(a.Type(), src, e.s.mesh, want)
		} else {
			b, err = e.c.FromHostSharded(a.Type(), a.Bytes(), e.s.mesh, want)
		}
		if err != nil {
			return nil, fmt.Errorf("pjrt: argument %d: %w", i, err)
		}
		owned = append(owned, b)
		in[i] = b
		if !slices.Contains(donate, i) {
			donate = append(donate, i) // our own pieces, never the caller's
		}
	}
	outs, err := e.s.ExecuteDonating(in, donate)
	if err != nil {
		return nil, err
	}
	res := make([]*backend.Buffer, len(outs))
	for i, b := range outs {
		if err == nil && o.KeepOnDevice {
			res[i] = backend.OnDevice(b.Type, b)
			continue
		}
		if err == nil {
			var data []byte
			if data, err = b.ToHost(); err == nil {
				res[i], err = backend.View(b.Type, data)
			}
		}
		b.Close()
	}
	if err != nil {
		closeOnDevice(res)
		return nil, err
	}
	return res, nil
}
