package target

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestEveryOpHasCost walks ir's op table: every op has a cost class, and a
// composite op a formula, so no op is costed as 0 FLOPs by omission.
func TestEveryOpHasCost(t *testing.T) {
	for _, op := range ir.Ops() {
		switch c := op.Info().Cost; {
		case c == ir.CostUnset:
			t.Errorf("%s has no cost class in ir's op table (OpInfo.Cost)", op)
		case c == ir.CostComposite && compositeWork[op] == nil:
			t.Errorf("%s is CostComposite but target has no compositeWork formula for it", op)
		}
	}
	for op := range compositeWork {
		if op.Info().Cost != ir.CostComposite {
			t.Errorf("compositeWork has a formula for %s, whose cost class is not CostComposite", op)
		}
	}
}
