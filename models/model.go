// Package models runs Hugging Face causal language models (Qwen3,
// Qwen3-MoE, Gemma 4 text) on the tensor API: the model of each family as
// transformers computes it, a KV cache of fixed capacity, prefill and decode
// as two compiled steps, and generation (greedy or seeded sampling) over a
// batch of prompts of different lengths. Checkpoints and config.json are
// read by models/hf; tokenizers by models/tokenizer.
//
// The weights are parameters of the compiled steps, never constants: a
// program is small whatever the model's size, its StableHLO takes the
// weights as arguments (tpucc export), and one compiled step serves every
// checkpoint of the same configuration.
package models

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/tensor"
)

// Model is a loaded checkpoint.
type Model struct {
	Config  *hf.Config
	Weights *hf.Weights
	// Params are the weights in the order the compiled steps take them,
	// after the step's own inputs.
	Params []Param
	index  map[string]int    // weight field path -> Params index
	groups []group           // the layers as loops (layerGroups)
	slots  map[string][2]int // a stack's layers ("0:28") -> its group and slot
	// F32Products keeps a bf16 checkpoint's products in f32 (the CLI's
	// --precision highest): each weight converted to f32 and
	// multiplied with f32 activations. Unset, the products follow the
	// checkpoint as transformers does with torch_dtype=bfloat16: bf16
	// weights multiply activations rounded to bf16, summing in f32
	// (docs/MODELS.md). An f32 checkpoint's products are f32 either way.
	F32Products bool
}

// Load reads a model directory (config.json and the safetensors checkpoint).
func Load(dir string) (*Model, error) { return LoadProgress(dir, nil) }

// LoadProgress is Load, calling report as each shard is loaded
// (hf.LoadProgress).
func LoadProgress(dir string, report func(hf.Progress)) (*Model, error) {
	c, w, err := hf.LoadProgress(dir, report)
	if err != nil {
		return nil, err
	}
	m, err := New(c, w)
	if err != nil {
		w.Close()
		return nil, err
	}
	return m, nil
}

// New makes a model of a configuration and its weights. The weights of
// layers that run as one loop are stacked here (see collect): w's layer
// fields become views of the stacks. With TPUCC_UNROLL_LAYERS=1 in the
// environment every layer is unrolled and nothing is stacked.
func New(c *hf.Config, w *hf.Weights) (*Model, error) {
	if err := computable(c); err != nil {
		return nil, err
	}
	m := newModel(c)
	params, index, err := collect(w, m.groups)
	if err != nil {
		return nil, err
	}
	m.Weights, m.Params, m.index = w, params, index
	return m, nil
}

// newModel is a model of c without weights, its layers grouped.
func newModel(c *hf.Config) *Model { return groupedModel(c, unrolled()) }

// groupedModel is a model of c without weights, its layers grouped into
// loops unless unroll.
func groupedModel(c *hf.Config, unroll bool) *Model {
	m := &Model{Config: c, groups: layerGroups(c, unroll), slots: map[string][2]int{}}
	for gi, g := range m.groups {
		for s := range g.period {
			if g.looped() {
				m.slots[strings.TrimPrefix(g.spec(s), "layers.")] = [2]int{gi, s}
			}
		}
	}
	return m
}

// Unrolled is m with every layer unrolled: the same weights (each layer's
// fields are its rows of m's stacks, views, not copies), the steps traced
// layer by layer with each layer's weights a parameter of their own. It is m
// itself when m runs no loop. A backend that copies a stack's row out
// before a product reads it (XLA:CPU copies every dynamic_slice of a weight
// stack inside a loop, each step) runs the unrolled steps faster;
// Options.Layers chooses it for a Generator.
func (m *Model) Unrolled() (*Model, error) {
	if len(m.Loops()) == 0 {
		return m, nil
	}
	u := groupedModel(m.Config, true)
	var err error
	if m.Weights != nil {
		u.Params, u.index, err = collect(m.Weights, u.groups)
	} else {
		u.Params, u.index, err = m.rowParams()
	}
	if err != nil {
		return nil, err
	}
	u.Weights, u.F32Products = m.Weights, m.F32Products
	return u, nil
}

