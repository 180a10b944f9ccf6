package engine

import (
	"strings"
	"testing"
)

// TestPrecisionKey: a precision other than the default is a line of the
// key, so that programs compiled for another precision are never reused;
// the default writes none, so that keys made before the option stand. An
// unknown precision is an error of the options.
func TestPrecisionKey(t *testing.T) {
	keys := map[string]fullKey{}
	for _, p := range []string{"", "default", "high", "highest"} {
		o, err := Options{Backend: "reference", Precision: p}.check()
		if err != nil {
			t.Fatal(err)
		}
		keys[p] = makeKey(&o, signature{}, "func @f() -> () {\n  return\n}\n")
	}
	if keys[""] != keys["default"] || strings.Contains(keys[""].text, "precision") {
		t.Errorf("the default precision changes the key:\n%s", keys["default"].text)
	}
	if !strings.Contains(keys["highest"].text, "\nprecision highest\n") || keys["highest"].hash == keys["high"].hash ||
		keys["high"].hash == keys[""].hash {
		t.Errorf("keys do not tell precisions apart:\n%s\n%s", keys["high"].text, keys["highest"].text)
	}
	_, err := Options{Backend: "reference", Precision: "fast"}.check()
	if want := `unknown precision "fast" (want one of default, high, highest)`; err == nil || err.Error() != want {
		t.Errorf("Precision fast: %v, want %s", err, want)
	}
}
