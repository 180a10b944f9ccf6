package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/tpucc/tpucc/backend"
	_ "github.com/tpucc/tpucc/backend/pjrt" // the pjrt device: XLA:CPU's devices
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/models/safetensors"
)

// small is the Qwen3-shaped model the load and decode figures use: 8
// layers of width 512, 58 M weights (234 MB in f32).
const small = `{"model_type": "qwen3", "vocab_size": 32768, "hidden_size": 512, "intermediate_size": 1536,
"num_hidden_layers": 8, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 64,
"rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "tie_word_embeddings": false, "max_position_embeddings": 4096}`

// writeCheckpoint writes small with random weights into dir, in the Hub's
// names, and returns the bytes of its weights.
func writeCheckpoint(dir string) int64 {
	check(os.MkdirAll(dir, 0o755))
	check(os.WriteFile(filepath.Join(dir, "config.json"), []byte(small), 0o644))
	rng := rand.New(rand.NewPCG(3, 4))
	var ts []safetensors.Named
	var total int64
	add := func(name string, shape ...int64) {
		b := backend.New(ir.Tensor(ir.F32, shape...))
		raw := b.Bytes()
		for i := 0; i < len(raw); i += 4 {
			binary.LittleEndian.PutUint32(raw[i:], math.Float32bits(float32(0.04*rng.Float64()-0.02)))
		}
		ts = append(ts, safetensors.Named{Name: name, Buf: b})
		total += int64(len(raw))
	}
	add("model.embed_tokens.weight", 32768, 512)
	add("model.norm.weight", 512)
	add("lm_head.weight", 32768, 512)
	for l := range 8 {
		p := fmt.Sprintf("model.layers.%d.", l)
		add(p+"input_layernorm.weight", 512)
		add(p+"post_attention_layernorm.weight", 512)
		add(p+"self_attn.q_proj.weight", 512, 512)
		add(p+"self_attn.k_proj.weight", 256, 512)
		add(p+"self_attn.v_proj.weight", 256, 512)
		add(p+"self_attn.o_proj.weight", 512, 512)
		add(p+"self_attn.q_norm.weight", 64)
		add(p+"self_attn.k_norm.weight", 64)
		add(p+"mlp.gate_proj.weight", 1536, 512)
		add(p+"mlp.up_proj.weight", 1536, 512)
		add(p+"mlp.down_proj.weight", 512, 1536)
	}
	check(safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, nil))
	return total
}

// measureLoad (the child) loads dir and copies it to 4 XLA:CPU devices
// split tp=4, watching its resident memory, and prints a loadResult.
func measureLoad(dir string) error {
	mesh, err := models.ParseMesh("tp=4")
	if err != nil {
		return err
	}
	baseRSS, baseAnon := statusBytes("VmHWM"), statusBytes("RssAnon")
	var peakAnon atomic.Int64
	done := make(chan struct{})
	go func() { // sampled: a peak shorter than a millisecond can be missed
		for {
			peakAnon.Store(max(peakAnon.Load(), statusBytes("RssAnon")))
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	m, err := models.Load(dir)
	if err != nil {
		return err
	}
	if _, err := models.NewGenerator(m, models.Options{Device: "pjrt", Mesh: mesh}); err != nil {
		return err
	}
	close(done)
	peakAnon.Store(max(peakAnon.Load(), statusBytes("RssAnon")))
	r := loadResult{PeakRSS: statusBytes("VmHWM") - baseRSS, PeakAnon: peakAnon.Load() - baseAnon,
		Devices: 4 * m.WeightBytesPerDevice(mesh)}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// decodeSpeedup is small's batch-1 decode rate split tp=4 over four
// XLA:CPU devices over its rate on one (random weights; the best of 3
// generations of -steps tokens each, after a warm-up that compiles).
func decodeSpeedup() float64 {
	raw := []byte(small)
	c, err := hf.ParseConfig(raw)
	check(err)
	m, err := models.Abstract(c, ir.F32)
	check(err)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range m.Params {
		b := backend.New(m.Params[i].Type)
		for j := range b.Len() {
			b.SetFloat64(j, 0.04*rng.Float64()-0.02)
		}
		m.Params[i].Buffer = b
	}
	mesh, err := models.ParseMesh("tp=4")
	check(err)
	one, split := decodeRate(m, nil), decodeRate(m, mesh)
	fmt.Fprintf(os.Stderr, "bench/shard: batch-1 decode on XLA:CPU: one device %.1f tokens/s, tp=4 %.1f tokens/s\n", one, split)
	return ratio(split, one)
}

// decodeRate is m's best decode rate in tokens/s on the pjrt device,
// split over mesh when it is not nil.
func decodeRate(m *models.Model, mesh *ir.Mesh) float64 {
	g, err := models.NewGenerator(m, models.Options{Device: "pjrt", Mesh: mesh})
	check(err)
	req := models.Request{Prompts: [][]int32{{1, 2, 3, 4, 5, 6, 7, 8}}, MaxNew: *steps + 1}
	check(g.Prepare(req))
	best := 0.0
	for range 4 {
		res, err := g.Generate(req)
		check(err)
		best = max(best, float64(res.DecodeTokens)/res.DecodeTime.Seconds())
	}
	return best
}
