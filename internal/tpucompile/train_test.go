package tpucompile

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/target"
	"github.com/tpucc/tpucc/train"
)

// tinyDense is a 2-layer Qwen3 of hidden size 16: its step compiles in seconds.
const tinyDense = `{"model_type": "qwen3", "vocab_size": 32, "hidden_size": 16, "intermediate_size": 24,
"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
"rope_theta": 10000.0, "rms_norm_eps": 1e-6, "tie_word_embeddings": false, "max_position_embeddings": 1024}`

// TestTrainStepForTPU: the dense training step (loss, gradient and AdamW
// update, the parameters and state donated) compiles for one chip of v6e:2x2
// through libtpu from Go, and the report's lines are the step's: each kind's
// bytes from the types (2 layers: 6512 weights, 26048 bytes of f32; AdamW's
// two states twice that; savedLine's stacks), libtpu's layout, and the
// verdict from its total.
func TestTrainStepForTPU(t *testing.T) {
	c, err := hf.ParseConfig([]byte(tinyDense))
	if err != nil {
		t.Fatal(err)
	}
	m, err := models.Abstract(c, ir.BF16)
	if err != nil {
		t.Fatal(err)
	}
	text, err := m.TrainReport(train.NewAdamW(0.01), 2, 6, target.V6e, "v6e:2x2")
	if err != nil {
		t.Fatalf("the step does not compile for v6e: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	want := []string{
		"training step: adamw, batch 2 × 6 tokens, f32, on one chip of v6e:2x2 (tpu-v6e)",
		"parameters                        26048 bytes    25.4 KiB  trained, f32, donated: updated in place",
		"optimizer state                   52096 bytes    50.9 KiB  exp_avg and exp_avg_sq per parameter, donated",
		"gradients                         26048 bytes    25.4 KiB  one per trained parameter, f32: computed within the step",
		savedLine + "stacked per layer: within the temporaries",
	}
	if len(lines) != 9 {
		t.Fatalf("the report has %d lines, want 9:\n%s", len(lines), text)
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d:\n%s\nwant\n%s", i+1, lines[i], w)
		}
	}
	temp := regexp.MustCompile(`^activations \+ gradients +(\d+) bytes .* libtpu's temporaries`).FindStringSubmatch(lines[5])
	if lines[6] != "batch                                48 bytes  0.0469 KiB  the tokens, i32" || temp == nil {
		t.Errorf("lines 6 and 7:\n%s\n%s", lines[5], lines[6])
	}
	nums := regexp.MustCompile(`^compiled: arguments (\d+) \+ outputs (\d+) - aliased (\d+) \+ temporaries (\d+) \+ code (\d+) = (\d+) bytes \(.*\) of 32 GiB HBM$`).FindStringSubmatch(lines[7])
	if nums == nil {
		t.Fatalf("line 8: %s", lines[7])
	}
	n := make([]int64, 6)
	for i := range n {
		n[i], _ = strconv.ParseInt(nums[i+1], 10, 64)
	}
	// Donated: every output but the loss reuses an argument, and the
	// arguments hold at least the parameters, the state and the batch.
	if n[0]+n[1]-n[2]+n[3]+n[4] != n[5] || n[2] < 26048+52096 || n[0] < 26048+52096+48 || nums[4] != temp[1] {
		t.Errorf("line 8 does not add up: %s", lines[7])
	}
	if wantLast := fmt.Sprintf("the step fits one tpu-v6e chip: %s of 32 GiB", strings.TrimSuffix(strings.SplitN(lines[7], "bytes (", 2)[1], ") of 32 GiB HBM")); lines[8] != wantLast {
		t.Errorf("line 9:\n%s\nwant\n%s", lines[8], wantLast)
	}
}

