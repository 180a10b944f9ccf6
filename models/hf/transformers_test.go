package hf

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// hfPython is the interpreter of `make venv-hf` (torch and transformers).
const hfPython = "../../.venv-hf/bin/python"

// expectLayer is what transformers' modules compute for one layer.
type expectLayer struct {
	HeadDim       int       `json:"head_dim"`
	KVHeads       int       `json:"kv_heads"`
	SlidingWindow int       `json:"sliding_window"`
	MoE           bool      `json:"moe"`
	Intermediate  int       `json:"intermediate"`
	Scaling       float64   `json:"scaling"`
	KVShared      bool      `json:"kv_shared"`
	KEqV          bool      `json:"k_eq_v"`
	InvFreq       []float64 `json:"inv_freq"`
	RopeScale     *float64  `json:"rope_scale"` // the cos and sin tables' factor, where recorded
	QKNorm        bool      `json:"qk_norm"`
	QKNormFull    bool      `json:"qk_norm_full"`
	QKVBias       bool      `json:"qkv_bias"`
	OBias         bool      `json:"o_bias"`
	MLPBias       bool      `json:"mlp_bias"`
}

type expectModel struct {
	DType       string        `json:"dtype"`
	NormEps     float64       `json:"rms_norm_eps"`
	Tied        bool          `json:"tied"`
	EmbedScale  float64       `json:"embed_scale"`
	Softcap     float64       `json:"softcap"`
	AttnSoftcap float64       `json:"attn_softcap"`
	Residual    float64       `json:"residual_scale"`
	Logits      float64       `json:"logit_scale"`
	Experts     int           `json:"experts"`
	TopK        int           `json:"top_k"`
	NormTopK    bool          `json:"norm_topk"`
	Layers      []expectLayer `json:"layers"`
}

