package models

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/safetensors"
)

// savedModel writes a random tiny Qwen3 (tinyQwen3Config) as a checkpoint
// directory and loads it back: its layers are views of the memory-mapped
// file and its stacked weights are layerStacks over them.
func savedModel(t *testing.T) *Model {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	var src []safetensors.Named
	add := func(name string, shape ...int64) {
		b := backend.New(ir.Tensor(ir.F32, shape...))
		for i := range b.Len() {
			b.SetFloat64(i, rng.Float64()-0.5)
		}
		src = append(src, safetensors.Named{Name: name, Buf: b})
	}
	add("model.embed_tokens.weight", 64, 16)
	add("model.norm.weight", 16)
	for l := range 2 {
		p := fmt.Sprintf("model.layers.%d.", l)
		add(p+"input_layernorm.weight", 16)
		add(p+"post_attention_layernorm.weight", 16)
		add(p+"self_attn.q_proj.weight", 16, 16)
		add(p+"self_attn.k_proj.weight", 8, 16)
		add(p+"self_attn.v_proj.weight", 8, 16)
		add(p+"self_attn.o_proj.weight", 16, 16)
		add(p+"self_attn.q_norm.weight", 8)
		add(p+"self_attn.k_norm.weight", 8)
		add(p+"mlp.gate_proj.weight", 24, 16)
		add(p+"mlp.up_proj.weight", 24, 16)
		add(p+"mlp.down_proj.weight", 16, 24)
	}
	dir := t.TempDir()
	if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), src, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(tinyQwen3Config), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// layerFields are the buffers of every layer's weights in m.Weights, in
// order: a stack made in host memory points its layers' fields at its rows.
func layerFields(m *Model) []*backend.Buffer {
	var out []*backend.Buffer
	for i := range m.Weights.Layers {
		v := reflect.ValueOf(&m.Weights.Layers[i]).Elem()
		for j := range v.NumField() {
			if b, ok := v.Field(j).Interface().(*backend.Buffer); ok {
				out = append(out, b)
			}
		}
	}
	return out
}

// stackRows are the layers' buffers that stacked weight p's rows are.
func stackRows(m *Model, p Param) []*backend.Buffer {
	n, field, _ := strings.Cut(strings.TrimPrefix(p.Name, "layers."), ".")
	at := m.slots[n]
	g := m.groups[at[0]]
	var out []*backend.Buffer
	for it := range g.count {
		l := reflect.ValueOf(&m.Weights.Layers[g.layer(at[1], it)]).Elem()
		out = append(out, l.FieldByName(field).Interface().(*backend.Buffer))
	}
	return out
}

// TestSplitLoadReadsLayers: a loaded model split tp=4 over XLA:CPU devices
// reads each device's piece of a stacked weight straight from the layers'
// checkpoint buffers (no stack is made in host memory while loading), the
// pieces put together are the stack exactly (the one KV head padded over 4
// devices too), and the split model generates the unsplit one's tokens.
func TestSplitLoadReadsLayers(t *testing.T) {
	m := savedModel(t)
	if len(m.Loops()) == 0 {
		t.Fatal("the model has no loop: no stacked weight to read")
	}
	before := layerFields(m)
	g, err := NewGenerator(m, Options{Device: "pjrt", Precision: "highest", Mesh: mustMesh(t, "tp=4"), Layers: LayersLoop})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(layerFields(m), before) {
		t.Errorf("a stack was made in host memory to split it")
	}
	for i, p := range m.Params {
		sb, ok := g.weights[i].Device().(*pjrt.ShardedBuffer)
		if !ok {
			t.Fatalf("weight %s is not split (%T)", p.Name, g.weights[i].Device())
		}
		got, err := sb.ToHost()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, p.Buffer.Bytes()) {
			t.Errorf("weight %s %s: its pieces differ from the whole", p.Name, p.Type)
		}
	}
	req := Request{Prompts: [][]int32{{3, 1, 4, 1, 5}, {9, 2, 6}}, MaxNew: 4}
	split, err := g.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	host, err := NewGenerator(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := host.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(split.Tokens, want.Tokens, slices.Equal) {
		t.Errorf("split tokens %v, unsplit %v", split.Tokens, want.Tokens)
	}
}

// TestStackMadeOnRead: reading a stacked weight on the host makes the
// stack, row i being layer i's weight, and points the layers at their rows
// (their own buffers can then be collected).
func TestStackMadeOnRead(t *testing.T) {
	m := savedModel(t)
	stacked := 0
	for _, p := range m.Params {
		if !strings.Contains(p.Name, ":") {
			continue
		}
		stacked++
		was := stackRows(m, p)
		whole := p.Buffer.Bytes()
		n := len(whole) / len(was)
		for i, r := range stackRows(m, p) {
			if !bytes.Equal(whole[i*n:(i+1)*n], was[i].Bytes()) {
				t.Errorf("%s: row %d differs from its layer", p.Name, i)
			}
			if &r.Bytes()[0] != &whole[i*n] {
				t.Errorf("%s: layer %d's field is not a view of its row", p.Name, i)
			}
		}
	}
	if stacked == 0 {
		t.Fatal("no stacked weight")
	}
}