// savedLine starts the report's line of what the layer loop saves for its
// reverse, f32 stacked over the 2 layers, batch 2 × 6 tokens (hidden 16,
// MLP 24, 4 query heads and 2 key-value heads of 8): the loop's counter
// (8 bytes) and each layer's input (192 floats); the residuals of its
// backward: the MLP's gate and up projections, the gate's silu and the
// product of the two (4 × 288 floats), the two norms' outputs and the
// attention's residual sum (3 × 192), the attention's output (384), the
// query and key projections before their norms (384 + 192), the queries,
// keys and values as the attention's products read them (384 + 192 + 192),
// and the probabilities (2 × 2 × 2 × 6 × 6 = 288): 3936 floats a layer,
// 2 × 3936 × 4 + 8 = 31496 bytes.
const savedLine = "saved by layer loops              31496 bytes    30.8 KiB  each layer's input and the intermediates its backward reads, "

// TestTrainStepSplitForTPU: the step split over dp=2,tp=2 as training on
// that mesh splits it (without FSDP, and with) compiles for the four chips
// of v6e:2x2 through libtpu, and the report gives one chip's share of each
// kind from the shardings. Of the tiny model's 6512 weights every matrix
// is split in two over tp (its Megatron dimension; 16, 24 and 32 are all
// even) and the norms (16 + 2 x (8 + 8 + 16 + 16) = 112 weights) are
// replicated: 3200 + 112 = 3312 weights, 13248 bytes of f32, on each chip.
// FSDP splits every one of them over dp too (on its first other even
// dimension; the norms' only one): 1656, 6624 bytes. AdamW keeps two
// state tensors split like each weight; the 2 x 6 tokens are split by rows.
func TestTrainStepSplitForTPU(t *testing.T) {
	c, err := hf.ParseConfig([]byte(tinyDense))
	if err != nil {
		t.Fatal(err)
	}
	m, err := models.Abstract(c, ir.BF16)
	if err != nil {
		t.Fatal(err)
	}
	mesh, err := models.ParseMesh("dp=2,tp=2")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fsdp    bool
		donated int64 // the parameters and the state
		want    []string
	}{
		{false, 13248 + 26496, []string{
			"training step: adamw, batch 2 × 6 tokens, f32, split over mesh dp=2,tp=2 on the 4 chips of v6e:2x2 (tpu-v6e); per chip:",
			"parameters                        13248 bytes    12.9 KiB  trained, f32, donated: updated in place",
			"optimizer state                   26496 bytes    25.9 KiB  exp_avg and exp_avg_sq per parameter, donated",
			"gradients                         13248 bytes    12.9 KiB  one per trained parameter, f32, split like it: computed within the step",
			savedLine + "stacked per layer, whole (before splitting): within the temporaries",
		}},
		{true, 6624 + 13248, []string{
			"training step: adamw, batch 2 × 6 tokens, f32, split over mesh dp=2,tp=2 with FSDP on the 4 chips of v6e:2x2 (tpu-v6e); per chip:",
			"parameters                         6624 bytes    6.47 KiB  trained, f32, donated: updated in place",
			"optimizer state                   13248 bytes    12.9 KiB  exp_avg and exp_avg_sq per parameter, donated",
			"gradients                          6624 bytes    6.47 KiB  one per trained parameter, f32, split like it: computed within the step",
			savedLine + "stacked per layer, whole (before splitting): within the temporaries",
		}},
	} {
		text, err := m.TrainReportSplit(train.NewAdamW(0.01), 2, 6, target.V6e, "v6e:2x2", mesh, tc.fsdp)
		if err != nil {
			t.Fatalf("fsdp %v: the step does not compile for v6e:2x2: %v", tc.fsdp, err)
		}
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		if len(lines) != 9 {
			t.Fatalf("fsdp %v: the report has %d lines, want 9:\n%s", tc.fsdp, len(lines), text)
		}
		for i, w := range tc.want {
			if lines[i] != w {
				t.Errorf("fsdp %v: line %d:\n%s\nwant\n%s", tc.fsdp, i+1, lines[i], w)
			}
		}
		checkCompiledLines(t, lines[5:], "batch                                24 bytes  0.0234 KiB  the tokens, i32, their rows split over dp",
			"compiled per chip", "the step fits each tpu-v6e chip: ", tc.donated)
	}
}

