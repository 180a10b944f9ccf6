package hf

// Layout is the one description of the weights a configuration has, in
// tpucc's layouts: the shape of each Weights field (Top) and of each layer's
// LayerWeights fields (Layers[i]), by field name; a field that is not in the
// map is nil, but for LMHead under tied embeddings, which is Embed. The loader fills exactly these fields with these shapes, and
// models.Abstract declares exactly these parameters.
type Layout struct {
	Top    map[string][]int64
	Layers []map[string][]int64
}

// Layout returns c's weight layout.
func (c *Config) Layout() Layout {
	V, H := int64(c.Vocab), int64(c.Hidden)
	top := map[string][]int64{"Embed": {V, H}, "Norm": {H}}
	if !c.TieEmbed {
		top["LMHead"] = []int64{V, H}
	}
	if p := c.PerLayer; p != nil {
		LP := int64(len(c.Layers) * p.Hidden)
		top["PerLayerEmbed"], top["PerLayerProj"], top["PerLayerProjNorm"] = []int64{int64(p.Vocab), LP}, []int64{LP, H}, []int64{int64(p.Hidden)}
	}
	out := Layout{Top: top, Layers: make([]map[string][]int64, len(c.Layers))}
	for i := range c.Layers {
		out.Layers[i] = c.layerShapes(i)
	}
	return out
}

// layerShapes are the shapes of layer i's weights, by LayerWeights field.
func (c *Config) layerShapes(i int) map[string][]int64 {
	l := c.Layers[i]
	H, D := int64(c.Hidden), int64(l.HeadDim)
	q, kv := int64(c.Heads)*D, int64(l.KVHeads)*D
	s := map[string][]int64{"Q": {q, H}, "O": {H, q}}
	opt := func(on bool, name string, shape ...int64) {
		if on {
			s[name] = shape
		}
	}
	olmo := c.Arch == "olmo2" // norms after attention and MLP only
	opt(!olmo, "AttnNorm", H)
	opt(!olmo, "MLPNorm", H)
	opt(olmo, "PostAttnNorm", H)
	opt(olmo, "PostMLPNorm", H)
	qn, kn := D, D // a q/k norm is over a head, or over the whole projection (OLMo 2)
	if c.QKNormFull {
		qn, kn = q, kv
	}
	opt(c.QKNorm, "QNorm", qn)
	opt(c.QKVBias, "QBias", q)
	opt(c.OBias, "OBias", H)
	if l.KVFrom < 0 {
		s["K"] = []int64{kv, H}
		opt(c.QKNorm, "KNorm", kn)
		opt(c.QKVBias, "KBias", kv)
		if !l.KEqV {
			s["V"] = []int64{kv, H}
			opt(c.QKVBias, "VBias", kv)
		}
	}
	if l.MLP {
		I := int64(l.Intermediate)
		s["Gate"], s["Up"], s["Down"] = []int64{I, H}, []int64{I, H}, []int64{H, I}
		opt(c.MLPBias, "GateBias", I)
		opt(c.MLPBias, "UpBias", I)
		opt(c.MLPBias, "DownBias", H)
	}
	if l.MoE {
		E, I := int64(c.MoE.Experts), int64(c.MoE.Intermediate)
		s["Router"] = []int64{E, H}
		s["GateExperts"], s["UpExperts"], s["DownExperts"] = []int64{E, I, H}, []int64{E, I, H}, []int64{E, H, I}
		if S := int64(c.MoE.Shared); S > 0 {
			s["SharedGate"], s["SharedUp"], s["SharedDown"], s["SharedExpertGate"] = []int64{S, H}, []int64{S, H}, []int64{H, S}, []int64{1, H}
		}
	}
	if c.Gemma() {
		c.gemmaShapes(s, l)
	}
	return s
}

