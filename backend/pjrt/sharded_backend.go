package pjrt

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

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
	s  *Sharded
	c  *Client
	id string // NativeCode's ID, without the executable's hash

	once   sync.Once
	code   backend.NativeCode
	codeOK bool
}

// compileSharded compiles p for mesh, or loads code (persisted by an
// earlier process) when its ID names p's StableHLO, this backend and the
// devices the mesh's partitions run on.
func (b *Backend) compileSharded(p *backend.Program, mesh *ir.Mesh, params, results []ir.Type, code *backend.NativeCode) (backend.Executable, error) {
	args, res := p.Entry.EntryShardings()
	c, err := b.forMesh(mesh)
	if err != nil {
		return nil, err
	}
	id := b.shardedCodeID(p.HLO, c, mesh)
	if code != nil && code.ID == fmt.Sprintf("%s sha256:%s %s", codePrefix, SHA256(code.Data), id) {
		if s, err := c.LoadSharded(code.Data, mesh, params, results, args, res); err == nil {
			b.loads.Add(1)
			return &shardedExecutable{s: s, c: c, id: id}, nil
		}
	}
	s, err := c.CompileSharded(p.HLO, mesh, params, results, args, res)
	if err != nil {
		return nil, err
	}
	b.compiles.Add(1)
	return &shardedExecutable{s: s, c: c, id: id}, nil
}

// shardedCodeID is codeID for a program over mesh on client c: the device
// assignment is compiled into the executable, so it is part of the ID.
func (b *Backend) shardedCodeID(hlo string, c *Client, mesh *ir.Mesh) string {
	ids := make([]string, mesh.Devices())
	for i := range ids {
		ids[i] = strconv.Itoa(c.devices[i].ID)
	}
	return b.codeID(hlo) + " devices:" + strings.Join(ids, ",")
}

// NativeCode serializes the executable (once) for the persistent cache.
func (e *shardedExecutable) NativeCode() (backend.NativeCode, bool) {
	e.once.Do(func() {
		data, err := e.s.Serialize()
		if err != nil || len(data) == 0 || e.id == "" {
			return
		}
		e.code = backend.NativeCode{ID: codePrefix + " sha256:" + SHA256(data) + " " + e.id, Data: data}
		e.codeOK = true
	})
	return e.code, e.codeOK
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
