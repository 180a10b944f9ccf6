package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/tensor"
)

// A step on an empty cache at pos 0 that attends over its own T slots
// (fresh, as the Generator's prefill) gives the logits and the cache of the
// step that attends over every slot, left padding and a sliding layer
// included; its traced program's score products are T slots wide, not the
// capacity.
func TestFreshPrefillAttendsOverItsTokens(t *testing.T) {
	c, err := hf.ParseConfig([]byte(`{"model_type": "qwen3", "vocab_size": 96, "hidden_size": 32,
"intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
"head_dim": 8, "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 128,
"tie_word_embeddings": true, "use_sliding_window": true, "sliding_window": 3, "max_window_layers": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Abstract(c, ir.F32)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range m.Params {
		b := backend.New(m.Params[i].Type)
		vals := make([]float64, b.Len())
		for j := range vals {
			vals[j] = 0.3 * (2*rng.Float64() - 1)
		}
		b.WriteFloat64s(0, vals)
		m.Params[i].Buffer = b
	}
	const B, T, capacity = 2, 8, 32
	args := func() []*tensor.Tensor {
		toks := make([]int32, B*T)
		for i := range toks {
			toks[i] = int32(rng.IntN(96))
		}
		ts := []*tensor.Tensor{tensor.FromSlice(toks, B, T), tensor.FromSlice([]int32{0, 3}, B), tensor.FromSlice([]int32{0})}
		for _, ct := range m.CacheTypes(B, capacity) {
			ts = append(ts, tensor.FromBuffer(backend.New(ct)))
		}
		for _, p := range m.Params {
			ts = append(ts, tensor.FromBuffer(p.Buffer))
		}
		return ts
	}()
	want, err := m.step(args, true, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.step(args, true, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		w, g := want[i].Buffer(), got[i].Buffer()
		wv, gv := make([]float64, w.Len()), make([]float64, g.Len())
		w.ReadFloat64s(0, wv)
		g.ReadFloat64s(0, gv)
		for j := range wv {
			if math.Abs(wv[j]-gv[j]) > 1e-5*(1+math.Abs(wv[j])) {
				t.Fatalf("result %d, element %d: %g attending over its own slots, %g over all", i, j, gv[j], wv[j])
			}
		}
	}
	mod, err := m.trace("prefill", m.StepTypes(B, T, capacity), false, true)
	if err != nil {
		t.Fatal(err)
	}
	scores := 0
	for _, in := range mod.Entry().Body.Instrs {
		if in.Op == ir.OpDotGeneral && in.Results[0].Type.Rank() == 4 {
			if d := in.Results[0].Type.Dims(); d[2] == 2*T && d[3] != T {
				t.Errorf("scores %s: want %d slots", in.Results[0].Type, T)
			}
			scores++
		}
	}
	if scores == 0 {
		t.Fatal("no score product found in the traced prefill")
	}
}
