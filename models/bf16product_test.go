package models

import (
	"slices"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestBF16Product: of a bf16 model's weights, the products' (the
// projections and the tied embedding, the LM head) multiply in bf16, the
// norms do not; with F32Products, or with f16 or f32 weights, none do.
func TestBF16Product(t *testing.T) {
	names := func(m *Model) []string {
		var out []string
		for _, p := range m.Params {
			if m.BF16Product(p) {
				out = append(out, p.Name)
			}
		}
		return out
	}
	bf16 := abstractModel(t, tinyQwen3Config, ir.BF16)
	var want []string
	for _, p := range bf16.Params {
		switch fieldName(p.Name) {
		case "Embed", "Q", "K", "V", "O", "Gate", "Up", "Down":
			want = append(want, p.Name)
		}
	}
	if got := names(bf16); len(want) != 8 || !slices.Equal(got, want) {
		t.Errorf("bf16: %v, want %v", got, want)
	}
	bf16.F32Products = true
	if got := names(bf16); len(got) != 0 {
		t.Errorf("bf16 with F32Products: %v, want none", got)
	}
	for _, dt := range []ir.DType{ir.F16, ir.F32} {
		if got := names(abstractModel(t, tinyQwen3Config, dt)); len(got) != 0 {
			t.Errorf("%s: %v, want none", dt, got)
		}
	}
}
