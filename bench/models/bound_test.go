package main

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/bench/limits"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models"
	"github.com/tpucc/tpucc/models/hf"
)

// A MoE model small enough to count by hand: 2 layers of hidden 8, 2 query
// heads and 1 KV head of 4, 4 experts of 6, top-2, vocab 16, untied.
// Per layer: Q [8,8] 64, K and V [4,8] 32 each, O [8,8] 64, Router [4,8]
// 32, norms 8+8+4+4 = 24 (248 elements besides the experts); each expert
// 3·6·8 = 144. Embed and LMHead [16,8] 128 each, Norm 8.
const tinyMoE = `{"model_type": "qwen3_moe", "vocab_size": 16, "hidden_size": 8, "intermediate_size": 12,
 "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4,
 "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 6, "norm_topk_prob": true,
 "decoder_sparse_step": 1, "mlp_only_layers": [], "tie_word_embeddings": false, "rope_theta": 10000.0,
 "rms_norm_eps": 1e-6, "max_position_embeddings": 64}`

// The dense one, tied: per layer Q 64, K 32, V 32, O 64, Gate and Up
// [12,8] 96 each, Down [8,12] 96, norms 24 (504); Embed 128, Norm 8.
const tinyDense = `{"model_type": "qwen3", "vocab_size": 16, "hidden_size": 8, "intermediate_size": 12,
 "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4,
 "tie_word_embeddings": true, "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 64}`

