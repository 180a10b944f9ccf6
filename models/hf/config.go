// Package hf reads Hugging Face model directories: config.json of the
// architectures tpucc supports (qwen3, qwen3_moe, gemma4_text, gemma3_text,
// gemma2, llama, mistral, mixtral, phi3, granite, olmo2, qwen2, qwen2_moe)
// into a typed
// Config, and the checkpoint's tensors, named as the Hub stores them, into
// a Weights set whose experts are stacked into [E, ...] arrays.
//
// Every field of config.json is either honoured (it lands in Config and
// changes what the model computes), known to be inert at inference (token
// ids, training settings), or refused with an error naming it. A field that
// tpucc does not know is refused too: a new field could change the
// computation, and a wrong answer is worse than no answer.
package hf

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tpucc/tpucc/models/internal/jsonstrict"
	"github.com/tpucc/tpucc/models/safetensors"
)

// Config is a model's config.json, resolved per layer.
type Config struct {
	Arch         string // model_type: one of Architectures
	Vocab        int
	Hidden       int
	Heads        int // query heads of every layer
	Intermediate int // width of the dense MLP (per layer: Layer.Intermediate)
	RMSNormEps   float64
	Activation   string  // "silu" (Qwen3) or "gelu_pytorch_tanh" (Gemma 4)
	TieEmbed     bool    // lm_head is embed_tokens
	EmbedScale   float64 // token embeddings are multiplied by it (Gemma: sqrt(Hidden))
	MaxPositions int     // max_position_embeddings: positions beyond it are refused (generate)
	FinalSoftcap float64 // logits = c * tanh(logits / c); 0 means none
	AttnSoftcap  float64 // attention scores softcapped alike before the mask (Gemma 2); 0 means none
	// Granite's multipliers: each block's output is scaled by ResidualScale
	// before it is added to the residual stream, and the logits divided by
	// LogitScale; 0 means 1 (no scaling).
	ResidualScale, LogitScale float64
	QKNorm                    bool    // RMSNorm of each query and key head (Qwen3, Gemma 4)
	QKNormFull                bool    // with QKNorm: over the whole q and k projections instead (OLMo 2)
	QKVBias                   bool    // the q, k and v projections add a bias (Qwen2; attention_bias)
	OBias                     bool    // the output projection adds a bias (attention_bias of Llama and Qwen3)
	MLPBias                   bool    // the dense MLP's projections add biases (Llama's mlp_bias)
	VNorm                     bool    // RMSNorm without scale of each value head (Gemma 4)
	NormOffset                bool    // RMSNorm weights are offsets from 1: x·(1 + w) (Gemma 3)
	AttnScale                 float64 // scores are q·k times this (1/sqrt(head_dim), or 1 for Gemma 4)
	MoE                       *MoE    // nil for a dense model
	PerLayer                  *PerLayerInput
	Layers                    []Layer
	// Prefix is where the text model's tensors are named ("" is "model.";
	// the gemma4 wrapper's are under "model.language_model.", gemma3's
	// under "language_model.model.").
	Prefix string
	// Unloaded are the wrapper's config fields of encoders tpucc does not
	// load (vision_config, audio_config); their tensors are not read.
	Unloaded []string
	// TrainNoise are the fields, with their values ("attention_dropout
	// 0.1"), that make transformers' training random where tpucc's is not:
	// dropout and the router's input noise, which model.train() applies.
	// Inference ignores them; tpucc trains without them (tpucc train says so).
	TrainNoise []string
	// RouterAuxLoss is output_router_logits of Qwen3-MoE, Qwen2-MoE or
	// Mixtral: transformers' causal-LM loss then adds RouterAuxCoef
	// (router_aux_loss_coef, 0.001 when absent, as the three classes'
	// default) times the routers' load-balancing loss in training, and so
	// does tpucc's (models.TraceLoss). Inference ignores both.
	RouterAuxLoss bool
	RouterAuxCoef float64
	Wrapper       string   // the wrapper's model_type ("gemma4", "gemma3"), or ""
	skip          []string // the prefixes of those tensors
	head          string   // the untied head's tensor when a wrapper names it
}