// TestAgainstTransformers loads checkpoints that transformers itself saved
// (tools/models/hfmodels.py: Qwen3 with sliding layers and linear rope,
// Qwen3-MoE in bf16 in five shards with a dense layer, Gemma 4 with its MoE block, keys as
// values, KV sharing, a double-wide MLP and per-layer inputs; Llama with
// llama3 rope and every bias, Mistral in bf16 with a window, Qwen2, Mixtral
// in bf16, Gemma 3 in bf16 with its sliding pattern, Phi-3 in bf16 with its
// fused projections, Gemma 2 with its softcaps, Granite with its
// multipliers, OLMo 2 with its whole-projection q/k norms; and configs
// that leave out every field equal to their class's default: Qwen3,
// Phi-3, Mixtral, OLMo 2, and Qwen2-MoE with sliding layers but no
// layer_types; Qwen3 with YaRN rope, Phi-3 with LongRoPE) and requires
// hf.Config to say per layer what transformers' modules compute, and the
// norms' epsilon. Without .venv-hf the test is skipped, except under CI,
// where it fails.
func TestAgainstTransformers(t *testing.T) {
	if _, err := os.Stat(hfPython); err != nil {
		msg := "transformers is not installed (" + hfPython + "): run `make venv-hf` at the repository root"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; under CI this test never skips")
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	if out, err := exec.Command(hfPython, "../../tools/models/hfmodels.py", dir).CombinedOutput(); err != nil {
		t.Fatalf("hfmodels.py: %v\n%s", err, out)
	}
	for _, name := range []string{"qwen3", "qwen3_moe", "gemma4", "llama", "mistral", "qwen2", "mixtral", "gemma3", "phi3", "gemma2", "granite", "olmo2", "qwen2_moe",
		"qwen3_defaults", "phi3_defaults", "mixtral_defaults", "olmo2_defaults", "qwen2_moe_defaults", "qwen3_yarn", "phi3_longrope"} {
		t.Run(name, func(t *testing.T) {
			var want expectModel
			data, err := os.ReadFile(filepath.Join(dir, name, "expect.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, name, "model.safetensors.index.json")); (err == nil) != (name == "qwen3_moe") {
				t.Errorf("only qwen3_moe should be sharded: %v", err)
			}
			c, w, err := Load(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			checkModel(t, c, w, want)
		})
	}
}

func checkModel(t *testing.T, c *Config, w *Weights, want expectModel) {
	dtype := map[string]ir.DType{"float32": ir.F32, "bfloat16": ir.BF16}[want.DType]
	if w.DType != dtype || c.TieEmbed != want.Tied || (w.LMHead == w.Embed) != want.Tied {
		t.Errorf("dtype %s tied %v, want %s %v", w.DType, c.TieEmbed, want.DType, want.Tied)
	}
	if c.RMSNormEps != want.NormEps {
		t.Errorf("rms_norm_eps %g, want %g", c.RMSNormEps, want.NormEps)
	}
	if math.Abs(c.EmbedScale-want.EmbedScale) > 1e-12 || c.FinalSoftcap != want.Softcap || c.AttnSoftcap != want.AttnSoftcap {
		t.Errorf("embed scale %v softcaps %v %v, want %v %v %v", c.EmbedScale, c.FinalSoftcap, c.AttnSoftcap, want.EmbedScale, want.Softcap, want.AttnSoftcap)
	}
	// 0 in Config means no scaling, which transformers writes as 1.
	unit := func(x float64) float64 {
		if x == 0 {
			return 1
		}
		return x
	}
	if unit(c.ResidualScale) != want.Residual || unit(c.LogitScale) != want.Logits {
		t.Errorf("residual scale %v logit scale %v, want %v %v", c.ResidualScale, c.LogitScale, want.Residual, want.Logits)
	}
	if want.Experts > 0 && (c.MoE == nil || c.MoE.Experts != want.Experts || c.MoE.TopK != want.TopK || c.MoE.NormTopK != want.NormTopK) {
		t.Errorf("MoE %+v, want %d experts top-%d norm %v", c.MoE, want.Experts, want.TopK, want.NormTopK)
	}
	// A bf16 model's rotary frequencies are a bf16 buffer in transformers.
	tol := map[ir.DType]float64{ir.F32: 1e-6, ir.BF16: 4e-3}[dtype]
	for i, l := range c.Layers {
		e := want.Layers[i]
		dense := 0
		if l.MLP {
			dense = l.Intermediate
		}
		if l.HeadDim != e.HeadDim || l.KVHeads != e.KVHeads || l.Window != e.SlidingWindow || l.Sliding != (e.SlidingWindow > 0) ||
			l.MoE != e.MoE || dense != e.Intermediate || (l.KVFrom >= 0) != e.KVShared || l.KEqV != e.KEqV {
			t.Errorf("layer %d: %+v\nwant %+v", i, l, e)
		}
		if c.QKNorm != e.QKNorm || c.QKNormFull != e.QKNormFull || c.QKVBias != e.QKVBias || c.OBias != e.OBias || l.MLP && c.MLPBias != e.MLPBias {
			t.Errorf("layer %d: q/k norm %v, biases qkv %v o %v mlp %v; want %v, %v %v %v", i, c.QKNorm, c.QKVBias, c.OBias, c.MLPBias,
				e.QKNorm, e.QKVBias, e.OBias, e.MLPBias)
		}
		if got := c.AttnScale; math.Abs(got-e.Scaling) > 1e-12 {
			t.Errorf("layer %d: attention scale %v, want %v", i, got, e.Scaling)
		}
		if e.RopeScale != nil && math.Abs(l.Rope.Scale()-*e.RopeScale) > 1e-12 {
			t.Errorf("layer %d: rope scale %v, want %v", i, l.Rope.Scale(), *e.RopeScale)
		}
		inv := l.Rope.InvFreq()
		if len(inv) != len(e.InvFreq) {
			t.Errorf("layer %d: %d rotary frequencies, want %d", i, len(inv), len(e.InvFreq))
			continue
		}
		for j := range inv {
			if math.Abs(inv[j]-e.InvFreq[j]) > tol*math.Abs(e.InvFreq[j]) {
				t.Errorf("layer %d: inv_freq[%d] = %v, want %v", i, j, inv[j], e.InvFreq[j])
			}
		}
	}
	// The weights the layers say they have are there.
	for i, l := range c.Layers {
		lw := w.Layers[i]
		if (lw.GateExperts != nil) != l.MoE || (lw.Gate != nil) != l.MLP || (lw.K != nil) != (l.KVFrom < 0) || (lw.V != nil) != (l.KVFrom < 0 && !l.KEqV) ||
			(lw.QNorm != nil) != c.QKNorm || (lw.QBias != nil) != c.QKVBias || (lw.OBias != nil) != c.OBias || (lw.DownBias != nil) != (l.MLP && c.MLPBias) {
			t.Errorf("layer %d: weights do not match the layer: %+v", i, l)
		}
	}
}
