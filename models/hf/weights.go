package hf

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/safetensors"
)

// Weights is a checkpoint's tensors in the layouts tpucc's models use.
// Matrices keep the Hub's [out, in] layout (y = x @ Wᵀ); experts are stacked
// along a leading expert axis: GateExperts and UpExperts [E, I, H],
// DownExperts [E, H, I]. Tensors are views of the mapped checkpoint except
// stacked experts, which are copies; all stay valid until Close.
type Weights struct {
	DType  ir.DType // every weight's dtype: f32, bf16 or f16
	Embed  *backend.Buffer
	Norm   *backend.Buffer
	LMHead *backend.Buffer // Embed itself when the config ties them
	// Gemma 4 per-layer inputs (nil without them).
	PerLayerEmbed, PerLayerProj, PerLayerProjNorm *backend.Buffer
	Layers                                        []LayerWeights
	ckpt                                          *safetensors.Checkpoint
}

// LayerWeights are one decoder layer's weights; a field the layer does not
// have (Config.Layers says which) is nil.
type LayerWeights struct {
	AttnNorm     *backend.Buffer // input_layernorm
	PostAttnNorm *backend.Buffer // Gemma 4: post_attention_layernorm
	MLPNorm      *backend.Buffer // Qwen3: post_attention_layernorm; Gemma 4: pre_feedforward_layernorm
	PostMLPNorm  *backend.Buffer // Gemma 4: post_feedforward_layernorm
	Q, K, V, O   *backend.Buffer // V is nil when the values are the keys; K and V are nil when shared
	QNorm, KNorm *backend.Buffer
	// Projection biases (Config.QKVBias, OBias, MLPBias): [out].
	QBias, KBias, VBias, OBias *backend.Buffer
	Gate, Up                   *backend.Buffer // the dense MLP: [I, H]
	Down                       *backend.Buffer // [H, I]
	GateBias, UpBias, DownBias *backend.Buffer
	Router                     *backend.Buffer // [E, H]
	// Gemma 4's router scales and the norms around its MoE block.
	RouterScale, ExpertScale              *backend.Buffer // [H], [E]
	PostMLPNorm1, PreMoENorm, PostMoENorm *backend.Buffer
	GateExperts, UpExperts, DownExperts   *backend.Buffer
	// Qwen2-MoE's shared expert ([S, H], [S, H], [H, S]) and its gate [1, H].
	SharedGate, SharedUp, SharedDown, SharedExpertGate *backend.Buffer
	LayerScalar                                        *backend.Buffer // Gemma 4: [1]
	// Gemma 4 per-layer input: gate [P, H], projection [H, P], norm [H].
	PerLayerGate, PerLayerProj, PerLayerNorm *backend.Buffer
}

// Close releases the checkpoint; every weight becomes invalid.
func (w *Weights) Close() error { return w.ckpt.Close() }

// Load reads dir's config.json and checkpoint.
func Load(dir string) (*Config, *Weights, error) { return LoadProgress(dir, nil) }

// LoadProgress is Load, calling report (when not nil) as each shard of the
// checkpoint is done with: stacking a large MoE's experts takes a while.
func LoadProgress(dir string, report func(Progress)) (*Config, *Weights, error) {
	c, err := LoadConfig(dir)
	if err != nil {
		return nil, nil, err
	}
	ck, err := safetensors.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	w, err := loadWeights(c, ck, dir, report)
	if err != nil {
		ck.Close()
		return nil, nil, err
	}
	return c, w, nil
}

// loader fetches and checks tensors, remembering which it used.
type loader struct {
	c     *Config
	ck    *safetensors.Checkpoint
	where string // the checkpoint, for errors about a tensor that is absent
	dtype ir.DType
	first string // the tensor that set dtype
	used  map[string]bool
	tally *tally
}

// take marks name used, counting it toward its shard's progress once.
func (l *loader) take(name, file string, info safetensors.Info) {
	if !l.used[name] {
		l.used[name] = true
		l.tally.take(file, info)
	}
}

// get returns the tensor called name, requiring shape and the checkpoint's dtype.
func (l *loader) get(name string, shape ...int64) (*backend.Buffer, error) {
	info, file, ok := l.ck.Info(name)
	if !ok {
		return nil, fmt.Errorf("%s: missing tensor %q (%s wants it, shape %v)", l.where, name, l.c.Arch, shape)
	}
	l.take(name, file, info)
	if !slices.Equal(info.Shape, shape) {
		return nil, fmt.Errorf("%s: tensor %q has shape %v, but the config wants %v", file, name, info.Shape, shape)
	}
	if l.first == "" {
		if d := info.DType; d != ir.F32 && d != ir.BF16 && d != ir.F16 {
			return nil, fmt.Errorf("%s: tensor %q is %s; weights must be f32, bf16 or f16", file, name, d)
		}
		l.dtype, l.first = info.DType, name
	} else if info.DType != l.dtype {
		return nil, fmt.Errorf("%s: tensor %q is %s, but %q is %s: a checkpoint has one dtype", file, name, info.DType, l.first, l.dtype)
	}
	return l.ck.Tensor(name)
}

