package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
)

// bf16Logits runs the prompts of dir's oracle through the prefill of a
// generator on backend (f32 products when f32) and returns every prompt
// token's logits, as checkLogits reads them, with the rows' padding.
func bf16Logits(t *testing.T, dir, backend string, f32 bool) ([]float32, []int, int, int) {
	t.Helper()
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	m.F32Products = f32
	g, err := NewGenerator(m, Options{Backend: backend, AllLogits: true, Cache: engine.NewCache("", engine.CacheOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	o := readOracle(t, dir)
	res, err := g.Generate(Request{Prompts: o.Prompts, MaxNew: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := res.PromptLogits.Shape()
	return res.PromptLogits.Float32s(), res.Pad, int(s[1]), int(s[2])
}

// worstOf is the largest difference between a and b over the oracle's
// prompt tokens (both laid out as bf16Logits returns them), relative to
// the largest oracle logit.
func worstOf(o oracle, a, b []float32, pad []int, T, V int) float64 {
	worst, scale := 0.0, 0.0
	for bi, want := range o.Logits {
		for p, row := range want {
			for v, x := range row {
				at := (bi*T+pad[bi]+p)*V + v
				scale = math.Max(scale, math.Abs(x))
				worst = math.Max(worst, math.Abs(float64(a[at]-b[at])))
			}
		}
	}
	return worst / scale
}

// TestBF16Products: a bf16 checkpoint (qwen3_moe_bf16: its attention and
// shared-expert projections multiply in bf16; the router and the experts
// stay f32) with the default products, bf16 activations times bf16
// weights summed in f32.
//
//   - The llvm backend (vdpbf16ps) against the reference executor running
//     the same program (each activation rounded to bf16 where the IR says,
//     f64 sums): within 2e-3 of the largest logit (measured 6e-4). Both
//     round the same f32 activations to bf16, but an activation that the
//     two backends compute an f32 ulp apart can round to neighbouring bf16
//     values (2^-8 apart), which the later layers carry: the bound allows a
//     few such flips and is far below what bf16 rounding itself moves.
//   - The products are bf16: the logits differ from the f32 products'
//     (F32Products) by more than 1e-4 of the largest, the bound within
//     which TestAgainstTransformers holds the f32 products to transformers.
//
// How far bf16 products move from f32 ones is TestBF16ProductsNear's: the
// oracle's weights (standard deviation 0.3, sharp attention) amplify any
// rounding, and move its logits by 0.76 of the largest.
func TestBF16Products(t *testing.T) {
	dir := oracleDirs(t) + "/qwen3_moe_bf16"
	o := readOracle(t, dir)
	got, pad, T, V := bf16Logits(t, dir, "llvm", false)
	ref, _, _, _ := bf16Logits(t, dir, "reference", false)
	f32, _, _, _ := bf16Logits(t, dir, "llvm", true)
	if d := worstOf(o, got, ref, pad, T, V); d > 2e-3 {
		t.Errorf("bf16 products: llvm and the reference executor differ by %.3g of the largest logit (bound 2e-3)", d)
	}
	if d := worstOf(o, got, f32, pad, T, V); d <= 1e-4 {
		t.Errorf("bf16 products: within %.3g of the f32 products' logits: not rounded to bf16", d)
	}
}

// TestBF16ProductsNear: a Qwen3 with bf16 weights at transformers' scale
// (matrices of standard deviation 0.02, norms around 1, as bench/models
// draws them), its prompt logits with bf16 products against its f32
// products: within 1e-2 of the largest logit. Rounding an activation to
// bf16 moves it by at most 2^-9 of itself, so a product by at most 2^-9 of
// Σ|x·w|; over the two layers' seven products each and the lm head that
// is a few 2^-9 (0.2% each) of the logits' scale where the sums do not
// cancel; measured 0.17%, the bound leaves a factor of six.
func TestBF16ProductsNear(t *testing.T) {
	const cfg = `{"model_type": "qwen3", "vocab_size": 256, "hidden_size": 128,
"intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
"head_dim": 32, "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 128,
"tie_word_embeddings": false}`
	logits := func(f32 bool) []float32 {
		m := abstractModel(t, cfg, ir.BF16)
		rng := rand.New(rand.NewPCG(7, 8))
		for i := range m.Params {
			b := backend.New(m.Params[i].Type)
			base, width := 0.0, 0.02*math.Sqrt(3)
			if len(m.Params[i].Type.Dims()) == 1 {
				base, width = 1, 0.1
			}
			vals := make([]float64, b.Len())
			for j := range vals {
				vals[j] = base + width*(2*rng.Float64()-1)
			}
			b.WriteFloat64s(0, vals)
			m.Params[i].Buffer = b
		}
		m.F32Products = f32
		g, err := NewGenerator(m, Options{AllLogits: true, Cache: engine.NewCache("", engine.CacheOptions{})})
		if err != nil {
			t.Fatal(err)
		}
		prompt := make([]int32, 40)
		for i := range prompt {
			prompt[i] = int32(rng.IntN(256))
		}
		res, err := g.Generate(Request{Prompts: [][]int32{prompt}, MaxNew: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res.PromptLogits.Float32s()
	}
	bf, f := logits(false), logits(true)
	worst, scale := 0.0, 0.0
	for i := range f {
		scale = math.Max(scale, math.Abs(float64(f[i])))
		worst = math.Max(worst, math.Abs(float64(bf[i]-f[i])))
	}
	if worst > 1e-2*scale || worst == 0 {
		t.Errorf("bf16 products' logits %.3g of the largest (%.3g) from the f32 products' (bound 1e-2, and not 0)", worst/scale, scale)
	}
	t.Logf("bf16 against f32 products: %.3g of the largest logit", worst/scale)
}
