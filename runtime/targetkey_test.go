package runtime

import (
	"fmt"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
)

// TestTargetKey: the key names a TPU by its name alone (its description is
// data) and the measured cpu with its L2, which the fuse pass reads.
func TestTargetKey(t *testing.T) {
	want := fmt.Sprintf("cpu (local memory %d)", cpu.Host().LocalBytes)
	for name, w := range map[string]string{"tpu-v6e": "tpu-v6e", "cpu": want, "": want} {
		if got := targetKey(name); got != w {
			t.Errorf("targetKey(%q) = %q, want %q", name, got, w)
		}
	}
}