func tinyModel(t *testing.T, config string, dt ir.DType) *models.Model {
	t.Helper()
	c, err := hf.ParseConfig([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	m, err := models.Abstract(c, dt)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDistinctExperts(t *testing.T) {
	for _, c := range []struct {
		e, k, batch int
		want        float64
	}{
		{128, 8, 1, 8},                   // batch 1: its top-k
		{4, 2, 4, 3.75},                  // 4·(1 − (1/2)^4)
		{128, 8, 64, 125.94234926707806}, // 128·(1 − (15/16)^64)
		{8, 8, 3, 8},                     // every expert, every token
		{128, 8, 0, 0},
		{0, 8, 4, 0},
	} {
		if got := distinctExperts(c.e, c.k, c.batch); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("distinctExperts(%d, %d, %d) = %v, want %v", c.e, c.k, c.batch, got, c.want)
		}
	}
}

// TestDecodeCost: a step's bytes and FLOPs (two a multiply-add), counted
// by hand for the tiny models over a cache of 8 slots. Attention is
// 2 (scores and sums) · 2 heads · 4 · 8 slots = 128 multiply-adds a row a
// layer; the cache is K and V of [2 layers, rows, 1, 8, 4], f32 but for
// the bf16 model's (bf16).
func TestDecodeCost(t *testing.T) {
	moe, dense := tinyModel(t, tinyMoE, ir.F32), tinyModel(t, tinyDense, ir.F32)
	bf16, f16 := tinyModel(t, tinyMoE, ir.BF16), tinyModel(t, tinyMoE, ir.F16)
	highest := *bf16
	highest.F32Products = true
	for _, c := range []struct {
		name  string
		m     *models.Model
		batch int
		want  stepCost
	}{
		// Weights: an Embed row (8), Norm 8, LMHead 128, 2·248, 2 of 4
		// experts (2·2·144): 1216 elements. Products: LMHead 128, 2·(Q, K,
		// V, O, Router: 224), 2 experts a layer 2·2·144: 1152, and
		// attention 256.
		{"moe b1", moe, 1, stepCost{weights: 1216 * 4, cache: 128 * 4, f32: 2 * (1152 + 256), experts: 2}},
		// 4 Embed rows (32), 3.75 experts a layer (2·540): 1744 elements;
		// products 4·(128 + 448) + 4 rows · 2 experts · 144 · 2 layers.
		{"moe b4", moe, 4, stepCost{weights: 1744 * 4, cache: 4 * 128 * 4, f32: 2 * (4608 + 4*256), experts: 3.75}},
		// bf16: LMHead, Q, K, V, O and the experts multiply in bf16 (128 +
		// 2·192 + 576), the router (2·32) and attention at the FMA rate
		// (its products widen the bf16 cache in registers); the cache is
		// bf16 (models.Model.CacheDType).
		{"moe bf16 b1", bf16, 1, stepCost{weights: 1216 * 2, cache: 128 * 2, bf16: 2 * 1088, f32: 2 * (64 + 256), experts: 2}},
		// F32Products and f16 weights: every product in f32, half the bytes;
		// f16 weights keep an f16 cache (models.Model.CacheDType).
		{"moe bf16 highest b1", &highest, 1, stepCost{weights: 1216 * 2, cache: 128 * 4, f32: 2 * (1152 + 256), experts: 2}},
		{"moe f16 b1", f16, 1, stepCost{weights: 1216 * 2, cache: 128 * 2, f32: 2 * (1152 + 256), experts: 2}},
		// Dense and tied: the embedding is the LM head, read whole and
		// multiplied: 128 + 8 + 2·504 elements, 128 + 2·480 products.
		{"dense b1", dense, 1, stepCost{weights: 1144 * 4, cache: 128 * 4, f32: 2 * (1088 + 256)}},
		{"dense b4", dense, 4, stepCost{weights: 1144 * 4, cache: 4 * 128 * 4, f32: 2 * 4 * (1088 + 256)}},
	} {
		if got := decodeCost(c.m, c.batch, 8); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestBoundSeconds: bf16 products at the bf16 dot peak where it was
// measured, else at the FMA peak; the bound is the longer of memory and
// compute.
func TestBoundSeconds(t *testing.T) {
	c := stepCost{weights: 3000, cache: 1000, bf16: 400, f32: 300}
	for _, x := range []struct {
		lim                 limits.Limits
		bound, mem, compute float64
	}{
		{limits.Limits{FMAPeak: 100, BF16Peak: 200, Bandwidth: 1000}, 5, 4, 5}, // 400/200 + 300/100
		{limits.Limits{FMAPeak: 100, Bandwidth: 1000}, 7, 4, 7},                // no bf16 peak: 400/100 + 3
		{limits.Limits{FMAPeak: 100, BF16Peak: 200, Bandwidth: 500}, 8, 8, 5},  // memory-bound
	} {
		b, m, k := c.seconds(x.lim)
		if b != x.bound || m != x.mem || k != x.compute {
			t.Errorf("%+v: got %v, %v, %v; want %v, %v, %v", x.lim, b, m, k, x.bound, x.mem, x.compute)
		}
	}
}

func TestBoundLine(t *testing.T) {
	of := map[string]float64{"dense_decode_b1": 0.9504, "dense_decode_b64": 0.783, "moe_decode_b1": 0.5, "moe_decode_b64": 1.25}
	want := "bench-models-bound: dense_decode_b1_of_bound=0.950 dense_decode_b64_of_bound=0.783 moe_decode_b1_of_bound=0.500 moe_decode_b64_of_bound=1.250"
	if got := boundLine(of); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	want = "bench-models-bound: dense_decode_b1_of_bound=n/a dense_decode_b64_of_bound=n/a moe_decode_b1_of_bound=0.500 moe_decode_b64_of_bound=n/a"
	if got := boundLine(map[string]float64{"moe_decode_b1": 0.5}); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestSerialSeconds: the tiny MoE's weights one after another, each at its
// own bound, at 4 bytes/s (an f32 element a second) and 1 FLOP/s, batch 1:
// every product is compute-bound (2 FLOPs an element read) and the rest
// memory-bound. The Embed row 8, Norm 8, the stacked norms 48, LMHead 256,
// Q, K, V, O and Router 2·(128+64+64+128+64) = 896, the experts 2·2·144·2
// = 1152 (2 experts of 144 in 2 layers), and the cache (128 elements) with
// attention's 512 FLOPs 512: 2880 s, against the overlapped bound's 2816
// (its FLOPs).
func TestSerialSeconds(t *testing.T) {
	m := tinyModel(t, tinyMoE, ir.F32)
	lim := limits.Limits{FMAPeak: 1, Bandwidth: 4}
	if got := serialSeconds(decodeParts(m, 1, 8), lim); got != 2880 {
		t.Errorf("serial: %v s, want 2880", got)
	}
	if got, _, _ := decodeCost(m, 1, 8).seconds(lim); got != 2816 {
		t.Errorf("overlapped: %v s, want 2816", got)
	}
}
