package cpu

import (
	"testing"

	"github.com/tpucc/tpucc/internal/progen"
	"github.com/tpucc/tpucc/ir"
)

// runByRun are the ops that Run executes itself rather than through a
// kernel: control flow and regions.
var runByRun = map[ir.Op]string{
	ir.OpCall:   "Run calls the callee",
	ir.OpReturn: "Run ends the function",
	ir.OpFusion: "Run executes the body",
	ir.OpWhile:  "Run executes the regions (TestRunWhile*, TestRunNestedLoops)",
	ir.OpCase:   "Run executes the branch (TestRunCaseIndex)",
}

// TestEveryOpHasKernel walks ir's op table: every op other than control flow
// evaluates, on operands of zeros, an instance drawn from generated programs.
// An op that the generator does not draw yet fails too, so that a new op
// cannot skip the check.
func TestEveryOpHasKernel(t *testing.T) {
	samples := map[ir.Op]*ir.Instr{}
	for seed := int64(0); seed < 300 && len(samples) < len(ir.Ops()); seed++ {
		for _, f := range progen.Generate(seed, progen.Config{}).Funcs {
			f.Body.Walk(func(in *ir.Instr) {
				if samples[in.Op] == nil {
					samples[in.Op] = in
				}
			})
		}
	}
	for _, op := range ir.Ops() {
		if _, ok := runByRun[op]; ok {
			continue
		}
		in := samples[op]
		if in == nil {
			t.Errorf("%s: no generated program contains it, so its kernel is not checked (internal/progen draws every op)", op)
			continue
		}
		args := make([]*ir.Literal, len(in.Args))
		for i, a := range in.Args {
			args[i] = ir.NewLiteral(a.Type, []float64{0})
			if !a.Type.DType.IsFloat() {
				args[i] = ir.NewIntLiteral(a.Type, []int64{0})
			}
		}
		res, err := Folder{}.Fold(in, args)
		if err != nil {
			t.Errorf("%s has no working kernel: %v", op, err)
			continue
		}
		if len(res) != len(in.Results) {
			t.Errorf("%s: the kernel gave %d results, want %d", op, len(res), len(in.Results))
		}
	}
}
