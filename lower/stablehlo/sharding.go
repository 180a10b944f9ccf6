package stablehlo

import (
	"sort"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// A module that declares a mesh lowers to Shardy, spelled as JAX prints it:
// an sdy.mesh per mesh, #sdy.sharding attributes on the entry's parameters
// and results, sdy.sharding_constraint, and mhlo.num_partitions set to the
// mesh's device count. GSPMD's mhlo.sharding strings are never written: in
// one module with Shardy's they turn Shardy off.

// partitions is the module's number of SPMD partitions: the device count of
// its meshes (the verifier makes them agree), 1 without a mesh.
func partitions(m *ir.Module) int64 {
	if len(m.Meshes) == 0 {
		return 1
	}
	return m.Meshes[0].Devices()
}

// meshLines writes one sdy.mesh per mesh of m.
func meshLines(b *strings.Builder, m *ir.Module) {
	for _, x := range m.Meshes {
		axes := make([]string, len(x.Axes))
		for i, a := range x.Axes {
			axes[i] = "{name = " + strconv.Quote(a.Name) + ", size = " + strconv.FormatInt(a.Size, 10) + " : i64}"
		}
		b.WriteString("  sdy.mesh @" + symbol(x.Name) + " = " + x.String() +
			" {stablehlo.mesh = {axes = [" + strings.Join(axes, ", ") + "]}}\n")
	}
}

// shardingAttr spells s as a function argument's or result's attribute.
func shardingAttr(s *ir.Sharding) string {
	return "sdy.sharding = #sdy.sharding" + shardingText(s)
}

// shardingText is <@mesh, [{"dp"}, {}]> with the mesh's symbol spelled for MLIR.
func shardingText(s *ir.Sharding) string {
	text := s.String() // <@name, [...]>
	return "<@" + symbol(s.Mesh) + text[len("<@")+len(s.Mesh):]
}

// signatureShardings returns the sharding each parameter and result of f
// is lowered with: the entry's from ir's EntryShardings (every one given,
// replicated where unannotated), another function's as written.
func signatureShardings(f *ir.Func, entry bool) (args, results []*ir.Sharding) {
	if entry {
		if args, results = f.EntryShardings(); args != nil {
			return args, results
		}
	}
	args = make([]*ir.Sharding, len(f.Params))
	results = make([]*ir.Sharding, len(f.Results))
	copy(args, f.ArgShardings)
	copy(results, f.ResultShardings)
	return args, results
}

// attrDict joins attributes into {a, b}, sorted as MLIR prints them; "" when none.
func attrDict(attrs ...string) string {
	var kept []string
	for _, a := range attrs {
		if a != "" {
			kept = append(kept, a)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	sort.Strings(kept)
	return " {" + strings.Join(kept, ", ") + "}"
}

// shardingConstraint lowers sharding_constraint to sdy.sharding_constraint.
func (e *emitter) shardingConstraint(in *ir.Instr, x hv) hv {
	s := in.Attr.(*ir.ShardingAttr).Sharding
	return e.def(x.t, "sdy.sharding_constraint ", x.ref, " ", shardingText(s), " : ", tensorType(x.t))
}
