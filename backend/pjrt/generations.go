package pjrt

import (
	"fmt"
	"slices"
	"strings"
)

// TPUGeneration is how libtpu names a TPU generation tpucc targets.
type TPUGeneration struct {
	Target     string   // tpucc's target: tpu-v6e
	Prefix     string   // libtpu's topology prefix: v6e (v6e:2x2)
	DeviceKind string   // the kind libtpu gives its devices: TPU v6 lite
	Shapes     []string // the slice shapes an executable may be compiled for
}

// Slice shapes: the published ones of each generation (2D for v5e and v6e,
// whose chips sit in a 2D torus, 3D for the others) that libtpu 0.0.42.1
// compiles for. It refuses 1x1, which its default host bounds (2x2) do not
// divide, so a single chip is compiled for as part of 2x2.
var (
	shapes2D = []string{"2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"}
	shapes3D = []string{"2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16", "16x16x16"}
)

// TPUGenerations are the generations with their libtpu names, checked
// against libtpu 0.0.42.1 (TestTPUGenerations). TPU7x's topologies are
// tpu7x:..., not v7x:....
var TPUGenerations = []TPUGeneration{
	{"tpu-v4", "v4", "TPU v4", shapes3D},
	{"tpu-v5e", "v5e", "TPU v5 lite", shapes2D},
	{"tpu-v5p", "v5p", "TPU v5", shapes3D},
	{"tpu-v6e", "v6e", "TPU v6 lite", shapes2D},
	{"tpu-v7x", "tpu7x", "TPU7x", shapes3D},
}

// Generation is the generation of target (tpu-v6e).
func Generation(target string) (TPUGeneration, bool) {
	i := slices.IndexFunc(TPUGenerations, func(g TPUGeneration) bool { return g.Target == target })
	if i < 0 {
		return TPUGeneration{}, false
	}
	return TPUGenerations[i], true
}

// Topologies lists the topologies of g, as --topology takes them.
func (g TPUGeneration) Topologies() []string {
	out := make([]string, len(g.Shapes))
	for i, s := range g.Shapes {
		out[i] = g.Prefix + ":" + s
	}
	return out
}

// CheckTopology refuses a topology that is not one of g's.
func (g TPUGeneration) CheckTopology(topology string) error {
	if slices.Contains(g.Topologies(), topology) {
		return nil
	}
	if p, _, _ := strings.Cut(topology, ":"); p != g.Prefix {
		return fmt.Errorf("%s is not a %s topology (want %s:...)", topology, g.Target, g.Prefix)
	}
	return fmt.Errorf("%s is not a %s topology; want one of %s", topology, g.Target, strings.Join(g.Topologies(), ", "))
}
