package runtime

import (
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes/padding"
)

// padDim is one padded dimension of a call: size n padded to N.
type padDim struct {
	ref  DimRef
	n, N int64
}

// padPlan says how to run a bucket program for a call: the size each
// program parameter is padded to, and the size each result is sliced to.
type padPlan struct {
	inputs  [][]int64 // per program parameter: padded dims, nil when not padded
	outputs [][]int64 // per result: real dims, nil when no dim is labelled
}

// checkPadding runs the padding analysis (passes/padding) on the two traces,
// with the reference executor evaluating elementwise ops on padding values.
// It returns the plan, or the reason padding would not give exact's results.
func checkPadding(bucket, exact *ir.Module, pads []padDim) (*padPlan, string) {
	dims := make([]padding.Dim, len(pads))
	for i, p := range pads {
		dims[i] = padding.Dim{Name: p.ref.String(), Real: p.n, Padded: p.N}
	}
	plan, why := padding.Check(bucket, exact, dims, cpu.Folder{})
	if plan == nil {
		return nil, why
	}
	return &padPlan{inputs: plan.Inputs, outputs: plan.Outputs}, why
}
