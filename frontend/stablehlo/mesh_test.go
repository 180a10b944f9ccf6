package stablehlo

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// meshProgram is a module with mesh MESH and a sharding constraint on @m.
const meshProgram = `module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @m = MESH {stablehlo.mesh = {axes = []}}
  func.func public @main(%arg0: tensor<2x3xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}]>}) -> tensor<2x3xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<2x3xf32>
    %1 = sdy.sharding_constraint %0 <@REF, [{}, {}]> : tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
}
`

// TestOneDeviceMesh: the meshes JAX writes for a one-device program (no
// axes, device_ids=[0], axes of size 1) are read, a sharding constraint on
// one is its operand; a mesh of several devices, and a constraint on a mesh
// the module does not define, are refused at their position.
func TestOneDeviceMesh(t *testing.T) {
	const want = "func @main(%arg0: f32[2,3]) -> f32[2,3] {\n  %0 = tanh %arg0 : f32[2,3]\n  return %0\n}\n"
	for _, mesh := range []string{"<[]>", "<[], device_ids=[0]>", `<["x"=1, "y"=1]>`} {
		src := strings.NewReplacer("MESH", mesh, "REF", "m").Replace(meshProgram)
		m, err := Parse("m.mlir", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", mesh, err)
		}
		if got := ir.Print(m); got != want {
			t.Errorf("%s: got\n%s\nwant\n%s", mesh, got, want)
		}
	}
	for _, c := range []struct{ mesh, ref, want string }{
		{`<["x"=2]>`, "m", "m.mlir:2:3: error: unsupported op sdy.mesh (a program split over a mesh)"},
		{"<[], device_ids=[0, 1]>", "m", "m.mlir:2:3: error: unsupported op sdy.mesh (a program split over a mesh)"},
		{"<[]>", "other", "m.mlir:5:10: error: unsupported sdy.sharding_constraint other than on a one-device sdy.mesh of the module"},
	} {
		src := strings.NewReplacer("MESH", c.mesh, "REF", c.ref).Replace(meshProgram)
		if _, err := Parse("m.mlir", []byte(src)); err == nil || err.Error() != c.want {
			t.Errorf("%s @%s: got %v, want %s", c.mesh, c.ref, err, c.want)
		}
	}
}
