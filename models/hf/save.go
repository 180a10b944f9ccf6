package hf

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/safetensors"
)

// Tensors is the inverse of loading: the tensors of w's checkpoint, in its
// order, under its names, shapes and dtype, holding the values of trained
// (the same fields as w, each of w.DType) laid out as the checkpoint stores
// them: Phi-3's fused projections fused again, experts per expert or packed
// as they were, tied embeddings once (and an lm_head.weight stored beside
// them equal to the embedding). Tensors of encoders the config does not
// load are w's own, unchanged.
func (w *Weights) Tensors(c *Config, trained *Weights) ([]safetensors.Named, error) {
	byName, err := hubTensors(c, trained, w.ckpt)
	if err != nil {
		return nil, err
	}
	var out []safetensors.Named
	for _, name := range w.ckpt.Names() {
		b, ok := byName[name]
		if !ok {
			if !c.skipped(name) {
				return nil, fmt.Errorf("hf: no trained value for tensor %q", name)
			}
			if b, err = w.ckpt.Tensor(name); err != nil {
				return nil, err
			}
		}
		info, _, _ := w.ckpt.Info(name)
		if b.Type().DType != info.DType || !slices.Equal(b.Type().Dims(), info.Shape) {
			return nil, fmt.Errorf("hf: tensor %q: the trained value is %s, the checkpoint's %s", name, b.Type(), info.Type())
		}
		out = append(out, safetensors.Named{Name: name, Buf: b})
	}
	return out, nil
}

// hubTensors maps trained's fields to the checkpoint's names, assembling
// the tensors that the loader split (fused projections, experts).
func hubTensors(c *Config, trained *Weights, ck *safetensors.Checkpoint) (map[string]*backend.Buffer, error) {
	out := map[string]*backend.Buffer{}
	layout := c.Layout()
	for _, s := range slots(trained, layout.Top, c.hubName) {
		out[s.name] = *s.dst
	}
	if c.TieEmbed {
		out[c.headName()] = trained.Embed
	}
	for i := range c.Layers {
		p := c.prefix() + "layers." + strconv.Itoa(i) + "."
		named := func(field string) string {
			if n := c.layerHubName(field); n != "" {
				return p + n
			}
			return ""
		}
		lw, shapes := &trained.Layers[i], layout.Layers[i]
		for _, s := range slots(lw, shapes, named) {
			out[s.name] = *s.dst
		}
		if c.Arch == "phi3" {
			out[p+"self_attn.qkv_proj.weight"] = rows(lw.Q, lw.K, lw.V)
			if _, ok := shapes["Gate"]; ok {
				out[p+"mlp.gate_up_proj.weight"] = rows(lw.Gate, lw.Up)
			}
		}
		if _, ok := shapes["GateExperts"]; ok {
			expertTensors(c, p, ck, lw, out)
		}
	}
	for name, b := range out {
		if b == nil {
			return nil, fmt.Errorf("hf: no trained value for tensor %q", name)
		}
	}
	return out, nil
}

// expertTensors adds a layer's experts under the names the checkpoint
// stores them (the loader's packedExperts and perExpert, inverted).
func expertTensors(c *Config, p string, ck *safetensors.Checkpoint, lw *LayerWeights, out map[string]*backend.Buffer) {
	experts := p + "experts."
	if !c.Gemma() {
		experts = p + strings.TrimSuffix(c.layerHubName("Router"), "gate.weight") + "experts."
	}
	gs := lw.GateExperts.Type().Dims()
	E := int(gs[0])
	if _, _, packed := ck.Info(experts + "gate_up_proj"); packed || c.Arch == "gemma4_text" {
		gu := backend.New(ir.Tensor(lw.GateExperts.Type().DType, gs[0], 2*gs[1], gs[2]))
		half := len(lw.GateExperts.Bytes()) / E
		for e := range E {
			copy(gu.Bytes()[2*e*half:], lw.GateExperts.Bytes()[e*half:(e+1)*half])
			copy(gu.Bytes()[(2*e+1)*half:], lw.UpExperts.Bytes()[e*half:(e+1)*half])
		}
		out[experts+"gate_up_proj"], out[experts+"down_proj"] = gu, lw.DownExperts
		return
	}
	names := [3]string{"gate_proj", "up_proj", "down_proj"}
	if c.Arch == "mixtral" {
		names = [3]string{"w1", "w3", "w2"}
	}
	for k, stack := range []*backend.Buffer{lw.GateExperts, lw.UpExperts, lw.DownExperts} {
		d := stack.Type().Dims()
		n := len(stack.Bytes()) / E
		for e := range E {
			one := backend.New(ir.Tensor(stack.Type().DType, d[1:]...))
			copy(one.Bytes(), stack.Bytes()[e*n:(e+1)*n])
			out[experts+strconv.Itoa(e)+"."+names[k]+".weight"] = one
		}
	}
}

// rows stacks matrices of one dtype and width along their first axis.
func rows(parts ...*backend.Buffer) *backend.Buffer {
	var n int64
	for _, b := range parts {
		n += b.Type().Dims()[0]
	}
	t := parts[0].Type()
	out := backend.New(ir.Tensor(t.DType, n, t.Dims()[1]))
	at := 0
	for _, b := range parts {
		at += copy(out.Bytes()[at:], b.Bytes())
	}
	return out
}
