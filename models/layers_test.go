package models

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	_ "github.com/tpucc/tpucc/backend/pjrt" // the pjrt device: XLA:CPU through PJRT
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/tensor"
)

// Model.Unrolled runs every layer on its own weights, which are the rows
// of the looped model's stacks: no loop, one parameter per layer field, the
// same buffers' bytes; a model without loops is its own unrolled form.
func TestUnrolledModel(t *testing.T) {
	m := randomModel(t, tinyQwen3Config, 0.5)
	if len(m.Loops()) == 0 {
		t.Fatal("the tiny Qwen3 runs no loop: the test needs one")
	}
	u, err := m.Unrolled()
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Loops(); len(got) != 0 {
		t.Errorf("the unrolled model runs loops %v", got)
	}
	if u.Weights != m.Weights || u.Config != m.Config {
		t.Error("the unrolled model has weights or a configuration of its own")
	}
	layers := len(m.Config.Layers)
	for _, field := range []string{"Q", "Down"} {
		stack := m.Params[m.index["layers.0:"+strconv.Itoa(layers)+"."+field]]
		rows := stack.Buffer.Bytes()
		per := len(rows) / layers
		for i := range layers {
			p := u.Params[u.index["layers."+strconv.Itoa(i)+"."+field]]
			if !strings.HasPrefix(p.Name, "layers."+strconv.Itoa(i)+".") || !slices.Equal(p.Buffer.Bytes(), rows[i*per:(i+1)*per]) {
				t.Errorf("%s of layer %d (%s) is not row %d of %s", field, i, p.Name, i, stack.Name)
			}
		}
	}
	if again, err := u.Unrolled(); err != nil || again != u {
		t.Errorf("unrolling an unrolled model: %p, %v; want itself", again, err)
	}
}

// LayersAuto unrolls on XLA:CPU only (--device pjrt, backend pjrt);
// LayersLoop and LayersUnroll force either way; another mode is refused by
// name.
func TestLayersMode(t *testing.T) {
	for _, c := range []struct {
		o      Options
		unroll bool
		err    string
	}{
		{Options{Device: "pjrt"}, true, ""},
		{Options{Backend: "pjrt"}, true, ""},
		{Options{Device: "tpu"}, false, ""},
		{Options{Backend: "pjrt-gpu"}, false, ""},
		{Options{Device: "cpu"}, false, ""},
		{Options{Backend: "llvm"}, false, ""},
		{Options{Backend: "reference"}, false, ""},
		{Options{Device: "pjrt", Layers: LayersLoop}, false, ""},
		{Options{Backend: "llvm", Layers: LayersUnroll}, true, ""},
		{Options{Layers: "flat"}, false, `models: layers "flat": want "loop", "unroll" or "" (automatic)`},
		{Options{Device: "npu"}, false, `unknown device "npu" (want one of cpu, pjrt, tpu, gpu)`},
	} {
		unroll, err := c.o.unroll()
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if unroll != c.unroll || msg != c.err {
			t.Errorf("%+v: unroll %v, error %q; want %v, %q", c.o, unroll, msg, c.unroll, c.err)
		}
	}
}

// A Generator's steps give the same tokens, and first logits within 1e-5
// of the largest, with the layers as loops and unrolled, on the llvm
// backend and on XLA:CPU; on XLA:CPU the automatic mode unrolls, on llvm
// it keeps the loops.
func TestGeneratorLayers(t *testing.T) {
	m := randomModel(t, tinyQwen3Config, 0.5)
	req := Request{Prompts: [][]int32{{3, 1, 4, 1, 5}, {9, 2, 6}}, MaxNew: 6}
	for _, o := range []Options{{Backend: "llvm"}, {Device: "pjrt", Precision: "highest"}} {
		var want *Result
		for _, layers := range []string{LayersLoop, LayersUnroll, LayersAuto} {
			o.Layers, o.Cache = layers, engine.NewCache("", engine.CacheOptions{})
			g, err := NewGenerator(m, o)
			if err != nil {
				t.Fatal(err)
			}
			unrolled := layers == LayersUnroll || layers == LayersAuto && o.Device == "pjrt"
			if loops := len(g.m.Loops()) > 0; loops == unrolled {
				t.Errorf("%+v: the steps run loops %v", o, g.m.Loops())
			}
			got, err := g.Generate(req)
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = got
				continue
			}
			if !slices.EqualFunc(got.Tokens, want.Tokens, slices.Equal) {
				t.Errorf("%+v: tokens %v, with loops %v", o, got.Tokens, want.Tokens)
			}
			if diff, scale := maxDiff(got.FirstLogits.Float32s(), want.FirstLogits.Float32s()); diff > 1e-5*scale {
				t.Errorf("%+v: first logits differ from the loops' by %g (largest %g)", o, diff, scale)
			}
		}
	}
}

// TestPartialRope: tables narrower than the head (Phi-3's
// partial_rotary_factor) turn its first channels in rotate-half pairs among
// themselves and pass the rest unchanged, as transformers' Phi-3
// apply_rotary_pos_emb: with 4 of 6 channels, out[0] = x0·c0 − x2·s0,
// out[2] = x2·c2 + x0·s2, out[4:6] = x[4:6].
func TestPartialRope(t *testing.T) {
	x := []float32{1, 2, 3, 4, 5, 6}
	cos, sin := []float32{0.5, 0.25, 0.5, 0.25}, []float32{0.75, -1, 0.75, -1}
	got, err := tensor.Eval("rope", []*backend.Buffer{tensor.FromSlice(x, 1, 1, 1, 6).Buffer(),
		tensor.FromSlice(cos, 1, 1, 1, 4).Buffer(), tensor.FromSlice(sin, 1, 1, 1, 4).Buffer()},
		func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) {
			return []*tensor.Tensor{rope(ts[0], ts[1], ts[2])}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{1*0.5 - 3*0.75, 2*0.25 + 4, 3*0.5 + 1*0.75, 4*0.25 - 2, 5, 6}
	if g := tensor.FromBuffer(got[0]).Float32s(); !slices.Equal(g, want) {
		t.Errorf("got %v, want %v", g, want)
	}
}
