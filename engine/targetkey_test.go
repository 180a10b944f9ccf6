package engine

import "testing"

// TestTargetKey: the key names a target by its name alone; the empty name is
// the cpu's.
func TestTargetKey(t *testing.T) {
	for name, w := range map[string]string{"tpu-v6e": "tpu-v6e", "cpu": "cpu", "": "cpu"} {
		if got := targetKey(name); got != w {
			t.Errorf("targetKey(%q) = %q, want %q", name, got, w)
		}
	}
}
