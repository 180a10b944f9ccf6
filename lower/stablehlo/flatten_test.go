package stablehlo

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/target"
)

// TestFlattenFusions: fusions lower as their bodies' plain ops, so a fused
// program whose fused instructions were adjacent lowers to exactly the
// StableHLO of the unfused one (XLA forms its own fusions).
func TestFlattenFusions(t *testing.T) {
	mlp, err := os.ReadFile(filepath.Join("..", "..", "examples", "mlp.tir"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"mlp": string(mlp),
		"chain": `func @f(%x: f32[8,16], %b: f32[16]) -> f32[8] {
  %bb = broadcast %b {dims=[1]} : f32[8,16]
  %a = add %x, %bb
  %e = exp %a
  %s = reduce_sum %e {axes=[1]}
  return %s
}
`,
		"siblings": `func @f(%x: f32[32,64]) -> (f32[32], f32[32]) {
  %s = reduce_sum %x {axes=[1]}
  %m = reduce_max %x {axes=[1]}
  return %s, %m
}
`,
		"epilogue": `func @f(%x: bf16[16,32], %w: bf16[32,64], %r: bf16[16,64]) -> bf16[16,64] {
  %h = matmul %x, %w : bf16[16,64]
  %g = gelu %h
  %o = add %g, %r
  return %o
}
`,
	}
	for name, src := range cases {
		fused, fusions := lowerWith(t, src, nil)
		unfused, _ := lowerWith(t, src, []string{"fuse"})
		if fusions == 0 {
			t.Errorf("%s: nothing fused", name)
		}
		if fused != unfused {
			t.Errorf("%s: fused lowering differs:\n%s\nunfused:\n%s", name, fused, unfused)
		}
		if strings.Contains(fused, "fusion") {
			t.Errorf("%s: the lowering mentions fusion:\n%s", name, fused)
		}
	}
}

func lowerWith(t *testing.T, src string, disable []string) (string, int) {
	t.Helper()
	m, err := tir.Parse("in.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	opts := passes.Options{VerifyEach: true, Eval: cpu.Folder{}, Disable: disable, Target: target.V6e}
	if err := passes.Run(m, passes.Default(), opts); err != nil {
		t.Fatal(err)
	}
	n := 0
	m.Entry().Body.Walk(func(in *ir.Instr) {
		if in.Op == ir.OpFusion {
			n++
		}
	})
	hlo, err := Lower(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return hlo, n
}

// TestFlattenExamples: on the examples, where fusion moves some producers next
// to their consumers, the fused lowering has the same operations as the
// unfused one (compared with SSA numbers erased, as sorted distinct lines:
// a broadcast cloned into two fusions appears twice, which XLA's CSE
// undoes), and the
// mlp, whose fused instructions are adjacent, lowers identically.
func TestFlattenExamples(t *testing.T) {
	for _, name := range []string{"mlp", "moe_dense", "transformer_block"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "examples", name+".tir"))
		if err != nil {
			t.Fatal(err)
		}
		fused, fusions := lowerWith(t, string(src), nil)
		unfused, _ := lowerWith(t, string(src), []string{"fuse"})
		if fusions == 0 {
			t.Errorf("%s: nothing fused", name)
		}
		if a, b := opLines(fused), opLines(unfused); a != b {
			t.Errorf("%s: the fused lowering has other operations:\n%s\nunfused:\n%s", name, a, b)
		}
		if name == "mlp" && fused != unfused {
			t.Errorf("mlp: the fused lowering differs")
		}
	}
}

var ssaNumber = regexp.MustCompile(`%[0-9]+`)

func opLines(hlo string) string {
	lines := strings.Split(ssaNumber.ReplaceAllString(hlo, "%N"), "\n")
	sort.Strings(lines)
	return strings.Join(slices.Compact(lines), "\n")
}