// rowParams are the parameters of m unrolled for a model without hf.Weights
// (Abstract's, its buffers set by hand), in m's order: a looped slot's
// stack becomes its layers' rows (views), the other parameters stay m's.
func (m *Model) rowParams() ([]Param, map[string]int, error) {
	var out []Param
	index := map[string]int{}
	for _, p := range m.Params {
		rest, _ := strings.CutPrefix(p.Name, "layers.")
		n, field, _ := strings.Cut(rest, ".")
		at, ok := m.slots[n]
		if !strings.HasPrefix(p.Name, "layers.") || !ok {
			index[p.Name] = len(out)
			out = append(out, p)
			continue
		}
		g, s := m.groups[at[0]], at[1]
		views, err := rowViews(p, g.count)
		if err != nil {
			return nil, nil, err
		}
		for it, v := range views {
			name := fmt.Sprintf("layers.%d.%s", g.layer(s, it), field)
			index[name] = len(out)
			out = append(out, Param{Name: name, Type: v.Type(), Buffer: v})
		}
	}
	for name, j := range m.index {
		if name != m.Params[j].Name { // an alias (LMHead of tied embeddings)
			index[name] = index[m.Params[j].Name]
		}
	}
	return out, index, nil
}

// rowViews are views of p's count rows along its leading dimension.
func rowViews(p Param, count int) ([]*backend.Buffer, error) {
	if p.Buffer == nil {
		return nil, fmt.Errorf("models: weight %s has no buffer", p.Name)
	}
	t := p.Type
	row := ir.Type{DType: t.DType, Shape: t.Shape[1:]}
	data := p.Buffer.Bytes()
	per := len(data) / count
	out := make([]*backend.Buffer, count)
	for it := range out {
		v, err := backend.View(row, data[it*per:(it+1)*per])
		if err != nil {
			return nil, fmt.Errorf("models: row %d of %s: %w", it, p.Name, err)
		}
		out[it] = v
	}
	return out, nil
}

// Loops lists the loops a step runs, as the layers of each loop's first
// slot: "layers.0:28" for every layer of a 28-layer Qwen3; layers not in
// one run unrolled.
func (m *Model) Loops() []string {
	var out []string
	for _, g := range m.groups {
		if g.looped() {
			out = append(out, g.spec(0))
		}
	}
	return out
}

// computable refuses a configuration whose choices the model code does not
// compute, naming the choice: hf.Config may describe more than models runs.
func computable(c *hf.Config) error {
	switch {
	case c.Activation != "silu" && c.Activation != "gelu_pytorch_tanh":
		return fmt.Errorf("models: activation %q is not computed", c.Activation)
	case c.MoE != nil && c.MoE.Router != "softmax" && c.MoE.Router != "gemma4":
		return fmt.Errorf("models: router %q is not computed", c.MoE.Router)
	case !slices.Contains(hf.Architectures, c.Arch): // every family hf loads is computed
		return fmt.Errorf("models: architecture %q is not computed", c.Arch)
	}
	for i, l := range c.Layers {
		gemma := c.Gemma()
		if gemma && !l.MLP || !gemma && l.MLP == l.MoE {
			return fmt.Errorf("models: layer %d: a %s layer with MLP %v and MoE %v is not computed", i, c.Arch, l.MLP, l.MoE)
		}
		if l.MoE && c.MoE == nil {
			return fmt.Errorf("models: layer %d is MoE but the config has no experts", i)
		}
	}
	return nil
}

// Close releases the checkpoint (nothing for an abstract model).
func (m *Model) Close() error {
	if m.Weights == nil {
		return nil
	}
	return m.Weights.Close()
}

// CacheTypes are the types of the KV cache for batch rows and capacity
// slots: keys then values of each layer that owns them, [B, KVH, Cap, D],
// of CacheDType.
//
// The layers of a loop's slot share one stacked entry [count, B, KVH, Cap, D].
func (m *Model) CacheTypes(batch, capacity int64) []ir.Type {
	dt := m.CacheDType()
	var out []ir.Type
	for _, g := range m.groups {
		for s := range g.period {
			l := m.Config.Layers[g.layer(s, 0)]
			if l.KVFrom >= 0 {
				continue
			}
			t := ir.Tensor(dt, batch, int64(l.KVHeads), capacity, int64(l.HeadDim))
			if g.looped() {
				t = ir.Tensor(dt, int64(g.count), batch, int64(l.KVHeads), capacity, int64(l.HeadDim))
			}
			out = append(out, t, t)
		}
	}
	return out
}

