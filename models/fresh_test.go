package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/tensor"
)

// A step on an empty cache at pos 0 that attends over its own T slots
// (fresh, as the Generator's prefill) gives the logits and the cache of the
// step that attends over every slot, left padding and a sliding layer
// included, with f32 weights, bf16 ones (a bf16 cache) and f16 ones (an f16
// cache); its traced
// program's score products are T slots wide, not the capacity, and read
// the keys and values the step computed, not the cache it wrote them into
// (a bf16 cache's slots were sliced out and widened to f32 in one copy,
// which the bf16 products then read at twice the bytes). In query blocks
// of 3 slots (causalBlock), the blocks' products are 3, 6 and 8 slots
// wide, and the results are the same.
func TestFreshPrefillAttendsOverItsTokens(t *testing.T) {
	for _, dt := range []ir.DType{ir.F32, ir.BF16, ir.F16} {
		for _, blk := range []int64{128, 3} {
			t.Run(fmt.Sprintf("%s/block=%d", dt, blk), func(t *testing.T) {
				defer func(b int64) { causalBlock = b }(causalBlock)
				causalBlock = blk
				testFreshPrefill(t, blk, dt)
			})
		}
	}
}

func testFreshPrefill(t *testing.T, blk int64, dt ir.DType) {
	m := randomModelOf(t, `{"model_type": "qwen3", "vocab_size": 96, "hidden_size": 32,
"intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
"head_dim": 8, "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 128,
"tie_word_embeddings": true, "use_sliding_window": true, "sliding_window": 3, "max_window_layers": 1}`, 0.3, dt)
	if got := m.CacheDType(); got != dt {
		t.Fatalf("cache %s, want %s", got, dt)
	}
	rng := rand.New(rand.NewPCG(3, 4))
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
	var widths, rows []int64
	for _, in := range mod.Entry().Body.Instrs {
		if in.Op == ir.OpDotGeneral && in.Results[0].Type.Rank() == 4 && in.Args[1].Type.Dims()[3] == 8 {
			if d := in.Results[0].Type.Dims(); in.Attr.(*ir.DotAttr).RhsContract[0] == 3 {
				widths, rows = append(widths, d[3]), append(rows, d[2])
			}
		}
	}
	// two layers' score products; the query rows are 2 heads per key head
	wantW, wantRows := []int64{T, T}, []int64{2 * T, 2 * T}
	if blk < T {
		wantW, wantRows = []int64{3, 6, 8, 3, 6, 8}, []int64{6, 6, 4, 6, 6, 4}
	}
	if !slices.Equal(widths, wantW) || !slices.Equal(rows, wantRows) {
		t.Errorf("score products %v slots wide, %v rows; want %v, %v", widths, rows, wantW, wantRows)
	}
	if read := cacheReads(mod.Entry()); len(read) > 0 {
		t.Errorf("the fresh step reads its caches: %s", strings.Join(read, "; "))
	}
}

// cacheReads lists the instructions of f that read a cache parameter or
// what a dynamic_update_slice wrote into one: anything but a further
// update or the return.
func cacheReads(f *ir.Func) []string {
	written := map[*ir.Value]bool{}
	for _, p := range f.Params {
		if strings.HasPrefix(p.Name, "cache.") {
			written[p] = true
		}
	}
	var read []string
	for _, in := range f.Body.Instrs {
		for i, a := range in.Args {
			switch {
			case !written[a], in.Op == ir.OpReturn:
			case in.Op == ir.OpDynamicUpdateSlice && i == 0:
				written[in.Results[0]] = true
			default:
				read = append(read, in.Op.String()+" of "+a.Type.String())
			}
		}
	}
	return read
}

// randomModel is the model of config with f32 weights drawn uniformly from
// [-scale, scale) (a fixed seed).
func randomModel(t *testing.T, config string, scale float64) *Model {
	t.Helper()
	return randomModelOf(t, config, scale, ir.F32)
}

// randomModelOf is randomModel with weights of dtype dt (bf16: the values
// drawn, rounded).
func randomModelOf(t *testing.T, config string, scale float64, dt ir.DType) *Model {
	t.Helper()
	m := abstractModel(t, config, dt)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range m.Params {
		b := backend.New(m.Params[i].Type)
		vals := make([]float64, b.Len())
		for j := range vals {
			vals[j] = scale * (2*rng.Float64() - 1)
		}
		b.WriteFloat64s(0, vals)
		m.Params[i].Buffer = b
	}
	return m
}

// abstractModel is the model of config with parameters of dtype and no
// weights (Abstract).
func abstractModel(t *testing.T, config string, dtype ir.DType) *Model {
	t.Helper()
	c, err := hf.ParseConfig([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Abstract(c, dtype)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
