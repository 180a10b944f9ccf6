package hf

import (
	"reflect"
	"testing"

	"github.com/tpucc/tpucc/backend"
)

// Every name the loader knows is a field of the struct it fills, and every
// LayerWeights field has a checkpoint name or is assembled by the loader.
func TestLayoutNamesAreFields(t *testing.T) {
	lt := reflect.TypeFor[LayerWeights]()
	for field := range layerHubNames {
		if _, ok := lt.FieldByName(field); !ok {
			t.Errorf("layerHubNames names %s, which LayerWeights lacks", field)
		}
	}
	assembled := map[string]bool{"GateExperts": true, "UpExperts": true, "DownExperts": true}
	for _, arch := range []string{"qwen3", "mixtral", "gemma4_text"} {
		c := &Config{Arch: arch}
		for i := range lt.NumField() {
			f := lt.Field(i).Name
			if n := c.layerHubName(f); n == "" && !assembled[f] {
				t.Errorf("%s: LayerWeights.%s has no checkpoint name", arch, f)
			}
		}
	}
	wt := reflect.TypeFor[Weights]()
	c := &Config{Arch: "qwen3"}
	for i := range wt.NumField() {
		if f := wt.Field(i); f.Type == reflect.TypeFor[*backend.Buffer]() && c.hubName(f.Name) == "" {
			t.Errorf("Weights.%s has no checkpoint name", f.Name)
		}
	}
}