// gemmaShapes adds the weights only Gemma layers have (the layer scalar:
// Gemma 4's).
func (c *Config) gemmaShapes(s map[string][]int64, l Layer) {
	H := int64(c.Hidden)
	for _, n := range []string{"PostAttnNorm", "PostMLPNorm"} {
		s[n] = []int64{H}
	}
	if c.Arch == "gemma4_text" {
		s["LayerScalar"] = []int64{1}
	}
	if l.MoE {
		s["RouterScale"], s["ExpertScale"] = []int64{H}, []int64{int64(c.MoE.Experts)}
		for _, n := range []string{"PostMLPNorm1", "PreMoENorm", "PostMoENorm"} {
			s[n] = []int64{H}
		}
	}
	if p := c.PerLayer; p != nil {
		P := int64(p.Hidden)
		s["PerLayerGate"], s["PerLayerProj"], s["PerLayerNorm"] = []int64{P, H}, []int64{H, P}, []int64{H}
	}
}

// hubName is the checkpoint's name of a Weights field.
func (c *Config) hubName(field string) string {
	switch field {
	case "LMHead":
		return c.headName()
	case "Embed":
		return c.prefix() + "embed_tokens.weight"
	case "Norm":
		return c.prefix() + "norm.weight"
	case "PerLayerEmbed":
		return c.prefix() + "embed_tokens_per_layer.weight"
	case "PerLayerProj":
		return c.prefix() + "per_layer_model_projection.weight"
	case "PerLayerProjNorm":
		return c.prefix() + "per_layer_projection_norm.weight"
	}
	panic("hf: no checkpoint name for Weights." + field)
}

// layerHubNames are the checkpoint's names of LayerWeights fields, after
// the layer's prefix, where one field is one tensor of every family.
var layerHubNames = map[string]string{
	"AttnNorm": "input_layernorm.weight", "PostAttnNorm": "post_attention_layernorm.weight",
	"PostMLPNorm": "post_feedforward_layernorm.weight",
	"Q":           "self_attn.q_proj.weight", "K": "self_attn.k_proj.weight", "V": "self_attn.v_proj.weight", "O": "self_attn.o_proj.weight",
	"QNorm": "self_attn.q_norm.weight", "KNorm": "self_attn.k_norm.weight",
	"QBias": "self_attn.q_proj.bias", "KBias": "self_attn.k_proj.bias", "VBias": "self_attn.v_proj.bias", "OBias": "self_attn.o_proj.bias",
	"Gate": "mlp.gate_proj.weight", "Up": "mlp.up_proj.weight", "Down": "mlp.down_proj.weight",
	"GateBias": "mlp.gate_proj.bias", "UpBias": "mlp.up_proj.bias", "DownBias": "mlp.down_proj.bias",
	"RouterScale": "router.scale", "ExpertScale": "router.per_expert_scale",
	"PostMLPNorm1": "post_feedforward_layernorm_1.weight", "PreMoENorm": "pre_feedforward_layernorm_2.weight",
	"PostMoENorm": "post_feedforward_layernorm_2.weight", "LayerScalar": "layer_scalar",
	"PerLayerGate": "per_layer_input_gate.weight", "PerLayerProj": "per_layer_projection.weight",
	"PerLayerNorm": "post_per_layer_input_norm.weight",
}

// layerHubName is the checkpoint's name of a LayerWeights field after the
// layer's prefix, or "" for a field the loader assembles from other tensors
// (stacked experts, Phi-3's fused projections).
func (c *Config) layerHubName(field string) string {
	block := "mlp." // the MoE block; Mixtral's has its own name
	if c.Arch == "mixtral" {
		block = "block_sparse_moe."
	}
	switch field {
	case "GateExperts", "UpExperts", "DownExperts":
		return ""
	case "Q", "K", "V", "Gate", "Up":
		if c.Arch == "phi3" {
			return ""
		}
	case "MLPNorm":
		if c.Gemma() {
			return "pre_feedforward_layernorm.weight"
		}
		return "post_attention_layernorm.weight"
	case "Router":
		if c.Gemma() {
			return "router.proj.weight"
		}
		return block + "gate.weight"
	case "SharedGate", "SharedUp", "SharedDown":
		return block + "shared_expert." + map[string]string{"SharedGate": "gate_proj", "SharedUp": "up_proj", "SharedDown": "down_proj"}[field] + ".weight"
	case "SharedExpertGate":
		return block + "shared_expert_gate.weight"
	}
	if n, ok := layerHubNames[field]; ok {
		return n
	}
	panic("hf: no checkpoint name for LayerWeights." + field)
}
