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
// and results' shardings (Options.Mesh, Options.Shardings,
// Options.ResultShardings). They are part of the printed program, so of
// the cache key. args are the call's: a sharding names an argument among
// all of them, static ones included.
func (f *Function) shard(m *ir.Module, args []Arg) error {
	if f.opts.Mesh == nil {
		return nil
	}
	params := make([]ArgSharding, 0, len(f.opts.Shardings))
	for _, s := range f.opts.Shardings {
		at := tensorPositions(args, []int{s.Arg})
		if len(at) == 0 {
			return fmt.Errorf("%s: sharding of argument %d: not a tensor argument of this call", f.opts.Name, s.Arg)
		}
		params = append(params, ArgSharding{Arg: at[0], Dims: s.Dims})
	}
	if err := ShardModule(m, f.opts.Mesh, params, f.opts.ResultShardings); err != nil {
		return fmt.Errorf("%s: %v", f.opts.Name, err)
	}
	return nil
}

// ShardModule gives m's entry function the mesh and the shardings of its
// parameters (Arg: the parameter's position) and results (Arg: the
// result's), the others replicated, and verifies the module. On each
// dimension only the axes that divide it are kept (evenDims). It is what
// a Function with a Mesh does to each program it traces, for callers that
// trace themselves (tpucc export --mesh).
func ShardModule(m *ir.Module, mesh *ir.Mesh, params, results []ArgSharding) error {
	x := *mesh
	x.Axes = append([]ir.MeshAxis(nil), mesh.Axes...)
	m.Meshes = []*ir.Mesh{&x}
	e := m.Entry()
	e.ArgShardings = make([]*ir.Sharding, len(e.Params))
	for _, s := range params {
		if s.Arg < 0 || s.Arg >= len(e.Params) {
			return fmt.Errorf("sharding of parameter %d: the program has %d parameters", s.Arg, len(e.Params))
		}
		e.ArgShardings[s.Arg] = &ir.Sharding{Mesh: x.Name, Dims: evenDims(s.Dims, e.Params[s.Arg].Type, &x)}
	}
	e.ResultShardings = nil
	if len(results) > 0 {
		e.ResultShardings = make([]*ir.Sharding, len(e.Results))
	}
	for _, s := range results {
		if s.Arg < 0 || s.Arg >= len(e.Results) {
			return fmt.Errorf("sharding of result %d: the program has %d results", s.Arg, len(e.Results))
		}
		e.ResultShardings[s.Arg] = &ir.Sharding{Mesh: x.Name, Dims: evenDims(s.Dims, e.Results[s.Arg], &x)}
	}
	return ir.Verify(m)
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
