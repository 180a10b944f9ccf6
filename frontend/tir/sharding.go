package tir

import (
	"errors"
	"strconv"

	"github.com/tpucc/tpucc/ir"
)

// replicas records the module's replica count; the verifier checks it.
func (b *moduleBuilder) replicas(ra *replicasAST) {
	if ra == nil {
		return
	}
	n, err := strconv.ParseInt(ra.Count.Value, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		b.errorf(b.pos(ra.Count.Pos), "replica count %s is out of range", ra.Count.Value)
		return
	}
	if err != nil {
		b.errorf(b.pos(ra.Count.Pos), "replica count %s is not an integer", ra.Count.Value)
		return
	}
	b.m.Replicas, b.m.ReplicasPos = n, b.pos(ra.Pos)
}

// meshes builds the module's mesh declarations; the verifier checks them.
func (b *moduleBuilder) meshes(ms []*meshAST) {
	for _, ma := range ms {
		x := &ir.Mesh{Name: ma.Name.Value[1:], Pos: b.pos(ma.Pos)}
		for _, a := range ma.Axes {
			name, ok := b.unquote(a.Name, b.pos(a.Pos))
			size, err := strconv.ParseInt(a.Size.Value, 10, 64)
			if err != nil {
				b.errorf(b.pos(a.Size.Pos), "axis size %s is not an integer", a.Size.Value)
				ok = false
			}
			if ok {
				x.Axes = append(x.Axes, ir.MeshAxis{Name: name, Size: size})
			}
		}
		b.m.Meshes = append(b.m.Meshes, x)
	}
}

func (b *moduleBuilder) unquote(s string, pos ir.Pos) (string, bool) {
	str, err := strconv.Unquote(s)
	if err != nil {
		b.errorf(pos, "malformed string %s", s)
		return "", false
	}
	return str, true
}

// sharding converts <@mesh, [{...}, ...]>; the verifier checks it against
// the mesh and the tensor.
func (b *moduleBuilder) sharding(sa *shardingAST) (*ir.Sharding, bool) {
	s := &ir.Sharding{Mesh: sa.Mesh.Value[1:], Dims: make([][]string, len(sa.Dims)), Pos: b.pos(sa.Pos)}
	ok := true
	for d, da := range sa.Dims {
		s.Dims[d] = []string{}
		for _, a := range da.Axes {
			name, aok := b.unquote(a, s.Pos)
			ok = ok && aok
			s.Dims[d] = append(s.Dims[d], name)
		}
	}
	return s, ok
}

// annotations converts the shardings written on a function's parameters or
// results: nil when none has one.
func (b *moduleBuilder) annotations(anns []*annotationAST) []*ir.Sharding {
	var out []*ir.Sharding
	for i, a := range anns {
		if a == nil {
			continue
		}
		s, ok := b.sharding(a.Sharding)
		if !ok {
			continue
		}
		if out == nil {
			out = make([]*ir.Sharding, len(anns))
		}
		out[i] = s
	}
	return out
}

func (b *moduleBuilder) signatureShardings(f *ir.Func, fa *funcAST) {
	params := make([]*annotationAST, len(fa.Params))
	for i, p := range fa.Params {
		params[i] = p.Annotation
	}
	results := make([]*annotationAST, len(fa.Results))
	for i, r := range fa.Results {
		results[i] = r.Annotation
	}
	f.ArgShardings = b.annotations(params)
	f.ResultShardings = b.annotations(results)
}