// checkCompiledLines checks a report's last four lines: the activations
// (libtpu's temporaries), the batch line, the compiled line adding up with
// the same temporaries and at least donated bytes aliased, and the verdict
// from its total.
func checkCompiledLines(t *testing.T, lines []string, batch, compiled, verdict string, donated int64) {
	t.Helper()
	temp := regexp.MustCompile(`^activations \+ gradients +(\d+) bytes .* libtpu's temporaries`).FindStringSubmatch(lines[0])
	if lines[1] != batch || temp == nil {
		t.Errorf("lines 6 and 7:\n%s\n%s", lines[0], lines[1])
	}
	nums := regexp.MustCompile(`^` + compiled + `: arguments (\d+) \+ outputs (\d+) - aliased (\d+) \+ temporaries (\d+) \+ code (\d+) = (\d+) bytes \(.*\) of 32 GiB HBM$`).FindStringSubmatch(lines[2])
	if nums == nil {
		t.Fatalf("line 8: %s", lines[2])
	}
	n := make([]int64, 6)
	for i := range n {
		n[i], _ = strconv.ParseInt(nums[i+1], 10, 64)
	}
	if n[0]+n[1]-n[2]+n[3]+n[4] != n[5] || n[2] < donated || n[0] < donated || nums[4] != temp[1] {
		t.Errorf("line 8 does not add up: %s", lines[2])
	}
	if want := verdict + strings.TrimSuffix(strings.SplitN(lines[2], "bytes (", 2)[1], ") of 32 GiB HBM") + " of 32 GiB"; lines[3] != want {
		t.Errorf("line 9:\n%s\nwant\n%s", lines[3], want)
	}
}

// tinyMoE is a 2-layer Qwen3-MoE (4 experts, top-2) of hidden size 16.
const tinyMoE = `{"model_type": "qwen3_moe", "vocab_size": 32, "hidden_size": 16, "intermediate_size": 24,
"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 12, "norm_topk_prob": true,
"decoder_sparse_step": 1, "mlp_only_layers": [], "rope_theta": 10000.0, "rms_norm_eps": 1e-6,
"tie_word_embeddings": false, "max_position_embeddings": 1024}`

// TestMoETrainStepForTPU: the MoE training step, grouped (train.Step runs
// moe-route before autodiff), compiles for one chip of v6e:2x2 through
// libtpu, its grouped products lowered as chlo.ragged_dot: the layer loop's
// three projections, and each one's two gradients (the rows', and the
// weights' ragged_contract); the reverse loop reads the forward's saved
// results rather than computing them again.
func TestMoETrainStepForTPU(t *testing.T) {
	c, err := hf.ParseConfig([]byte(tinyMoE))
	if err != nil {
		t.Fatal(err)
	}
	m, err := models.Abstract(c, ir.F32)
	if err != nil {
		t.Fatal(err)
	}
	opt := train.NewAdamW(0.01)
	step, n, err := m.TrainStep(opt, 2, 6, false)
	if err != nil {
		t.Fatal(err)
	}
	exe, _, err := engine.Compile(step, engine.Config{Target: target.V6e.Name(), Donate: opt.Donate(n)})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(exe.HLO, `"chlo.ragged_dot"(`); got != 9 {
		t.Errorf("%d chlo.ragged_dots in the step's StableHLO; want 9", got)
	}
	text, err := m.TrainReport(opt, 2, 6, target.V6e, "v6e:2x2")
	if err != nil {
		t.Fatalf("the MoE step does not compile for v6e: %v", err)
	}
	if last := strings.TrimSuffix(text[strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n")+1:], "\n"); !strings.HasPrefix(last, "the step fits one tpu-v6e chip: ") {
		t.Errorf("the report's verdict: %s", last)
	}
}
