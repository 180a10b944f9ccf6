package engine

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// ArgSharding splits one argument of a Function over Options.Mesh: Dims[d]
// lists the mesh axes that split dimension d ([]string{} or nil keeps it
// whole), as ir.Sharding does.
type ArgSharding struct {
	Arg  int // the argument's position among all arguments
	Dims [][]string
}

// shard gives the traced module m the function's mesh and its arguments'
// shardings (Options.Mesh, Options.Shardings), and verifies them. They are
// part of the printed program, so of the cache key. args are the call's.
func (f *Function) shard(m *ir.Module, args []Arg) error {
	if f.opts.Mesh == nil {
		return nil
	}
	mesh := *f.opts.Mesh
	mesh.Axes = append([]ir.MeshAxis(nil), mesh.Axes...)
	m.Meshes = []*ir.Mesh{&mesh}
	e := m.Entry()
	e.ArgShardings = make([]*ir.Sharding, len(e.Params))
	for _, s := range f.opts.Shardings {
		at := tensorPositions(args, []int{s.Arg})
		if len(at) == 0 {
			return fmt.Errorf("%s: sharding of argument %d: not a tensor argument of this call", f.opts.Name, s.Arg)
		}
		dims := make([][]string, len(s.Dims))
		for d, axes := range s.Dims {
			dims[d] = append([]string{}, axes...)
		}
		e.ArgShardings[at[0]] = &ir.Sharding{Mesh: mesh.Name, Dims: dims}
	}
	if err := ir.Verify(m); err != nil {
		return fmt.Errorf("%s: %v", f.opts.Name, err)
	}
	return nil
}
