package models

import (
	"math"
	"slices"
	"testing"

	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/ir"
)

// TestParseMesh: --mesh's spelling, and the exact error of each bad one.
func TestParseMesh(t *testing.T) {
	m, err := ParseMesh("dp=2,tp=2")
	if err != nil || m.String() != `<["dp"=2, "tp"=2]>` || meshString(m) != "dp=2,tp=2" {
		t.Fatalf("ParseMesh(dp=2,tp=2) = %v, %v", m, err)
	}
	for spec, want := range map[string]string{
		"tp":        `mesh "tp": want axis=size pairs such as tp=4 or dp=2,tp=2`,
		"tp=0":      `mesh "tp=0": want axis=size pairs such as tp=4 or dp=2,tp=2`,
		"ep=2":      `mesh "ep=2": axis "ep": a model splits over dp (batch) and tp (weights) only`,
		"tp=2,tp=2": `mesh "tp=2,tp=2": axis tp given twice`,
		"tp=99999":  `mesh "tp=99999": axis tp of 99999 devices`,
	} {
		if _, err := ParseMesh(spec); err == nil || err.Error() != want {
			t.Errorf("ParseMesh(%q) = %v, want %s", spec, err, want)
		}
	}
}

// TestGeneratorSplit: a model split over 4 XLA:CPU devices (tensor
// parallel, and 2×2 data and tensor parallel; decode as one loop and step
// by step; the layers as loops over stacks and, as on XLA:CPU by default,
// unrolled) gives the tokens of the unsplit model on the host and its first logits within 1e-5 of the
// largest; each weight with a Megatron rule is held as four pieces, each
// device's a quarter (the tiny model's one KV head, 8 rows of k, is padded
// to 2 rows a device), and the cache stays split between steps.
func TestGeneratorSplit(t *testing.T) {
	m := randomModel(t, tinyQwen3Config, 0.5)
	host, err := NewGenerator(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Prompts: [][]int32{{3, 1, 4, 1, 5}, {9, 2, 6}}, MaxNew: 6}
	want, err := host.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ spec, decode, layers string }{
		{"tp=4", DecodeLoop, LayersLoop}, {"dp=2,tp=2", DecodeLoop, LayersLoop}, {"tp=4", DecodeSteps, LayersLoop}, {"tp=4", DecodeLoop, LayersAuto},
	} {
		spec := c.spec
		mesh, err := ParseMesh(spec)
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewGenerator(m, Options{Device: "pjrt", Precision: "highest", Mesh: mesh, Decode: c.decode, Layers: c.layers})
		if err != nil {
			t.Fatal(err)
		}
		if unrolled := len(g.m.Loops()) == 0; unrolled != (c.layers == LayersAuto) {
			t.Errorf("%s, layers %q: the steps run loops %v", spec, c.layers, g.m.Loops())
		}
		checkSplitWeights(t, spec, g.m, g)
		got, err := g.Generate(req)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if !slices.EqualFunc(got.Tokens, want.Tokens, slices.Equal) {
			t.Errorf("%s, decode %s: tokens %v, unsplit %v", spec, c.decode, got.Tokens, want.Tokens)
		}
		if d, s := maxDiff(got.FirstLogits.Float32s(), want.FirstLogits.Float32s()); d > 1e-5*s {
			t.Errorf("%s: first logits differ by %g (largest %g)", spec, d, s)
		}
	}
	if _, err := NewGenerator(m, Options{Mesh: mustMesh(t, "tp=2")}); err == nil ||
		err.Error() != "models: a mesh (tp=2) splits a model over a device's chips: name the device (Options.Device)" {
		t.Errorf("a mesh without a device: %v", err)
	}
}

func mustMesh(t *testing.T, spec string) *ir.Mesh {
	m, err := ParseMesh(spec)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkSplitWeights: the q projection (16 rows of each layer) is in four
// pieces of 4 rows over tp=4 and two of 8 over dp=2,tp=2; a norm is whole
// on each device.
func checkSplitWeights(t *testing.T, spec string, m *Model, g *Generator) {
	t.Helper()
	tp := map[string]int64{"tp=4": 4, "dp=2,tp=2": 2}[spec]
	for i, p := range m.Params {
		sb, ok := g.weights[i].Device().(*pjrt.ShardedBuffer)
		if !ok {
			t.Fatalf("%s: weight %s is not split over the devices (%T)", spec, p.Name, g.weights[i].Device())
		}
		if len(sb.Shards) != 4 {
			t.Errorf("%s: weight %s in %d pieces, want 4", spec, p.Name, len(sb.Shards))
		}
		piece := sb.Shards[0].Type()
		r := piece.Rank()
		switch fieldName(p.Name) {
		case "Q": // [layers,] out, in: the out rows split
			if rows, want := piece.Shape[r-2].Size, p.Type.Shape[r-2].Size/tp; rows != want {
				t.Errorf("%s: a device holds %d rows of %s %s, want %d", spec, rows, p.Name, p.Type, want)
			}
		case "AttnNorm":
			if !piece.Equal(p.Type) {
				t.Errorf("%s: a device holds %s of %s %s, want all", spec, piece, p.Name, p.Type)
			}
		}
	}
}

// maxDiff is the largest |a−b| and the largest |b|.
func maxDiff(a, b []float32) (diff, scale float64) {
	for i := range b {
		scale = math.Max(scale, math.Abs(float64(b[i])))
		diff = math.Max(diff, math.Abs(float64(a[i]-b[i])))
	}
	return diff, scale
}
