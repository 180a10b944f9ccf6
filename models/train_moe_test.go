package models

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/train"
)

// tinyMoE are MoE configurations with 6 experts (top-2) of hidden size 32 and
// expert width 24, sizes that no other dimension of their programs shares with
// a batch of 2 rows of 7 tokens (14).
var tinyMoE = map[string]string{
	"qwen3_moe": `{"model_type": "qwen3_moe", "vocab_size": 64, "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
"hidden_size": 32, "intermediate_size": 48,
"num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
"num_experts": 6, "num_experts_per_tok": 2, "moe_intermediate_size": 24, "norm_topk_prob": true,
"decoder_sparse_step": 1, "mlp_only_layers": [1], "tie_word_embeddings": false}`,
	"mixtral": `{"model_type": "mixtral", "vocab_size": 64, "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
"hidden_size": 32, "intermediate_size": 24,
"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
"num_local_experts": 6, "num_experts_per_tok": 2}`,
	"qwen2_moe": `{"model_type": "qwen2_moe", "vocab_size": 64, "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
"hidden_size": 32, "intermediate_size": 48,
"num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
"num_experts": 6, "num_experts_per_tok": 2, "moe_intermediate_size": 24,
"shared_expert_intermediate_size": 40, "mlp_only_layers": [1], "norm_topk_prob": false}`,
}

// TestTrainStepGrouped: the training step of a MoE model differentiates the
// grouped form. Each MoE layer's forward is three ragged_dots, and its
// backward one ragged_dot (the input's gradient) and one ragged_contract (the
// weights') per projection; Mixtral's two layers are one loop, whose reverse
// reads the forward's saved results (it would recompute the forward's three
// with RematLayers). No product anywhere in the step (forward or
// backward, loops included) has the experts', the tokens' and a feature dim
// (hidden or expert width), as every dense per-expert product (all experts on
// all tokens) and its gradients have. (The router's gradient, [14,6] through
// top_k's one-hot [14,2,6], has no feature dim.) The same with the routers'
// load-balancing loss (output_router_logits), whose sums read the routing
// probabilities and top-k indices beside the combine.
func TestTrainStepGrouped(t *testing.T) {
	const E, N, H, F = 6, 14, 32, 24
	for _, c := range []struct {
		fam               string
		ragged, contracts int
	}{{"qwen3_moe", 12, 6}, {"mixtral", 6, 3}, {"qwen2_moe", 12, 6}} {
		fam := c.fam
		t.Run(fam, func(t *testing.T) {
			m := abstractModel(t, tinyMoE[fam], ir.F32)
			checkGrouped(t, m, [4]int64{E, N, H, F}, c.ragged, c.contracts)
			m = abstractModel(t, withAux(tinyMoE[fam], 0.1), ir.F32)
			checkGrouped(t, m, [4]int64{E, N, H, F}, c.ragged, c.contracts)
		})
	}
}

// TestTrainStepGroupedGemma4 is TestTrainStepGrouped for Gemma 4's oracle
// model (8 experts top-2 of width 24, hidden 32, a MoE block in each of its
// 6 layers): 12 ragged_contracts (one per grouped product: the weights'
// gradients), and 24 ragged_dots (the forward's and the rows' gradients; the
// reverse loops read the forward's saved results).
func TestTrainStepGroupedGemma4(t *testing.T) {
	m, err := Load(filepath.Join(oracleDirs(t), "gemma4"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	checkGrouped(t, m, [4]int64{8, 14, 32, 24}, 24, 12)
}

// checkGrouped checks m's training step for batches of 2 rows of 7 tokens:
// ragged and contracts are its ragged_dots and ragged_contracts, and no
// dot_general operand or result has the dims experts, tokens and hidden or
// expert width (dims: E, N, H, F).
func checkGrouped(t *testing.T, m *Model, dims [4]int64, ragged, contracts int) {
	t.Helper()
	E, N, H, F := dims[0], dims[1], dims[2], dims[3]
	step, _, err := m.TrainStep(train.NewAdamW(1e-3), 2, 7, false)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[ir.Op]int{}
	var dense []string
	step.Entry().Body.Walk(func(in *ir.Instr) {
		counts[in.Op]++
		if in.Op != ir.OpDotGeneral {
			return
		}
		for _, v := range append(slices.Clone(in.Args), in.Results...) {
			if d := v.Type.Dims(); len(d) >= 3 && slices.Contains(d, E) && slices.Contains(d, N) && (slices.Contains(d, H) || slices.Contains(d, F)) {
				dense = append(dense, fmt.Sprintf("%s at %s: %s", in.Op, in.Pos, v.Type))
				return
			}
		}
	})
	if counts[ir.OpRaggedDot] != ragged || counts[ir.OpRaggedContract] != contracts {
		t.Errorf("%d ragged_dots and %d ragged_contracts; want %d and %d",
			counts[ir.OpRaggedDot], counts[ir.OpRaggedContract], ragged, contracts)
	}
	if len(dense) > 0 {
		t.Errorf("%d dense per-expert products, the first:\n%s", len(dense), dense[0])
	}
}

// TestTrainGroupedOnLLVM: two AdamW steps of a tiny Mixtral (random
// weights) on the llvm backend, whose step runs the grouped products as
// kernels (ragged_dot, ragged_contract), give the reference executor's
// losses within 1e-5 and weights within 0.1·lr for at least 99.9% of the
// elements (AdamW's first update, lr·g/(|g|+eps), gives an element whose
// gradient is rounding noise either sign).
func TestTrainGroupedOnLLVM(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a training step with clang")
	}
	m := randomModel(t, tinyMoE["mixtral"], 0.3)
	opt := train.NewAdamW(0.01)
	toks := make([]int32, 2*7)
	for i := range toks {
		toks[i] = int32((i*29 + 3) % 64)
	}
	run := func(name string) ([]float32, []*backend.Buffer) {
		tr, err := NewTrainer(m, opt, TrainOptions{Backend: name, Cache: engine.NewCache("", engine.CacheOptions{})})
		if err != nil {
			t.Fatal(err)
		}
		var losses []float32
		for range 2 {
			l, err := tr.Step(tensor.FromSlice(toks, 2, 7).Buffer(), nil)
			if err != nil {
				t.Fatal(err)
			}
			losses = append(losses, l)
		}
		return losses, tr.Weights()
	}
	gl, gw := run(backend.CPUDefault)
	wl, ww := run(backend.CPUFallback)
	for i := range wl {
		if math.Abs(float64(gl[i]-wl[i])) > 1e-5 {
			t.Errorf("step %d: loss %g, the reference's %g", i, gl[i], wl[i])
		}
	}
	n, bad := 0, 0
	for i := range ww {
		g, w := gw[i].Float32s(), ww[i].Float32s()
		for j := range w {
			n++
			if math.Abs(float64(g[j]-w[j])) > 0.1*opt.LR {
				bad++
			}
		}
	}
	if float64(bad) > 0.001*float64(n) {
		t.Errorf("%d of %d weights differ from the reference's by more than 0.1·lr", bad, n)
	}
}
