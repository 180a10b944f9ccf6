package ir

import "testing"

// TestOpTableColumns: the columns that the lowering and the passes read
// instead of lists of their own are filled where they must be. A unary or
// binary op lowers one to one to its StableHLO column; transcendental
// means an elementwise op, and every op the cost model counts as
// transcendental is one.
func TestOpTableColumns(t *testing.T) {
	for _, op := range Ops() {
		in := op.Info()
		oneToOne := in.Group == GroupUnary || in.Group == GroupBinary
		if oneToOne && in.StableHLO == "" {
			t.Errorf("%s: a unary or binary op needs its StableHLO name (OpInfo.StableHLO) in op.go", op)
		}
		if !oneToOne && in.StableHLO != "" {
			t.Errorf("%s: only unary and binary ops lower one to one; its StableHLO %q is never read", op, in.StableHLO)
		}
		if in.Transcendental && !in.Elementwise {
			t.Errorf("%s is marked transcendental but is not elementwise", op)
		}
		if in.Cost == CostTranscendental && !in.Transcendental {
			t.Errorf("%s costs a transcendental per element but is not marked Transcendental", op)
		}
	}
}