// slot is one weight to fetch into dst.
type slot struct {
	dst   **backend.Buffer
	name  string
	shape []int64
}

func (l *loader) fill(slots []slot) error {
	for _, s := range slots {
		b, err := l.get(s.name, s.shape...)
		if err != nil {
			return err
		}
		*s.dst = b
	}
	return nil
}

// loadWeights maps the checkpoint's Hub names onto Weights as c describes
// them. where names the checkpoint in errors about absent tensors. A missing
// tensor, one the config does not use, a shape or a dtype that differs is an
// error naming the file and the tensor.
func loadWeights(c *Config, ck *safetensors.Checkpoint, where string, report func(Progress)) (*Weights, error) {
	l := &loader{c: c, ck: ck, where: where, used: map[string]bool{}, tally: newTally(ck, report)}
	w := &Weights{Layers: make([]LayerWeights, len(c.Layers)), ckpt: ck}
	V, H := int64(c.Vocab), int64(c.Hidden)
	top := []slot{{&w.Embed, l.c.prefix() + "embed_tokens.weight", []int64{V, H}}, {&w.Norm, l.c.prefix() + "norm.weight", []int64{H}}}
	if !c.TieEmbed {
		top = append(top, slot{&w.LMHead, c.headName(), []int64{V, H}})
	}
	if p := c.PerLayer; p != nil {
		LP := int64(len(c.Layers) * p.Hidden)
		top = append(top,
			slot{&w.PerLayerEmbed, l.c.prefix() + "embed_tokens_per_layer.weight", []int64{int64(p.Vocab), LP}},
			slot{&w.PerLayerProj, l.c.prefix() + "per_layer_model_projection.weight", []int64{LP, H}},
			slot{&w.PerLayerProjNorm, l.c.prefix() + "per_layer_projection_norm.weight", []int64{int64(p.Hidden)}})
	}
	if err := l.fill(top); err != nil {
		return nil, err
	}
	w.DType = l.dtype
	if c.TieEmbed {
		w.LMHead = w.Embed
		if err := l.tiedHead(w.Embed); err != nil {
			return nil, err
		}
	}
	for i := range c.Layers {
		if err := l.layer(i, &w.Layers[i]); err != nil {
			return nil, err
		}
	}
	return w, l.unexpected()
}

// tiedHead accepts an lm_head.weight beside tied embeddings only when it is
// the embedding byte for byte: otherwise the two disagree on the model.
func (l *loader) tiedHead(embed *backend.Buffer) error {
	name := l.c.headName()
	info, file, ok := l.ck.Info(name)
	if !ok {
		return nil
	}
	l.take(name, file, info)
	head, err := l.ck.Tensor(name)
	if err != nil {
		return err
	}
	if !head.Type().Equal(embed.Type()) || string(head.Bytes()) != string(embed.Bytes()) {
		return fmt.Errorf("%s: tensor %q (%s) differs from the embedding, but tie_word_embeddings is true", file, name, info.Type())
	}
	return nil
}

// unexpected fails on the first tensor nothing used, in sorted order.
func (l *loader) unexpected() error {
	for _, name := range l.ck.Names() {
		if !l.used[name] && !l.c.skipped(name) {
			_, file, _ := l.ck.Info(name)
			return fmt.Errorf("%s: unexpected tensor %q (%s does not use it)", file, name, l.c.Arch)
		}
	}
	return nil
}

