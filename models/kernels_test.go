package models

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/llvm"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
)

// qwen3Depth is Qwen3-0.6B's config.json with LAYERS layers (bench/depth's).
const qwen3Depth = `{"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 1024,
"intermediate_size": 3072, "num_hidden_layers": LAYERS, "num_attention_heads": 16, "num_key_value_heads": 8,
"head_dim": 128, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 40960,
"tie_word_embeddings": true, "use_sliding_window": false}`

// TestLoopedStepKernels: the llvm build of Qwen3-0.6B's decode step (bf16
// weights, batch 1, 512 slots) with its layers as a loop compiles the
// same 25 kernels whatever the depth (issue 30; bench/depth compiles 28
// layers), all of them into an empty cache. (26 until the value cache's
// row stopped taking a layout on the cpu target, which had made it a copy:
// passes' movedInPlace.)
func TestLoopedStepKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles two decode steps with clang")
	}
	t.Setenv("TPUCC_UNROLL_LAYERS", "")
	for _, layers := range []int{2, 5} {
		c, err := hf.ParseConfig([]byte(strings.Replace(qwen3Depth, "LAYERS", fmt.Sprint(layers), 1)))
		if err != nil {
			t.Fatal(err)
		}
		m, err := Abstract(c, ir.BF16)
		if err != nil {
			t.Fatal(err)
		}
		x := llvmDecode(t, m, 1, 512)
		if got := [2]int{x.Times.Kernels, x.Times.KernelsCached}; got != [2]int{25, 0} {
			t.Errorf("%d layers: %d kernels, %d of them cached; want 25 built", layers, got[0], got[1])
		}
	}
}

// llvmDecode is the llvm build of m's decode step for batch rows and
// capacity slots, compiled into an empty object cache.
func llvmDecode(t *testing.T, m *Model, batch, capacity int64) *llvm.Executable {
	t.Helper()
	mod, err := m.Trace("decode", m.StepTypes(batch, 1, capacity), false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := llvm.Open(llvm.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	exe, _, err := engine.Compile(mod, engine.Config{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	return exe.Exec.(*llvm.Executable)
}
