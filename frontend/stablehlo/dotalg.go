package stablehlo

import (
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// dotAlgorithm reads dot_general's algorithm, pretty (<k = v, ...>) or
// generic (#stablehlo.dot_algorithm<k = v, ...>), for operands of type d.
// One that tpucc's dot computes exactly (ir.DotAlgorithm.Refusal) is kept
// on the op, so the lowering writes it back; any other is refused by the
// field that differs, at the attribute.
func (bd *builder) dotAlgorithm(a *attr, d ir.DType) *ir.DotAlgorithm {
	body, ok := strings.CutPrefix(a.text, "#stablehlo.dot_algorithm")
	body, ok1 := strings.CutPrefix(strings.TrimSpace(body), "<")
	body, ok2 := strings.CutSuffix(strings.TrimSpace(body), ">")
	if a.kind != attrOther || !ok1 || !ok2 || (!ok && strings.HasPrefix(a.text, "#")) {
		bd.s.failf(a.pos, "unsupported dot_general algorithm %s", a.describe())
	}
	fields := map[string]string{}
	for _, kv := range strings.Split(body, ",") {
		k, v, found := strings.Cut(kv, "=")
		if !found {
			bd.s.failf(a.pos, "unsupported dot_general algorithm field %q", strings.TrimSpace(kv))
		}
		fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	alg := &ir.DotAlgorithm{}
	for _, f := range []struct {
		name string
		typ  *ir.DType
	}{{"lhs_precision_type", &alg.Lhs}, {"rhs_precision_type", &alg.Rhs}, {"accumulation_type", &alg.Acc}} {
		t, known := dtypes[fields[f.name]]
		if !known {
			bd.s.failf(a.pos, "unsupported dot_general algorithm: %s %s", f.name, fields[f.name])
		}
		*f.typ = t
	}
	for _, f := range []struct {
		name string
		n    *int64
	}{{"lhs_component_count", &alg.LhsComponents}, {"rhs_component_count", &alg.RhsComponents}, {"num_primitive_operations", &alg.Primes}} {
		n, err := strconv.ParseInt(fields[f.name], 10, 64)
		if err != nil {
			bd.s.failf(a.pos, "unsupported dot_general algorithm: %s %q", f.name, fields[f.name])
		}
		*f.n = n
	}
	switch v := fields["allow_imprecise_accumulation"]; v {
	case "true", "false":
		alg.ImpreciseAccumulation = v == "true"
	default:
		bd.s.failf(a.pos, "unsupported dot_general algorithm: allow_imprecise_accumulation %q", v)
	}
	if len(fields) != 7 {
		bd.s.failf(a.pos, "unsupported dot_general algorithm: %d fields, want the 7 StableHLO defines", len(fields))
	}
	if why := alg.Refusal(d); why != "" {
		bd.s.failf(a.pos, "unsupported dot_general algorithm: %s", why)
	}
	return alg
}