// Layer is what one decoder layer computes.
type Layer struct {
	Sliding      bool // sliding-window attention, else full causal attention
	Window       int  // the window in tokens when Sliding
	HeadDim      int
	KVHeads      int
	KEqV         bool // values are the keys (Gemma 4 attention_k_eq_v, full layers)
	KVFrom       int  // the layer whose keys and values this one reuses, or -1
	Rope         Rope
	MLP          bool // a dense MLP (Qwen3-MoE: instead of the MoE; Gemma 4: beside it)
	MoE          bool // a MoE block (its sizes in Config.MoE)
	Intermediate int  // the dense MLP's width
}

// Rope is a layer's rotary position embedding in rotate-half form over the
// whole head: channel i < HeadDim/2 turns with channel i + HeadDim/2 by
// position × InvFreq()[i]. Frequencies past RotaryDim/2 are 0, so those
// channels are left alone (Gemma 4's proportional rope on full layers).
type Rope struct {
	Type      string // "default", "linear", "proportional", "llama3", "yarn", "longrope" or "dynamic" (default's frequencies)
	Theta     float64
	Factor    float64 // linear position scaling; 1 when none
	RotaryDim int     // channels that turn: HeadDim, or fewer for "proportional"
	HeadDim   int
	// Llama 3's frequency-dependent scaling ("llama3"): low_freq_factor,
	// high_freq_factor and original_max_position_embeddings. For "yarn",
	// LowFreq and HighFreq are beta_slow and beta_fast (the rotations that
	// bound the blend) and OrigMax its original_max_position_embeddings.
	LowFreq, HighFreq, OrigMax float64
	// Short and Attn are LongRoPE's ("longrope", Phi-3): the short_factor
	// dividing each frequency, and the attention factor scaling cos and sin.
	// (Its long_factor applies only past OrigMax, where positions are
	// refused: ParseConfig bounds MaxPositions by OrigMax.)
	Short []float64
	Attn  float64
}

// InvFreq returns the inverse frequencies 1 / (Theta^(2i/RotaryDim) ×
// Factor), RotaryDim/2 of them: a partial rope (Phi-3's
// partial_rotary_factor) turns only the head's first RotaryDim channels,
// in rotate-half pairs among themselves. "proportional" instead gives
// HeadDim/2, with exponents over HeadDim and 0 past RotaryDim/2. "llama3"
// divides by Factor only the long wavelengths (see llama3), "yarn" blends
// divided and kept ones (see yarn), "longrope" divides by Short.
func (r Rope) InvFreq() []float64 {
	dim := r.RotaryDim
	if r.Type == "proportional" {
		dim = r.HeadDim
	}
	out := make([]float64, dim/2)
	for i := range r.RotaryDim / 2 {
		inv := 1 / math.Pow(r.Theta, float64(2*i)/float64(dim))
		switch r.Type {
		case "llama3":
			out[i] = r.llama3(inv)
		case "yarn":
			out[i] = r.yarn(i, inv)
		case "longrope":
			out[i] = inv / r.Short[i]
		default:
			out[i] = inv / r.Factor
		}
	}
	return out
}

// Scale multiplies the rope's cos and sin tables: YaRN's attention factor
// 0.1·ln(Factor) + 1 (transformers' get_mscale), LongRoPE's Attn, 1 for the
// other types.
func (r Rope) Scale() float64 {
	switch {
	case r.Type == "longrope":
		return r.Attn
	case r.Type != "yarn" || r.Factor <= 1:
		return 1
	}
	return 0.1*math.Log(r.Factor) + 1
}