// CacheDType is the dtype of m's KV cache: bf16 when m multiplies in bf16
// (a bf16 checkpoint's product weights, F32Products unset), as
// transformers keeps a bf16 model's cache in bf16: the keys and values are
// rounded to bf16 as they are written and attention multiplies bf16
// operands (attend), and a memory-bound decode step reads half the bytes.
// f16 for an f16 checkpoint (f16 product weights), as transformers keeps
// an f16 model's: the keys and values are rounded to f16 as written and
// attention widens them as it reads them, as the step's other products
// widen the f16 weights (its products are f32). Otherwise f32: an f32
// checkpoint, and a bf16 one with F32Products.
func (m *Model) CacheDType() ir.DType {
	switch {
	case slices.ContainsFunc(m.Params, m.BF16Product):
		return ir.BF16
	case slices.ContainsFunc(m.Params, f16Product):
		return ir.F16
	}
	return ir.F32
}

// StepTypes are the argument types of a step of tokens tokens per row: the
// tokens i32[B, T], each row's first slot i32[B], the step's first slot
// i32[], the cache, then the weights.
func (m *Model) StepTypes(batch, tokens, capacity int64) []ir.Type {
	ts := []ir.Type{ir.Tensor(ir.I32, batch, tokens), ir.Tensor(ir.I32, batch), ir.Tensor(ir.I32)}
	ts = append(ts, m.CacheTypes(batch, capacity)...)
	for _, p := range m.Params {
		ts = append(ts, p.Type)
	}
	return ts
}

// StepNames name StepTypes' arguments.
func (m *Model) StepNames() []string {
	names := []string{"tokens", "start", "pos"}
	for i := range len(m.CacheTypes(1, 1)) / 2 {
		names = append(names, fmt.Sprintf("cache.%d.k", i), fmt.Sprintf("cache.%d.v", i))
	}
	for _, p := range m.Params {
		names = append(names, p.Name)
	}
	return names
}

// step runs one step on ts (StepTypes' order), concrete or traced; its
// results are the logits and the cache after the step.
func (m *Model) step(ts []*tensor.Tensor, all, fresh bool) (out []*tensor.Tensor, err error) {
	return m.stepAs(ts, all, stepIn{fresh: fresh})
}

// stepAs is step with flags' fresh and unrollStacks (stepIn).
func (m *Model) stepAs(ts []*tensor.Tensor, all bool, flags stepIn) (out []*tensor.Tensor, err error) {
	defer tensor.Recover(&err)
	nc := len(m.CacheTypes(1, 1))
	if len(ts) != 3+nc+len(m.Params) {
		return nil, fmt.Errorf("models: a step takes %d arguments, got %d", 3+nc+len(m.Params), len(ts))
	}
	in := stepIn{tokens: ts[0], start: ts[1], pos: ts[2], caches: ts[3 : 3+nc], fresh: flags.fresh,
		unrollStacks: flags.unrollStacks, bf16: !m.F32Products, routerAux: flags.routerAux}
	w := bind(m, ts[3+nc:])
	logits, caches, aux := forward(m.Config, m.groups, w, in, all)
	out = append([]*tensor.Tensor{logits}, caches...)
	if aux != nil {
		out = append(out, aux) // stepIn.routerAux: after the caches
	}
	return out, nil
}

// Trace records a step for argument types (StepTypes) as a module whose
// entry is called name. all asks for the logits of every token [B, T, V]
// rather than of each row's last [B, V].
func (m *Model) Trace(name string, types []ir.Type, all bool) (*ir.Module, error) {
	return m.trace(name, types, all, false)
}

// trace is Trace; fresh makes a step for an empty cache at pos 0 (stepIn).
func (m *Model) trace(name string, types []ir.Type, all, fresh bool) (*ir.Module, error) {
	names := m.StepNames()
	if len(types) != len(names) {
		return nil, fmt.Errorf("models: a step takes %d arguments, got %d types", len(names), len(types))
	}
	return tensor.Trace(name, names, types, func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) {
		return m.step(ts, all, fresh)
	})
}

// stepProgram is a step as the runtime compiles it.
type stepProgram struct {
	m    *Model
	name string
	all  bool
	// fresh: the program only ever runs on an empty cache at pos 0 (the
	// Generator's prefill; stepIn.fresh).
	fresh bool
}

func (p stepProgram) Trace(args []engine.Arg) (*ir.Module, error) {
	types := make([]ir.Type, len(args))
	for i, a := range args {
		if a.IsStatic() {
			return nil, fmt.Errorf("models: argument %d of a step is static", i)
		}
		types[i] = a.Type
	}
	return p.m.trace(p.name, types, p.all, p.fresh)
}

func (p stepProgram) Eager(args []engine.Arg) ([]*backend.Buffer, error) {
	bufs := make([]*backend.Buffer, len(args))
	for i, a := range args {
		bufs[i] = a.Tensor
	}
	return tensor.Eval(p.name, bufs, func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) {
		return p.m.step(ts, p.all, p.fresh)
	})
}
