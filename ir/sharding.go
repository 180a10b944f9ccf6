package ir

import (
	"strconv"
	"strings"
)

// Mesh is a named grid of devices: each axis has a name and a size, and the
// devices are numbered row-major over the axes (the last axis varies
// fastest), as in Shardy's sdy.mesh and a JAX Mesh over reshaped devices.
type Mesh struct {
	Name string
	Axes []MeshAxis
	Pos  Pos
}

// MeshAxis is one axis of a mesh.
type MeshAxis struct {
	Name string
	Size int64
}

// Devices is the number of devices of the mesh: the product of its axis sizes.
func (m *Mesh) Devices() int64 {
	n := int64(1)
	for _, a := range m.Axes {
		n *= a.Size
	}
	return n
}

// Axis returns the index of the axis named name, or -1.
func (m *Mesh) Axis(name string) int {
	for i, a := range m.Axes {
		if a.Name == name {
			return i
		}
	}
	return -1
}

// String is the mesh's .tir spelling without its name: <["dp"=2, "tp"=2]>,
// which is also Shardy's.
func (m *Mesh) String() string {
	var b strings.Builder
	b.WriteString("<[")
	for i, a := range m.Axes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(a.Name))
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(a.Size, 10))
	}
	b.WriteString("]>")
	return b.String()
}

// Sharding says how a tensor is split over a mesh: Dims[d] lists the mesh
// axes that split dimension d, major to minor; an empty list leaves the
// dimension whole. A tensor is replicated over every axis it does not name.
// Splits need not be even: the last shards are padded, as XLA does.
type Sharding struct {
	Mesh string
	Dims [][]string
	Pos  Pos
}

// Replicated returns the sharding of a rank-r tensor held whole by every
// device of mesh.
func Replicated(mesh string, rank int) *Sharding {
	return &Sharding{Mesh: mesh, Dims: make([][]string, rank)}
}

// String is the sharding's .tir spelling, <@mesh, [{"dp"}, {}]>, which is
// also Shardy's #sdy.sharding without its prefix.
func (s *Sharding) String() string {
	var b strings.Builder
	b.WriteString("<@")
	b.WriteString(s.Mesh)
	b.WriteString(", [")
	for i, axes := range s.Dims {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('{')
		for j, a := range axes {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(a))
		}
		b.WriteByte('}')
	}
	b.WriteString("]>")
	return b.String()
}

// Equal reports whether s and t split the same dimensions by the same axes
// of the same mesh (positions aside). Two nil shardings are equal.
func (s *Sharding) Equal(t *Sharding) bool {
	if s == nil || t == nil {
		return s == t
	}
	if s.Mesh != t.Mesh || len(s.Dims) != len(t.Dims) {
		return false
	}
	for i := range s.Dims {
		if len(s.Dims[i]) != len(t.Dims[i]) {
			return false
		}
		for j := range s.Dims[i] {
			if s.Dims[i][j] != t.Dims[i][j] {
				return false
			}
		}
	}
	return true
}

// Parts returns, for each dimension, into how many pieces the mesh m splits
// it: the product of the sizes of its axes.
func (s *Sharding) Parts(m *Mesh) []int64 {
	out := make([]int64, len(s.Dims))
	for d, axes := range s.Dims {
		out[d] = 1
		for _, a := range axes {
			if i := m.Axis(a); i >= 0 {
				out[d] *= m.Axes[i].Size
			}
		}
	}
	return out
}

// ShardingAttr: sharding_constraint {sharding=<@mesh, [...]>}.
type ShardingAttr struct{ Sharding *Sharding }

func (a *ShardingAttr) Fields() []AttrField {
	return []AttrField{{Name: "sharding", Value: AttrValue{Kind: AttrSharding, Sharding: a.Sharding}}}
}

func (r *attrReader) sharding(name string) *Sharding {
	f, ok := r.get(name, true)
	if !ok {
		return nil
	}
	if f.Value.Kind != AttrSharding {
		r.errorf(f.Pos, "attribute '%s' of %s must be a sharding <@mesh, [{...}, ...]>, got %s", name, r.op, f.Value)
		return nil
	}
	return f.Value.Sharding
}

// Mesh returns the module's mesh named name, or nil.
func (m *Module) Mesh(name string) *Mesh {
	for _, x := range m.Meshes {
		if x.Name == name {
			return x
		}
	}
	return nil
}

// EntryShardings returns the sharding of each parameter and result of f as
// an entry function runs with them: as written, and replicated over the
// module's first mesh where unannotated, so that how the program's inputs
// and outputs are laid out over the devices never depends on what the
// partitioner chooses. Both are nil when the module has no mesh.
func (f *Func) EntryShardings() (args, results []*Sharding) {
	if f.Module == nil || len(f.Module.Meshes) == 0 {
		return nil, nil
	}
	mesh := f.Module.Meshes[0].Name
	args = make([]*Sharding, len(f.Params))
	results = make([]*Sharding, len(f.Results))
	copy(args, f.ArgShardings)
	copy(results, f.ResultShardings)
	for i, p := range f.Params {
		if args[i] == nil {
			args[i] = Replicated(mesh, p.Type.Rank())
		}
	}
	for i, t := range f.Results {
		if results[i] == nil {
			results[i] = Replicated(mesh, t.Rank())
		}
	}
	return args, results
}