// yarn is YaRN's inverse frequency i, as transformers'
// _compute_yarn_parameters (truncate true): the frequencies that turn more
// than HighFreq (beta_fast) times over OrigMax positions are kept, those
// that turn less than LowFreq (beta_slow) times divided by Factor, and a
// linear ramp over the dimensions between blends the two.
func (r Rope) yarn(i int, inv float64) float64 {
	dim := float64(r.RotaryDim)
	corr := func(rotations float64) float64 {
		return dim * math.Log(r.OrigMax/(rotations*2*math.Pi)) / (2 * math.Log(r.Theta))
	}
	low, high := math.Max(math.Floor(corr(r.HighFreq)), 0), math.Min(math.Ceil(corr(r.LowFreq)), dim-1)
	if low == high {
		high += 0.001 // transformers' guard against a zero-width ramp
	}
	ramp := math.Min(math.Max((float64(i)-low)/(high-low), 0), 1)
	return inv/r.Factor*ramp + inv*(1-ramp)
}

// llama3 is Llama 3.1's rescaling of one inverse frequency, as
// transformers' _compute_llama3_parameters: wavelengths shorter than
// OrigMax/HighFreq are kept, those longer than OrigMax/LowFreq are divided
// by Factor, and the ones between are interpolated.
func (r Rope) llama3(inv float64) float64 {
	wavelen := 2 * math.Pi / inv
	switch {
	case wavelen < r.OrigMax/r.HighFreq:
		return inv
	case wavelen > r.OrigMax/r.LowFreq:
		return inv / r.Factor
	}
	smooth := (r.OrigMax/wavelen - r.LowFreq) / (r.HighFreq - r.LowFreq)
	return (1-smooth)*inv/r.Factor + smooth*inv
}

// MoE describes the mixture-of-experts blocks.
type MoE struct {
	Experts      int
	TopK         int
	Intermediate int // each expert's width
	// NormTopK renormalises the top-k routing weights to sum to 1.
	NormTopK bool
	// Shared is the width of an always-on expert beside the routed ones,
	// its output scaled by sigmoid of a [1, hidden] gate (Qwen2-MoE); 0 is
	// none.
	Shared int
	// Router is "softmax" (Qwen3-MoE: softmax of the gate's logits) or
	// "gemma4" (RMSNorm without scale, times scale/sqrt(hidden), a projection,
	// softmax, top-k renormalised, times per_expert_scale).
	Router string
}

// PerLayerInput is Gemma 4's per-layer embeddings (PLE).
type PerLayerInput struct {
	Vocab  int // vocab_size_per_layer_input
	Hidden int // hidden_size_per_layer_input
}

// ConfigFile is the name of a model directory's configuration.
const ConfigFile = "config.json"

// maxConfig bounds config.json; real ones are a few kilobytes.
const maxConfig = 4 << 20

// LoadConfig reads dir/config.json. Errors name the file and the field.
func LoadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, ConfigFile)
	data, err := safetensors.ReadBounded(path, maxConfig)
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return c, nil
}

// ParseConfig reads config.json. Errors name the field.
func ParseConfig(data []byte) (*Config, error) {
	f := &fields{used: map[string]bool{}}
	if err := jsonstrict.Decode(data, &f.raw); err != nil {
		return nil, err
	}
	if f.raw == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	arch := f.str("model_type", "")
	read := reader(arch)
	switch {
	case arch == "":
		return nil, fmt.Errorf("field \"model_type\": missing")
	case read == nil:
		return nil, fmt.Errorf("field \"model_type\": architecture %q is not supported (tpucc loads %s)", arch, SupportedText())
	}
	c := read(f, arch)
	if c != nil {
		for _, l := range c.Layers {
			if l.Rope.Type == "longrope" && int(l.Rope.OrigMax) < c.MaxPositions {
				// transformers switches every position to the long factors
				// past the original context; tpucc refuses those positions.
				c.MaxPositions = int(l.Rope.OrigMax)
			}
		}
		trainNoise(f, c, "attention_dropout")
		// Qwen3-MoE, Qwen2-MoE and Mixtral add the auxiliary loss;
		// elsewhere the field changes nothing (Gemma 4's MoE has none).
		aux := f.bool("output_router_logits", false)
		c.RouterAuxLoss = aux && slices.Contains([]string{"qwen3_moe", "qwen2_moe", "mixtral"}, c.Arch)
		if c.RouterAuxLoss {
			c.RouterAuxCoef = f.float("router_aux_loss_coef", 0.001)
		}
	}
	f.leftover(arch)
	if f.err != nil {
		return nil, f.err
	}
	return c, nil
}