// layer fills one decoder layer's weights.
func (l *loader) layer(i int, lw *LayerWeights) error {
	c, spec := l.c, l.c.Layers[i]
	p := l.c.prefix() + "layers." + strconv.Itoa(i) + "."
	H := int64(c.Hidden)
	slots, err := l.attnSlots(p, spec, lw)
	if err != nil {
		return err
	}
	if c.Arch == "olmo2" {
		// Norms after attention and MLP only.
		slots = append(slots, slot{&lw.PostAttnNorm, p + "post_attention_layernorm.weight", []int64{H}},
			slot{&lw.PostMLPNorm, p + "post_feedforward_layernorm.weight", []int64{H}})
	} else {
		slots = append(slots, slot{&lw.AttnNorm, p + "input_layernorm.weight", []int64{H}})
	}
	if spec.MLP {
		I := int64(spec.Intermediate)
		slots = append(slots, slot{&lw.Down, p + "mlp.down_proj.weight", []int64{H, I}})
		if c.Arch == "phi3" {
			if err := l.fused(p+"mlp.gate_up_proj.weight", H, []**backend.Buffer{&lw.Gate, &lw.Up}, I, I); err != nil {
				return err
			}
		} else {
			slots = append(slots,
				slot{&lw.Gate, p + "mlp.gate_proj.weight", []int64{I, H}},
				slot{&lw.Up, p + "mlp.up_proj.weight", []int64{I, H}})
		}
		if c.MLPBias {
			slots = append(slots, slot{&lw.GateBias, p + "mlp.gate_proj.bias", []int64{I}},
				slot{&lw.UpBias, p + "mlp.up_proj.bias", []int64{I}},
				slot{&lw.DownBias, p + "mlp.down_proj.bias", []int64{H}})
		}
	}
	if c.Gemma() {
		slots = append(slots, l.gemmaSlots(p, lw)...)
	} else if c.Arch != "olmo2" {
		slots = append(slots, slot{&lw.MLPNorm, p + "post_attention_layernorm.weight", []int64{H}})
	}
	if err := l.fill(slots); err != nil {
		return err
	}
	if !spec.MoE {
		return nil
	}
	if c.Arch == "gemma4_text" {
		return l.packedExperts(p+"experts.", lw)
	}
	// Mixtral's block and expert projections have their own names.
	block, names := "mlp.", [3]string{"gate_proj", "up_proj", "down_proj"}
	if c.Arch == "mixtral" {
		block, names = "block_sparse_moe.", [3]string{"w1", "w3", "w2"}
	}
	if err := l.fill([]slot{{&lw.Router, p + block + "gate.weight", []int64{int64(c.MoE.Experts), H}}}); err != nil {
		return err
	}
	if s := int64(c.MoE.Shared); s > 0 {
		sh := p + block + "shared_expert"
		if err := l.fill([]slot{
			{&lw.SharedGate, sh + ".gate_proj.weight", []int64{s, H}}, {&lw.SharedUp, sh + ".up_proj.weight", []int64{s, H}},
			{&lw.SharedDown, sh + ".down_proj.weight", []int64{H, s}}, {&lw.SharedExpertGate, sh + "_gate.weight", []int64{1, H}},
		}); err != nil {
			return err
		}
	}
	if _, _, packed := l.ck.Info(p + block + "experts.gate_up_proj"); packed {
		return l.packedExperts(p+block+"experts.", lw)
	}
	return l.perExpert(p+block+"experts.", lw, names)
}

// attnSlots are a layer's attention weights, but for Phi-3's fused q, k
// and v projection, which it splits into Q, K and V itself.
func (l *loader) attnSlots(p string, spec Layer, lw *LayerWeights) ([]slot, error) {
	c := l.c
	H, D := int64(c.Hidden), int64(spec.HeadDim)
	q, kv := int64(c.Heads)*D, int64(spec.KVHeads)*D
	a := p + "self_attn."
	slots := []slot{{&lw.O, a + "o_proj.weight", []int64{H, q}}}
	opt := func(on bool, s ...slot) {
		if on {
			slots = append(slots, s...)
		}
	}
	if c.Arch == "phi3" {
		return slots, l.fused(a+"qkv_proj.weight", H, []**backend.Buffer{&lw.Q, &lw.K, &lw.V}, q, kv, kv)
	}
	// A q/k norm is over a head, or over the whole projection (OLMo 2).
	qn, kn := D, D
	if c.QKNormFull {
		qn, kn = q, kv
	}
	slots = append(slots, slot{&lw.Q, a + "q_proj.weight", []int64{q, H}})
	opt(c.QKNorm, slot{&lw.QNorm, a + "q_norm.weight", []int64{qn}})
	opt(c.QKVBias, slot{&lw.QBias, a + "q_proj.bias", []int64{q}})
	opt(c.OBias, slot{&lw.OBias, a + "o_proj.bias", []int64{H}})
	if spec.KVFrom < 0 {
		slots = append(slots, slot{&lw.K, a + "k_proj.weight", []int64{kv, H}})
		opt(c.QKNorm, slot{&lw.KNorm, a + "k_norm.weight", []int64{kn}})
		opt(c.QKVBias, slot{&lw.KBias, a + "k_proj.bias", []int64{kv}})
		if !spec.KEqV {
			slots = append(slots, slot{&lw.V, a + "v_proj.weight", []int64{kv, H}})
			opt(c.QKVBias, slot{&lw.VBias, a + "v_proj.bias", []int64{kv}})
		}
	}
	return slots, nil
}

