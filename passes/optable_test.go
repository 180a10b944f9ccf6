package passes

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestEveryOpHasFusionClass walks ir's op table: fuse-elementwise reads an
// op's class from it, and an op left without one would never be fused
// without anyone noticing.
func TestEveryOpHasFusionClass(t *testing.T) {
	for _, op := range ir.Ops() {
		if op.Info().Fuse == ir.FuseUnset {
			t.Errorf("%s has no fusion class in ir's op table (OpInfo.Fuse)", op)
		}
	}
}
