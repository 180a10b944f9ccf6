package tensor

import (
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// MeshName is the name of the device mesh a compiled function runs on
// (compile.Mesh), which ShardAs refers to.
const MeshName = "mesh"

// ShardAs is t laid out over the mesh's devices as dims says, as JAX's
// with_sharding_constraint does: one string per dimension naming the mesh
// axes that split it, comma-separated and major first ("dp", "dp,tp"), or
// "" to keep the dimension whole. XLA's partitioner then splits the
// computation around it that way rather than as it would choose. The values
// are t's: run eagerly (one host holds every piece) it is the identity. A
// traced ShardAs needs the function compiled with a mesh (compile.Mesh)
// that has the axes.
func (t *Tensor) ShardAs(dims ...string) *Tensor {
	check("shard_as", t)
	ty := t.Type()
	if t.tr != nil && !t.tr.HasMesh(MeshName) {
		fail("shard_as", []ir.Type{ty}, "the function runs on no mesh: compile it with compile.Mesh")
	}
	s := &ir.Sharding{Mesh: MeshName, Dims: make([][]string, len(dims))}
	for d, spec := range dims {
		s.Dims[d] = []string{}
		if spec == "" {
			continue
		}
		for _, a := range strings.Split(spec, ",") {
			if a == "" {
				fail("shard_as", []ir.Type{ty}, "dimension %d: an empty axis name in %q", d, spec)
			}
			s.Dims[d] = append(s.Dims[d], a)
		}
	}
	if len(dims) != ty.Rank() {
		word := "dimensions"
		if len(dims) == 1 {
			word = "dimension"
		}
		fail("shard_as", []ir.Type{ty}, "sharding %s has %d %s, but %s has rank %d", s, len(dims), word, ty, ty.Rank())
	}
	return apply1("shard_as", ir.OpShardingConstraint, &ir.ShardingAttr{Sharding: s}, nil, t)
}