// fused reads a projection stored as one [sum(rows), cols] matrix (Phi-3's
// qkv_proj and gate_up_proj) and splits its rows, in order, into dst:
// copies, one per part.
func (l *loader) fused(name string, cols int64, dst []**backend.Buffer, rows ...int64) error {
	var total int64
	for _, r := range rows {
		total += r
	}
	b, err := l.get(name, total, cols)
	if err != nil {
		return err
	}
	at := 0
	for i, r := range rows {
		part := backend.New(ir.Tensor(l.dtype, r, cols))
		at += copy(part.Bytes(), b.Bytes()[at:])
		*dst[i] = part
	}
	return nil
}

// gemmaSlots are the weights only Gemma layers have (the layer scalar:
// Gemma 4's).
func (l *loader) gemmaSlots(p string, lw *LayerWeights) []slot {
	c := l.c
	H := int64(c.Hidden)
	s := []slot{
		{&lw.PostAttnNorm, p + "post_attention_layernorm.weight", []int64{H}},
		{&lw.MLPNorm, p + "pre_feedforward_layernorm.weight", []int64{H}},
		{&lw.PostMLPNorm, p + "post_feedforward_layernorm.weight", []int64{H}},
	}
	if c.Arch == "gemma4_text" {
		s = append(s, slot{&lw.LayerScalar, p + "layer_scalar", []int64{1}})
	}
	if c.MoE != nil {
		E := int64(c.MoE.Experts)
		s = append(s,
			slot{&lw.Router, p + "router.proj.weight", []int64{E, H}},
			slot{&lw.RouterScale, p + "router.scale", []int64{H}},
			slot{&lw.ExpertScale, p + "router.per_expert_scale", []int64{E}},
			slot{&lw.PostMLPNorm1, p + "post_feedforward_layernorm_1.weight", []int64{H}},
			slot{&lw.PreMoENorm, p + "pre_feedforward_layernorm_2.weight", []int64{H}},
			slot{&lw.PostMoENorm, p + "post_feedforward_layernorm_2.weight", []int64{H}})
	}
	if pl := c.PerLayer; pl != nil {
		P := int64(pl.Hidden)
		s = append(s,
			slot{&lw.PerLayerGate, p + "per_layer_input_gate.weight", []int64{P, H}},
			slot{&lw.PerLayerProj, p + "per_layer_projection.weight", []int64{H, P}},
			slot{&lw.PerLayerNorm, p + "post_per_layer_input_norm.weight", []int64{H}})
	}
	return s
}

// packedExperts splits gate_up_proj [E, 2I, H] (gate rows first) into
// GateExperts and UpExperts, and takes down_proj [E, H, I] as it is.
func (l *loader) packedExperts(p string, lw *LayerWeights) error {
	E, I, H := int64(l.c.MoE.Experts), int64(l.c.MoE.Intermediate), int64(l.c.Hidden)
	var gateUp *backend.Buffer
	if err := l.fill([]slot{{&gateUp, p + "gate_up_proj", []int64{E, 2 * I, H}}, {&lw.DownExperts, p + "down_proj", []int64{E, H, I}}}); err != nil {
		return err
	}
	half := int(I*H) * l.dtype.Size()
	gate, up := backend.New(ir.Tensor(l.dtype, E, I, H)), backend.New(ir.Tensor(l.dtype, E, I, H))
	src := gateUp.Bytes()
	for e := range int(E) {
		copy(gate.Bytes()[e*half:], src[2*e*half:(2*e+1)*half])
		copy(up.Bytes()[e*half:], src[(2*e+1)*half:(2*e+2)*half])
	}
	lw.GateExperts, lw.UpExperts = gate, up
	return nil
}

// perExpert stacks mlp.experts.N.{gate,up,down}_proj.weight (Mixtral:
// block_sparse_moe.experts.N.{w1,w3,w2}.weight: names), one tensor per
// expert as Qwen3-MoE checkpoints store them, into [E, ...] arrays.
func (l *loader) perExpert(p string, lw *LayerWeights, names [3]string) error {
	E, I, H := int64(l.c.MoE.Experts), int64(l.c.MoE.Intermediate), int64(l.c.Hidden)
	stacks := []struct {
		dst   **backend.Buffer
		proj  string
		shape []int64
	}{
		{&lw.GateExperts, names[0], []int64{I, H}},
		{&lw.UpExperts, names[1], []int64{I, H}},
		{&lw.DownExperts, names[2], []int64{H, I}},
	}
	for _, s := range stacks {
		out := backend.New(ir.Tensor(l.dtype, append([]int64{E}, s.shape...)...))
		n := len(out.Bytes()) / int(E)
		for e := range int(E) {
			b, err := l.get(p+strconv.Itoa(e)+"."+s.proj+".weight", s.shape...)
			if err != nil {
				return err
			}
			copy(out.Bytes()[e*n:], b.Bytes())
		}
		*s.dst = out
	}
	return nil
}