// trainNoise reads a probability or noise level that only training
// applies, noting it in c.TrainNoise when it is not 0.
func trainNoise(f *fields, c *Config, key string) {
	if p := f.float(key, 0); p != 0 {
		c.TrainNoise = append(c.TrainNoise, fmt.Sprintf("%s %v", key, p))
	}
}

// Architectures are the model_type values of the text models ParseConfig
// loads, in the order messages and help name them; Wrappers are the
// multimodal wrappers whose text model it loads. These are the one list:
// the loader's dispatch, its refusal and generate's help derive from them.
var (
	Architectures = []string{"qwen3", "qwen3_moe", "qwen2", "qwen2_moe", "llama", "mistral", "mixtral", "phi3", "granite", "olmo2", "gemma2", "gemma3_text", "gemma4_text"}
	Wrappers      = []string{"gemma3", "gemma4"}
)

// reader is the function that reads a config of model_type arch, nil for
// an architecture not loaded; a test checks that it knows exactly
// Architectures and Wrappers. (A switch, not a map: readWrapper reads its
// text model through ParseConfig's dispatch.)
func reader(arch string) func(f *fields, arch string) *Config {
	switch arch {
	case "qwen3", "qwen3_moe", "qwen2", "qwen2_moe":
		return qwen3
	case "llama", "mistral", "mixtral", "phi3", "granite", "olmo2":
		return llama
	case "gemma4_text":
		return func(f *fields, _ string) *Config { return gemma4(f) }
	case "gemma3_text", "gemma2":
		return gemma3
	case "gemma4", "gemma3":
		return readWrapper
	}
	return nil
}

// SupportedText names what ParseConfig loads, as a phrase: "qwen3, ...,
// gemma4_text and the text models of gemma3 and gemma4".
func SupportedText() string {
	return strings.Join(Architectures, ", ") + " and the text models of " + strings.Join(Wrappers, " and ")
}

// Gemma says the decoder layers are Gemma's (post-norms around attention
// and MLP), of Gemma 2, 3 or 4.
func (c *Config) Gemma() bool {
	return c.Arch == "gemma4_text" || c.Arch == "gemma3_text" || c.Arch == "gemma2"
}

// base reads the fields every supported architecture shares.
func base(f *fields, arch string) *Config {
	c := &Config{
		Arch:         arch,
		Vocab:        f.need("vocab_size"),
		Hidden:       f.need("hidden_size"),
		Heads:        f.need("num_attention_heads"),
		Intermediate: f.need("intermediate_size"),
		RMSNormEps:   f.float("rms_norm_eps", defaultNormEps(arch)),
		MaxPositions: f.need("max_position_embeddings"),
	}
	if !(c.RMSNormEps > 0) {
		f.fail("rms_norm_eps", "%v is not positive", c.RMSNormEps)
	}
	return c
}

// defaultNormEps is rms_norm_eps when config.json leaves it out: the
// configuration class's default, 1e-5 for MixtralConfig, Phi3Config and
// Olmo2Config and 1e-6 for the others (a Phi-3 config without it was
// computed with 1e-6: logits 2e-4 of the largest from transformers').
func defaultNormEps(arch string) float64 {
	switch arch {
	case "mixtral", "phi3", "olmo2":
		return 1e-5
	}
	return 1e-6
}

// headDim is head_dim, or when absent the configuration class's default:
// 128 for Qwen3Config, hidden/heads for the others (a class without the
// field reads it with getattr(config, "head_dim", hidden // heads)).
func headDim(f *fields, c *Config) int {
	if c.Arch == "qwen3" {
		return evenHeadDim(f, f.int("head_dim", 128))
	}
	if c.Heads > 0 && c.Hidden%c.Heads != 0 && !f.has("head_dim") {
		f.fail("head_dim", "missing, and hidden_size %d is not a multiple of num_attention_heads %d", c.Hidden, c.Heads)
	}
	def := 0
	if c.Heads > 0 {
		def = c.Hidden / c.Heads
	}
	return evenHeadDim(f, f.int("head_dim", def))
}