// TestGeneratorSplitFamilies: Gemma 4 (layers looping over a pattern of
// sliding and full layers, per-layer inputs, layers sharing another's keys
// and values after the loop, 2 KV heads over 4 devices) split tp=4 over
// XLA:CPU devices gives the unsplit model's tokens on the host and its
// first logits within 1e-5 of the largest (Qwen3: TestGeneratorSplit).
func TestGeneratorSplitFamilies(t *testing.T) {
	for name, config := range map[string]string{"gemma4": gemma4Shared} {
		m := randomModel(t, config, 0.5)
		host, err := NewGenerator(m, Options{})
		if err != nil {
			t.Fatal(err)
		}
		req := Request{Prompts: [][]int32{{3, 1, 4, 1, 5}, {9, 2, 6}}, MaxNew: 5}
		want, err := host.Generate(req)
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewGenerator(m, Options{Device: "pjrt", Precision: "highest", Mesh: mustMesh(t, "tp=4"), Layers: LayersLoop})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := g.Generate(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.EqualFunc(got.Tokens, want.Tokens, slices.Equal) {
			t.Errorf("%s: split tokens %v, unsplit %v", name, got.Tokens, want.Tokens)
		}
		if d, s := maxDiff(got.FirstLogits.Float32s(), want.FirstLogits.Float32s()); d > 1e-5*s {
			t.Errorf("%s: first logits differ by %g (largest %g)", name, d, s)
		}
	}
}

// TestSplitMoEFromCheckpoint: transformers' qwen3_moe checkpoint (one
// tensor per expert) split tp=4 over XLA:CPU devices: every piece, of the
// layers' stacks of expert stacks too, is read from the mapped checkpoint
// (no stack is made in host memory), the pieces put together are the
// stacks exactly, and the split model gives transformers' greedy tokens.
func TestSplitMoEFromCheckpoint(t *testing.T) {
	dir := filepath.Join(oracleDirs(t), "qwen3_moe")
	o := readOracle(t, dir)
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	before := layerFields(m)
	g, err := NewGenerator(m, Options{Device: "pjrt", Precision: "highest", Mesh: mustMesh(t, "tp=4"), Layers: LayersLoop})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(layerFields(m), before) {
		t.Errorf("a stack was made in host memory to split it")
	}
	got, err := g.Generate(Request{Prompts: o.Prompts, MaxNew: len(o.Greedy[0])})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got.Tokens, o.Greedy, slices.Equal) {
		t.Errorf("split tokens %v, transformers' %v", got.Tokens, o.Greedy)
	}
	for i, p := range m.Params {
		piece, err := g.weights[i].Device().(*pjrt.ShardedBuffer).ToHost()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(piece, p.Buffer.Bytes()) {
			t.Errorf("weight %s %s: its pieces differ from the whole", p.Name, p.Type)
		}
	}
}

// TestSplitPhi3FusedViews: Phi-3's fused projections are not copied at
// load: each layer's Q, K and V are consecutive runs of qkv_proj's rows in
// the memory-mapped checkpoint, Gate and Up of gate_up_proj's, and
// splitting the model tp=4 (4 heads, 2 KV heads: uneven) reads each
// device's piece from them without making a stack; the pieces are the
// whole weights exactly and the split model gives transformers' greedy
// tokens.
func TestSplitPhi3FusedViews(t *testing.T) {
	dir := filepath.Join(oracleDirs(t), "phi3")
	o := readOracle(t, dir)
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for i := range m.Weights.Layers {
		lw := &m.Weights.Layers[i]
		p := fmt.Sprintf("model.layers.%d.", i)
		checkRowsOf(t, m, p+"self_attn.qkv_proj.weight", lw.Q, lw.K, lw.V)
		checkRowsOf(t, m, p+"mlp.gate_up_proj.weight", lw.Gate, lw.Up)
	}
	before := layerFields(m)
	g, err := NewGenerator(m, Options{Device: "pjrt", Precision: "highest", Mesh: mustMesh(t, "tp=4"), Layers: LayersLoop})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(layerFields(m), before) {
		t.Errorf("a stack was made in host memory to split it")
	}
	got, err := g.Generate(Request{Prompts: o.Prompts, MaxNew: len(o.Greedy[0])})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got.Tokens, o.Greedy, slices.Equal) {
		t.Errorf("split tokens %v, transformers' %v", got.Tokens, o.Greedy)
	}
	for i, p := range m.Params {
		piece, err := g.weights[i].Device().(*pjrt.ShardedBuffer).ToHost()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(piece, p.Buffer.Bytes()) {
			t.Errorf("weight %s %s: its pieces differ from the whole", p.Name, p.Type)
		}
	}
}

// checkRowsOf checks that parts are views of the checkpoint's tensor name,
// one after another from its first byte to its last.
func checkRowsOf(t *testing.T, m *Model, name string, parts ...*backend.Buffer) {
	t.Helper()
	whole, err := m.Weights.Tensor(name)
	if err != nil {
		t.Fatal(err)
	}
	src := whole.Bytes()
	at := 0
	for k, b := range parts {
		if len(b.Bytes()) == 0 || at+len(b.Bytes()) > len(src) || unsafe.SliceData(b.Bytes()) != &src[at] {
			t.Errorf("%s: part %d (%s) is not a view of its rows in the mapped file", name, k, b.Type())
			return
		}
		at += len(b.Bytes())
	}
	if at != len(src) {
		t.Errorf("%s: the parts cover %d of its %d bytes", name, at, len(src))
	}
}
