package stablehlo

import (
	"regexp"
	"strings"
)

var (
	meshAxis    = regexp.MustCompile(`"[^"]*"\s*=\s*(\d+)`)
	meshDevices = regexp.MustCompile(`device_ids\s*=\s*\[([^\]]*)\]`)
	meshRef     = regexp.MustCompile(`^<\s*@([A-Za-z0-9_.$-]+)\s*,`)
)

// mesh reads a module's `sdy.mesh @name = <[axes], device_ids=[...]> {...}`.
// A mesh whose axes all have size 1 (none at all, as JAX writes
// @empty_mesh and @maximal_mesh_0 for a one-device program with a sharding
// constraint or a callback) holds one device: nothing is split, so it is
// recorded and its shardings mean nothing. Any other mesh is a program split
// over it, which tpucc does not read back yet.
func (s *scanner) mesh() {
	pos := s.pos()
	s.expect("sdy.mesh")
	name := s.sigil('@', "a mesh name")
	s.expect("=")
	if text := s.balanced(); !oneDevice(text) {
		s.failf(pos, "unsupported op sdy.mesh (a program split over a mesh)")
	}
	if s.peek("{") {
		s.attrDict()
	}
	s.loc()
	if s.meshes == nil {
		s.meshes = map[string]bool{}
	}
	s.meshes[name] = true
}

// oneDevice says whether a mesh's text <[...], device_ids=[...]> has only
// axes of size 1 and at most one device id.
func oneDevice(text string) bool {
	for _, m := range meshAxis.FindAllStringSubmatch(text, -1) {
		if strings.TrimLeft(m[1], "0") != "1" {
			return false
		}
	}
	if m := meshDevices.FindStringSubmatch(text); m != nil && strings.Contains(m[1], ",") {
		return false
	}
	return true
}

// prettyShardingConstraint reads `sdy.sharding_constraint %x <@mesh, [...]> : T`,
// keeping the mesh's name.
func (s *scanner) prettyShardingConstraint(o *op) {
	o.args = append(o.args, s.use())
	pos := s.pos()
	m := meshRef.FindStringSubmatch(s.balanced())
	name := ""
	if m != nil {
		name = m[1]
	}
	o.attrs["mesh"] = &attr{pos: pos, kind: attrStr, text: name}
	s.expect(":")
	o.ins, o.outs = s.opType()
}

// shardingConstraint maps sdy.sharding_constraint on a one-device mesh to
// its operand: there is nothing to split.
func (bd *builder) shardingConstraint(o *op) {
	a := o.attrs["mesh"]
	if a == nil || len(o.args) != 1 || !bd.s.meshes[a.text] {
		bd.s.failf(o.pos, "unsupported %s other than on a one-device sdy.mesh of the module", o.name)
	}
	bd.results(o, bd.args(o)...)
}
