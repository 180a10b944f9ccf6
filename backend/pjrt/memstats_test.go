package pjrt

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
)

// shardedMatmul contracts over the dimension both operands split over tp,
// so each chip holds a quarter of each and the result, reduce-scattered,
// a quarter of it too.
const shardedMatmul = `mesh @mesh = <["tp"=4]>

func @f(%x: f32[512,256] {sharding=<@mesh, [{}, {"tp"}]>}, %w: f32[256,512] {sharding=<@mesh, [{"tp"}, {}]>}) -> f32[512,512] {sharding=<@mesh, [{"tp"}, {}]>} {
  %y = matmul %x, %w : f32[512,512]
  return %y
}
`

const unshardedMatmul = `func @f(%x: f32[512,256], %w: f32[256,512]) -> f32[512,512] {
  %y = matmul %x, %w : f32[512,512]
  return %y
}
`

func lowerTIR(t *testing.T, src string) (string, *ir.Module) {
	t.Helper()
	m, err := tir.Parse("in.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	text, err := stablehlo.Lower(m, stablehlo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return text, m
}

// The same matmul compiled for the four chips of v6e:2x2 and for one: each
// chip of the split program holds a quarter of the arguments (2 x 512 KiB
// / 4 = 256 KiB) and of the result (1 MiB / 4), which the memory
// statistics from libtpu's compiled executable show exactly.
func TestTopologyCompileShardedMemory(t *testing.T) {
	p := tpuPlugin(t)
	topo, err := p.Topology("v6e:2x2")
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	text, m := lowerTIR(t, shardedMatmul)
	exe, ids, err := topo.CompileSharded(text, m.Meshes[0])
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	if len(ids) != 4 {
		t.Errorf("device assignment %v, want 4 devices", ids)
	}
	split, err := exe.MemoryStats()
	if err != nil {
		t.Fatal(err)
	}
	one, _ := lowerTIR(t, unshardedMatmul)
	wexe, err := topo.Compile(one, DefaultCompileOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer wexe.Close()
	whole, err := wexe.MemoryStats()
	if err != nil {
		t.Fatal(err)
	}
	// Generated code depends on libtpu's build, so only its presence is
	// checked; the data sizes follow from the shapes alone. Neither needs
	// scratch memory: the partial products are reduce-scattered in place.
	split.GeneratedCode, whole.GeneratedCode = min(split.GeneratedCode, 1), min(whole.GeneratedCode, 1)
	if want := (MemoryStats{GeneratedCode: 1, Arguments: 262144, Outputs: 262144}); split != want {
		t.Errorf("per chip of v6e:2x2: %+v, want %+v", split, want)
	}
	if want := (MemoryStats{GeneratedCode: 1, Arguments: 1048576, Outputs: 1048576}); whole != want {
		t.Errorf("on one chip: %+v, want %+v", whole, want)
	}
}

// A mesh of two devices on the four chips of v6e:2x2 is refused, naming both.
func TestTopologyCompileShardedMeshMismatch(t *testing.T) {
	p := tpuPlugin(t)
	topo, err := p.Topology("v6e:2x2")
	if err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	text, m := lowerTIR(t, strings.Replace(shardedMatmul, `"tp"=4`, `"tp"=2`, 1))
	_, _, err = topo.CompileSharded(text, m.Meshes[0])
	want := "mesh @mesh has 2 devices and topology v6e:2x2 has 4 chips: they must be equal"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}
