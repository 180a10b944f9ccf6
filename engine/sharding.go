package engine

import (
	"fmt"

	"github.com/tpucc/tpucc/backend"
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
		e.ArgShardings[at[0]] = &ir.Sharding{Mesh: mesh.Name, Dims: evenDims(s.Dims, e.Params[at[0]].Type, &mesh)}
	}
	if len(f.opts.ResultShardings) > 0 {
		e.ResultShardings = make([]*ir.Sharding, len(e.Results))
	}
	for _, s := range f.opts.ResultShardings {
		if s.Arg < 0 || s.Arg >= len(e.Results) {
			return fmt.Errorf("%s: sharding of result %d: the program has %d results", f.opts.Name, s.Arg, len(e.Results))
		}
		e.ResultShardings[s.Arg] = &ir.Sharding{Mesh: mesh.Name, Dims: evenDims(s.Dims, e.Results[s.Arg], &mesh)}
	}
	if err := ir.Verify(m); err != nil {
		return fmt.Errorf("%s: %v", f.opts.Name, err)
	}
	return nil
}

// evenDims is dims for a value of type t with, on each dimension, only the
// leading axes whose sizes multiply to a divisor of it: a model's 2 KV
// heads over tp=4, or 3 rows over dp=2, stay whole on every device at the
// program's boundary. XLA pads uneven splits inside a program, but how a
// plugin lays an uneven argument or result over its devices is its own
// choice (pjrt.boundarySharding); an even one is the same everywhere.
func evenDims(dims [][]string, t ir.Type, mesh *ir.Mesh) [][]string {
	out := make([][]string, len(dims))
	for d, axes := range dims {
		out[d] = []string{}
		parts := int64(1)
		for _, a := range axes {
			i := mesh.Axis(a)
			if i < 0 || d >= t.Rank() {
				out[d] = append(out[d], a) // the verifier names it
				continue
			}
			parts *= mesh.Axes[i].Size
			if t.Shape[d].Symbolic() || t.Shape[d].Size%parts != 0 {
				break
			}
			out[d] = append(out[d], a)
		}
	}
	return out
}

// UploadArg is Upload for the function's argument i: when the function is
// split over a mesh and its backend can split buffers
// (backend.ShardUploader), b is split as argument i is (Options.Shardings;
// replicated when it is not named), each device receiving only its piece,
// so that calls use it where it lies. A model's weights split at load.
func (f *Function) UploadArg(i int, b *backend.Buffer) (*backend.Buffer, error) {
	mesh := f.opts.Mesh
	u, ok := f.opts.backend.(backend.ShardUploader)
	if mesh == nil || mesh.Devices() < 2 || !ok {
		return f.Upload(b)
	}
	s := ir.Replicated(mesh.Name, b.Type().Rank())
	for _, a := range f.opts.Shardings {
		if a.Arg == i && len(a.Dims) == b.Type().Rank() {
			s = &ir.Sharding{Mesh: mesh.Name, Dims: evenDims(a.Dims, b.Type(), mesh)}
		} else if a.Arg == i {
			s.Dims = a.Dims
		}
	}
	if len(s.Dims) != b.Type().Rank() {
		return nil, fmt.Errorf("%s: sharding of argument %d has %d dimensions, the buffer is %s", f.opts.Name, i, len(s.Dims), b.Type())
	}
	return u.UploadSharded(b, mesh, s)
}
