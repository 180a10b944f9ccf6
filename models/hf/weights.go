package hf

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/safetensors"
)

// Weights is a checkpoint's tensors in the layouts tpucc's models use.
// Matrices keep the Hub's [out, in] layout (y = x @ Wᵀ); experts are stacked
// along a leading expert axis: GateExperts and UpExperts [E, I, H],
// DownExperts [E, H, I]. Tensors are views of the mapped checkpoint, and
// stacked experts are stacks of such views (backend.Stack: copied into one
// array only when read on the host); all stay valid until Close. models.New
// stacks the weights of the layers one loop runs the same way; a stack made
// on the host points those layers' fields at its rows.
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

// Tensor is the checkpoint's tensor called name, a view of its file's
// mapped bytes: what a weight loaded from it is a view of (a fused
// projection's parts, a stack's rows).
func (w *Weights) Tensor(name string) (*backend.Buffer, error) { return w.ckpt.Tensor(name) }

// Close releases the checkpoint; every weight becomes invalid.
func (w *Weights) Close() error { return w.ckpt.Close() }

// Load reads dir's config.json and checkpoint.
func Load(dir string) (*Config, *Weights, error) { return LoadProgress(dir, nil) }

// LoadProgress is Load, calling report (when not nil) as each shard of the
// checkpoint is done with: a large checkpoint takes a while to check.
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
	layout := c.Layout()
	if err := l.fill(slots(w, layout.Top, c.hubName)); err != nil {
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
		if err := l.layer(i, &w.Layers[i], layout.Layers[i]); err != nil {
			return nil, err
		}
	}
	return w, l.unexpected()
}

