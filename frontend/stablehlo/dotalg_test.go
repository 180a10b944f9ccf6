package stablehlo

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	lower "github.com/tpucc/tpucc/lower/stablehlo"
)

// TestDotAlgorithm: a dot_general algorithm tpucc's dot computes exactly
// is read, pretty or generic, and lowered back as it was written (the
// golden dot_algorithm's StableHLO imports and lowers to the same text);
// any other is refused by the field that differs, at the attribute.
func TestDotAlgorithm(t *testing.T) {
	a, err := txtar.ParseFile(filepath.Join("..", "..", "testdata", "golden", "lower", "dot_algorithm.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	hlo := section(a, "out.hlo")
	for _, src := range []string{hlo, strings.ReplaceAll(hlo, "algorithm = <", "algorithm = #stablehlo.dot_algorithm<")} {
		m, err := Parse("alg.mlir", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		back, err := lower.Lower(m, lower.Options{ModuleName: moduleName(hlo)})
		if err != nil || back != hlo {
			t.Errorf("lowering the import gives %v\n%s\nwant\n%s", err, back, hlo)
		}
	}
	alg := func(lhs, rhs, acc string, comps, prims int) string {
		return "algorithm = <lhs_precision_type = " + lhs + ", rhs_precision_type = " + rhs + ", accumulation_type = " + acc +
			", lhs_component_count = " + itoa(comps) + ", rhs_component_count = " + itoa(comps) +
			", num_primitive_operations = " + itoa(prims) + ", allow_imprecise_accumulation = false>"
	}
	for _, c := range []struct{ typ, alg, want string }{
		{"f32", alg("tf32", "tf32", "f32", 1, 1), "alg.mlir:2:80: error: unsupported dot_general algorithm: lhs_precision_type tf32"},
		{"f32", alg("bf16", "bf16", "f32", 3, 6), "alg.mlir:2:80: error: unsupported dot_general algorithm: lhs_precision_type bf16 on f32 operands"},
		{"f32", alg("f32", "f32", "f16", 1, 1), "alg.mlir:2:80: error: unsupported dot_general algorithm: accumulation_type f16 for f32 operands (tpucc's accumulates in f32)"},
		{"bf16", alg("bf16", "bf16", "f32", 3, 1), "alg.mlir:2:80: error: unsupported dot_general algorithm: lhs_component_count 3"},
		{"f32", alg("f32", "f32", "f32", 1, 3), "alg.mlir:2:80: error: unsupported dot_general algorithm: num_primitive_operations 3"},
		{"i32", alg("f32", "f32", "f32", 1, 1), "alg.mlir:2:80: error: unsupported dot_general algorithm: an algorithm on i32 operands (tpucc's dot has one for f32, f16, bf16 and f64)"},
	} {
		src := "func.func @main(%a: tensor<2x2x" + c.typ + ">) -> tensor<2x2x" + c.typ + "> {\n" +
			"  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0], " + c.alg + " : (tensor<2x2x" + c.typ +
			">, tensor<2x2x" + c.typ + ">) -> tensor<2x2x" + c.typ + ">\n  return %0 : tensor<2x2x" + c.typ + ">\n}\n"
		if _, err := Parse("alg.mlir", []byte(src)); err == nil || err.Error() != c.want {
			t.Errorf("%s %s: got %v, want %s", c.typ, c.alg, err, c.want)
		}
	}
}