// evenHeadDim refuses a head_dim that rotate-half rope cannot split.
func evenHeadDim(f *fields, d int) int {
	if d == 0 || d%2 != 0 {
		f.fail("head_dim", "%d is not a positive even number", d)
	}
	return d
}

// kvHeads reads num_key_value_heads (default: the query heads), which must
// divide the query heads for grouped-query attention.
func kvHeads(f *fields, key string, heads, def int) int {
	n := f.int(key, def)
	if n == 0 || heads%n != 0 {
		f.fail(key, "%d does not divide num_attention_heads %d", n, heads)
	}
	return n
}

// ropeFrom resolves one rope_parameters object (or the legacy rope_theta +
// rope_scaling pair, already merged into it) for heads of headDim channels;
// maxPos is max_position_embeddings, the original context of llama3, yarn
// and longrope rope that name none (transformers' standardize_rope_params);
// partialOK says the family turns only a partial_rotary_factor of each head
// (rotaryDim).
func ropeFrom(f *fields, key string, raw map[string]json.RawMessage, headDim, maxPos int, partialOK bool) Rope {
	sub := &fields{raw: raw, used: map[string]bool{}}
	// transformers' default_theta when a config names none.
	r := Rope{Type: sub.str("rope_type", ""), Theta: sub.float("rope_theta", 10000), Factor: 1}
	if t := sub.str("type", ""); r.Type == "" {
		r.Type = t // the legacy spelling
	}
	if r.Type == "" {
		r.Type = "default"
	}
	if !slices.Contains(ropeTypes, r.Type) {
		f.fail(key, "rope type %q is not supported (tpucc computes %s)", r.Type, strings.Join(ropeTypes, ", "))
		return r
	}
	r.HeadDim = headDim
	r.RotaryDim = rotaryDim(f, key, r.Type, sub.float("partial_rotary_factor", 1), headDim, partialOK)
	switch r.Type {
	case "default":
	case "linear":
		r.Factor = sub.float("factor", 0)
	case "proportional":
		r.Factor = sub.float("factor", 1)
	case "llama3":
		r.Factor = sub.float("factor", 0)
		r.LowFreq, r.HighFreq = sub.float("low_freq_factor", 0), sub.float("high_freq_factor", 0)
		r.OrigMax = sub.float("original_max_position_embeddings", float64(maxPos))
		if !(r.LowFreq > 0 && r.HighFreq > r.LowFreq && r.OrigMax > 0) {
			f.fail(key, "llama3 rope needs 0 < low_freq_factor < high_freq_factor and a positive original_max_position_embeddings")
		}
	case "yarn":
		yarnFrom(f, key, sub, &r, maxPos)
	case "longrope":
		longropeFrom(f, key, sub, &r, maxPos)
	case "dynamic":
		// Dynamic NTK scaling raises theta only for sequences longer than
		// max_position_embeddings, which generate and train refuse; within
		// it transformers' frequencies are the default ones.
		if !(sub.float("factor", 0) > 0) {
			f.fail(key, "factor is missing or not positive")
		}
	}
	switch {
	case !(r.Theta > 0):
		f.fail(key, "rope_theta is not positive")
	case !(r.Factor > 0):
		f.fail(key, "factor is missing or not positive")
	}
	if sub.err != nil {
		f.fail(key, "%v", sub.err)
	}
	for _, k := range sortedKeys(raw) {
		if !sub.used[k] {
			f.fail(key, "rope parameter %q is not supported for rope type %q", k, r.Type)
			break
		}
	}
	return r
}

// ropeTypes are the rope types ropeFrom computes.
var ropeTypes = []string{"default", "linear", "proportional", "llama3", "yarn", "longrope", "dynamic"}

