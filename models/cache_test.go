package models

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestCacheDType: a model that multiplies in bf16 (bf16 weights, products
// not forced to f32) keeps its KV cache in bf16, as transformers keeps a
// bf16 model's; an f16 model keeps it in f16, as transformers does; an
// f32 model and a bf16 one with F32Products keep it in f32. The step's
// arguments and its traced results carry those exact types.
func TestCacheDType(t *testing.T) {
	for _, c := range []struct {
		weights ir.DType
		f32     bool
		want    string
	}{
		{ir.BF16, false, "bf16[2,3,1,16,8]"},
		{ir.BF16, true, "f32[2,3,1,16,8]"},
		{ir.F32, false, "f32[2,3,1,16,8]"},
		{ir.F16, false, "f16[2,3,1,16,8]"},
	} {
		m := abstractModel(t, wideQwen3Config, c.weights)
		m.F32Products = c.f32
		ts := m.CacheTypes(3, 16)
		if len(ts) != 2 || ts[0].String() != c.want || ts[1].String() != c.want {
			t.Errorf("%s weights, F32Products %v: cache %v, want two %s", c.weights, c.f32, ts, c.want)
			continue
		}
		if dt := m.CacheDType(); dt != ts[0].DType {
			t.Errorf("%s weights, F32Products %v: CacheDType %s, cache %s", c.weights, c.f32, dt, ts[0])
		}
		step := m.StepTypes(3, 1, 16)
		mod, err := m.Trace("decode", step, false)
		if err != nil {
			t.Fatal(err)
		}
		res := mod.Entry().Results
		for i, ty := range ts {
			if !step[stepCacheArg+i].Equal(ty) || !res[1+i].Equal(ty) {
				t.Errorf("%s weights, F32Products %v: cache %d is %s as an argument and %s as a result, want %s",
					c.weights, c.f32, i, step[stepCacheArg+i], res[1+i], ty)
			}
		}
	}
}

// TestBF16CacheUpdatedInPlace: the llvm build of a bf16 model's looped
// decode step writes each layer's new keys and values into its bf16
// cache in place (an update step each, no copy of the cache), and its
// attention reads the cache as bf16 operands of the streamed products
// (gemv for the scores, dot_general (rows) for the weighted sum), not
// through a widened f32 copy. An f16 model's f16 cache the same way.
func TestBF16CacheUpdatedInPlace(t *testing.T) {
	for _, dt := range []ir.DType{ir.BF16, ir.F16} {
		t.Run(dt.String(), func(t *testing.T) { testNarrowCacheInPlace(t, dt) })
	}
}

// testNarrowCacheInPlace is TestBF16CacheUpdatedInPlace for a model of dt
// weights (bf16, or f16 with its f16 cache).
func testNarrowCacheInPlace(t *testing.T, dt ir.DType) {
	t.Setenv("TPUCC_UNROLL_LAYERS", "")
	m := abstractModel(t, wideQwen3Config, dt)
	x := llvmDecode(t, m, 3, 16)
	// The stacked cache [2, 3, 1, 16, 8] and a layer's row [3, 1, 16, 8]:
	// no step but the updates writes either, in bf16 or widened to f32.
	cache := m.CacheTypes(3, 16)[0].String()
	var updates, others []string
	kinds := map[string]bool{}
	for _, s := range x.StepTimes() {
		switch {
		case s.Out == cache && s.What == "update in place dynamic_update_slice":
			updates = append(updates, s.What)
		case strings.HasSuffix(s.Out, "[2,3,1,16,8]") || strings.HasSuffix(s.Out, "[3,1,16,8]"):
			others = append(others, s.What+" "+s.Out)
		}
		kinds[s.What] = true
	}
	if len(updates) != 2 || len(others) != 0 {
		t.Errorf("the cache %s: %d updates in place, want 2; other steps writing a cache: %v", cache, len(updates), others)
	}
	if !kinds["gemv"] || !kinds["dot_general (rows)"] {
		t.Errorf("attention's products are not the streamed kernels: %v", kinds)
	}
}
