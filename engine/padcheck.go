package engine

import (
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes/padding"
)

// checkPadding runs the padding analysis (passes/padding) on the two traces,
// with the reference executor evaluating elementwise ops on padding values.
// It returns the plan, or the reason padding would not give exact's results.
func checkPadding(bucket, exact *ir.Module, pads []padding.Dim) (*padding.Plan, string) {
	return padding.Check(bucket, exact, pads, cpu.Folder{})
}