// slots are the weights of the struct *dst that shapes lists, in the
// struct's field order, each under the name name gives it; fields name
// gives "" are left to the caller.
func slots[T any](dst *T, shapes map[string][]int64, name func(field string) string) []slot {
	v := reflect.ValueOf(dst).Elem()
	var out []slot
	for i := range v.NumField() {
		field := v.Type().Field(i).Name
		shape, ok := shapes[field]
		if !ok {
			continue
		}
		if n := name(field); n != "" {
			out = append(out, slot{v.Field(i).Addr().Interface().(**backend.Buffer), n, shape})
		}
	}
	return out
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

// layer fills one decoder layer's weights, those of shapes (Layout).
func (l *loader) layer(i int, lw *LayerWeights, shapes map[string][]int64) error {
	c := l.c
	p := c.prefix() + "layers." + strconv.Itoa(i) + "."
	named := func(field string) string {
		if n := c.layerHubName(field); n != "" {
			return p + n
		}
		return ""
	}
	if err := l.fill(slots(lw, shapes, named)); err != nil {
		return err
	}
	if c.Arch == "phi3" {
		// q, k and v stored as one qkv_proj, gate and up as one gate_up_proj.
		if err := l.fused(p+"self_attn.qkv_proj.weight", shapes, []string{"Q", "K", "V"}, []**backend.Buffer{&lw.Q, &lw.K, &lw.V}); err != nil {
			return err
		}
		if _, ok := shapes["Gate"]; ok {
			if err := l.fused(p+"mlp.gate_up_proj.weight", shapes, []string{"Gate", "Up"}, []**backend.Buffer{&lw.Gate, &lw.Up}); err != nil {
				return err
			}
		}
	}
	if _, ok := shapes["GateExperts"]; !ok {
		return nil
	}
	experts := p + "experts."
	if !c.Gemma() {
		experts = p + strings.TrimSuffix(c.layerHubName("Router"), "gate.weight") + "experts."
	}
	if _, _, packed := l.ck.Info(experts + "gate_up_proj"); packed || c.Arch == "gemma4_text" {
		return l.packedExperts(experts, shapes, lw)
	}
	// Mixtral's expert projections have their own names.
	names := [3]string{"gate_proj", "up_proj", "down_proj"}
	if c.Arch == "mixtral" {
		names = [3]string{"w1", "w3", "w2"}
	}
	return l.perExpert(experts, shapes, lw, names)
}

// fused reads a projection stored as one matrix (Phi-3's qkv_proj and
// gate_up_proj) whose rows are those of fields, in order, and splits them
// into dst: views of the checkpoint's rows, each part a run of whole rows
// of the row-major matrix, so a model split over devices reads each
// device's piece from the mapped file and never holds the projection twice.
func (l *loader) fused(name string, shapes map[string][]int64, fields []string, dst []**backend.Buffer) error {
	var total, cols int64
	for _, f := range fields {
		total, cols = total+shapes[f][0], shapes[f][1]
	}
	b, err := l.get(name, total, cols)
	if err != nil {
		return err
	}
	src := b.Bytes()
	at := 0
	for i, f := range fields {
		t := ir.Tensor(l.dtype, shapes[f]...)
		n := int(shapes[f][0]*shapes[f][1]) * l.dtype.Size()
		part, err := backend.View(t, src[at:at+n:at+n])
		if err != nil {
			return fmt.Errorf("%s: %s: %w", l.where, name, err)
		}
		*dst[i], at = part, at+n
	}
	return nil
}

// packedExperts splits gate_up_proj [E, 2I, H] (gate rows first) into
// GateExperts and UpExperts, and takes down_proj [E, H, I] as it is. The
// halves are stacks (backend.Stack) of views of the checkpoint's rows: no
// copy is made until something reads them on the host.
func (l *loader) packedExperts(p string, shapes map[string][]int64, lw *LayerWeights) error {
	gs := shapes["GateExperts"]
	E, I, H := gs[0], gs[1], gs[2]
	var gateUp *backend.Buffer
	if err := l.fill([]slot{{&gateUp, p + "gate_up_proj", []int64{E, 2 * I, H}}, {&lw.DownExperts, p + "down_proj", shapes["DownExperts"]}}); err != nil {
		return err
	}
	half := int(I*H) * l.dtype.Size()
	t := ir.Tensor(l.dtype, I, H)
	src := gateUp.Bytes()
	var gate, up []*backend.Buffer
	for e := range int(E) {
		g, err := backend.View(t, src[2*e*half:(2*e+1)*half])
		if err != nil {
			return fmt.Errorf("%s: %sgate_up_proj: %w", l.where, p, err)
		}
		u, err := backend.View(t, src[(2*e+1)*half:(2*e+2)*half])
		if err != nil {
			return fmt.Errorf("%s: %sgate_up_proj: %w", l.where, p, err)
		}
		gate, up = append(gate, g), append(up, u)
	}
	lw.GateExperts, lw.UpExperts = backend.Stack(gate, nil), backend.Stack(up, nil)
	return nil
}

// perExpert stacks mlp.experts.N.{gate,up,down}_proj.weight (Mixtral:
// block_sparse_moe.experts.N.{w1,w3,w2}.weight: names), one tensor per
// expert as Qwen3-MoE checkpoints store them, into [E, ...] arrays: stacks
// of the checkpoint's tensors (backend.Stack), made in host memory only
// when something reads them there, so a split upload of a large MoE reads
// each device's piece straight from the mapped file.
func (l *loader) perExpert(p string, shapes map[string][]int64, lw *LayerWeights, names [3]string) error {
	stacks := []struct {
		dst   **backend.Buffer
		field string
	}{{&lw.GateExperts, "GateExperts"}, {&lw.UpExperts, "UpExperts"}, {&lw.DownExperts, "DownExperts"}}
	for k, s := range stacks {
		shape := shapes[s.field]
		rows := make([]*backend.Buffer, shape[0])
		for e := range rows {
			b, err := l.get(p+strconv.Itoa(e)+"."+names[k]+".weight", shape[1:]...)
			if err != nil {
				return err
			}
			rows[e] = b
		}
		*s.dst = backend.Stack(rows, nil)
	}
	return nil
}
