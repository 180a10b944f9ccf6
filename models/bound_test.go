package models

import (
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
)

// A request whose longest prompt and new tokens need more positions than
// max_position_embeddings (128 here) is refused before anything compiles;
// one that fits exactly is accepted.
func TestGenerateMaxPositions(t *testing.T) {
	m := abstractModel(t, tinyQwen3Config, ir.F32)
	g := &Generator{m: m}
	prompt := make([]int32, 5)
	for _, c := range []struct {
		prompts [][]int32
		maxNew  int
		err     string
	}{
		{[][]int32{prompt}, 123, ""},
		{[][]int32{prompt, {1}}, 124, "models: a prompt of 5 tokens and 124 new tokens need 129 positions, more than the model's max_position_embeddings 128 (at most 123 new tokens fit)"},
		{[][]int32{prompt}, 100000000, "models: a prompt of 5 tokens and 100000000 new tokens need 100000005 positions, more than the model's max_position_embeddings 128 (at most 123 new tokens fit)"},
		{[][]int32{make([]int32, 128)}, 1, "models: a prompt of 128 tokens and 1 new tokens need 129 positions, more than the model's max_position_embeddings 128 (at most 0 new tokens fit)"},
	} {
		r := Request{Prompts: c.prompts, MaxNew: c.maxNew}
		_, _, err := g.shape(r)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != c.err {
			t.Errorf("max new %d: %q, want %q", c.maxNew, msg, c.err)
		}
		if c.err == "" {
			continue
		}
		if err := g.Prepare(r); err == nil || err.Error() != c.err {
			t.Errorf("Prepare: %v, want %s", err, c.err)
		}
		if _, err := g.Generate(r); err == nil || err.Error() != c.err {
			t.Errorf("Generate: %v, want %s", err, c.err)
		}
	}
	m.Config.MaxPositions = 0
	if _, _, err := g.shape(Request{Prompts: [][]int32{prompt}, MaxNew: 1}); err == nil ||
		err.Error() != "models: the config's max_position_embeddings is 0, want at least 1" {
		t.Errorf("MaxPositions 0: %v", err)
	}
}

// The decode step's attention mask compares the cache slots with an iota
// op: no constant of the traced program grows with the cache capacity (a
// reshaped iota was captured element by element, 770 MB of program for a
// cache of 2^27 slots).
func TestMaskIsIota(t *testing.T) {
	m := abstractModel(t, tinyQwen3Config, ir.F32)
	const capacity = 1 << 16
	mod, err := m.trace("decode", m.StepTypes(2, 1, capacity), false, false)
	if err != nil {
		t.Fatal(err)
	}
	if iotas := bigConstants(t, mod, capacity); iotas == 0 {
		t.Error("no iota over the cache capacity in the traced decode program")
	}
	// The default pipeline, constant folding included, keeps it an iota.
	target, err := engine.LookupTarget("cpu")
	if err != nil {
		t.Fatal(err)
	}
	if err := passes.Run(mod, passes.Default(), passes.Options{Eval: cpu.Folder{}, Target: target}); err != nil {
		t.Fatal(err)
	}
	if iotas := bigConstants(t, mod, capacity); iotas == 0 {
		t.Error("no iota over the cache capacity in the compiled decode program")
	}
}

// bigConstants reports every constant of more than 64 stored elements in
// mod and counts the iotas whose last dimension is capacity.
func bigConstants(t *testing.T, mod *ir.Module, capacity int64) int {
	t.Helper()
	iotas := 0
	for _, f := range mod.Funcs {
		f.Body.Walk(func(in *ir.Instr) {
			switch in.Op {
			case ir.OpConstant:
				if n := in.Attr.(*ir.ConstAttr).Value.Len(); n > 64 {
					t.Errorf("a constant of %d elements: %s", n, in.Results[0].Type)
				}
			case ir.OpIota:
				if s := in.Results[0].Type.Shape; s[len(s)-1].Size == capacity {
					iotas++
				}
			}
		})
	}
	return iotas
}

// TestLossMaxPositions: a loss over rows longer than max_position_embeddings
// (128 here) is refused before anything is traced, as generate refuses
// them (past it transformers changes some ropes, dynamic's theta and
// LongRoPE's factors, where tpucc's stay); rows of exactly 128 trace.
func TestLossMaxPositions(t *testing.T) {
	m := abstractModel(t, tinyQwen3Config, ir.F32)
	if _, _, err := m.TraceLoss(2, 129, false); err == nil ||
		err.Error() != "models: rows of 129 tokens are longer than the model's max_position_embeddings 128" {
		t.Errorf("rows of 129 tokens: %v", err)
	}
	if _, _, err := m.TraceLoss(1, 128, true); err != nil {
		t.Errorf("rows of 128 tokens: %v", err)
	}
}