// rotaryDim is the channels of a head that turn: for proportional rope
// int(p × head_dim // 2) pairs (none allowed), as transformers; for a
// family whose attention turns only the first channels (partialOK: Phi-3's
// apply_rotary_pos_emb) int(p × head_dim), which must be even; else the
// whole head, and a factor below 1 is refused (Qwen3's, Llama's and Gemma's
// attention rotate whole heads: transformers would fail there).
func rotaryDim(f *fields, key, typ string, p float64, headDim int, partialOK bool) int {
	switch {
	case !(p > 0 && p <= 1):
		f.fail(key, "partial_rotary_factor %v is not in (0, 1]", p)
	case typ == "proportional":
		return 2 * int(p*float64(headDim)/2)
	case p == 1:
	case !partialOK:
		f.fail(key, "partial_rotary_factor %v is not supported for rope type %q", p, typ)
	default:
		if d := int(p * float64(headDim)); d > 0 && d%2 == 0 {
			return d
		}
		f.fail(key, "partial_rotary_factor %v turns int(%v × %d) channels, not a positive even number", p, p, headDim)
	}
	return headDim
}

// yarnFrom reads YaRN's parameters: factor and
// original_max_position_embeddings, beta_fast (32) and beta_slow (1) as
// transformers defaults them; truncate only true, and no attention_factor,
// mscale or mscale_all_dim (DeepSeek's), which the unread-parameter rule
// refuses.
func yarnFrom(f *fields, key string, sub *fields, r *Rope, maxPos int) {
	r.Factor = sub.float("factor", 0)
	r.OrigMax = sub.float("original_max_position_embeddings", float64(maxPos))
	r.HighFreq, r.LowFreq = sub.float("beta_fast", 32), sub.float("beta_slow", 1)
	if !sub.bool("truncate", true) {
		f.fail(key, "yarn rope with truncate false is not supported")
	}
	if !(r.OrigMax > 0 && r.HighFreq > 0 && r.LowFreq > 0) {
		f.fail(key, "yarn rope needs a positive original_max_position_embeddings, beta_fast and beta_slow")
	}
}

// longropeFrom reads LongRoPE's parameters (Phi-3's 128k context):
// short_factor and long_factor, head_dim/2 numbers each, the original
// context (max_position_embeddings when absent), factor (max positions over
// the original context when absent) and attention_factor (when absent
// sqrt(1 + ln factor / ln original), or 1 for a factor of at most 1), as
// transformers' _compute_longrope_parameters.
func longropeFrom(f *fields, key string, sub *fields, r *Rope, maxPos int) {
	r.OrigMax = sub.float("original_max_position_embeddings", float64(maxPos))
	if !(r.OrigMax > 1) {
		f.fail(key, "longrope needs an original_max_position_embeddings above 1")
		return
	}
	r.Factor = sub.float("factor", float64(maxPos)/r.OrigMax)
	r.Short = sub.floats("short_factor")
	long := sub.floats("long_factor")
	if len(r.Short) != r.RotaryDim/2 || len(long) != r.RotaryDim/2 || slices.ContainsFunc(r.Short, func(x float64) bool { return !(x > 0) }) {
		f.fail(key, "longrope needs short_factor and long_factor of rotary_dim/2 = %d positive numbers", r.RotaryDim/2)
		r.Short = nil
		return
	}
	r.Attn = sub.float("attention_factor", 0)
	switch {
	case r.Attn != 0:
	case r.Factor <= 1:
		r.Attn = 1
	default:
		r.Attn = math.Sqrt(1 + math.Log(r.Factor)/math.Log(r.OrigMax))
	}
	if !(r.Attn > 0) {
		f.fail(key, "attention_factor %v is not positive", r.Attn)
	}
}

// rawObject decodes a JSON object value; nil when absent.
func rawObject(f *fields, key string) map[string]json.RawMessage {
	v := f.take(key)
	if v == nil {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil || m == nil {
		f.fail(key, "%s is not an object", v)
	}
	return m
}

func embedScale(hidden int) float64 { return math.Sqrt(float64(hidden)) }

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
