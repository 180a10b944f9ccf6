package cpu

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// runFusion runs a fusion instruction by running its region's body with the
// same kernels as unfused instructions, so a fused module computes exactly
// what its unfused form does. The body is closed (the verifier guarantees it
// uses only its parameters and its own values), so a table local to the call
// is all it needs; body values die with it.
func runFusion(in *ir.Instr, args []*backend.Buffer) ([]*backend.Buffer, error) {
	body := in.FusionBody()
	vals := map[*ir.Value]*backend.Buffer{}
	for i, p := range body.Params {
		vals[p] = args[i]
	}
	for _, x := range body.Instrs {
		ins := make([]*backend.Buffer, len(x.Args))
		for k, a := range x.Args {
			ins[k] = vals[a]
		}
		if x.Op == ir.OpReturn {
			return ins, nil
		}
		outs, err := eval(x, ins)
		if err != nil {
			return nil, ir.Errorf(x.Pos, "%v", err)
		}
		for k, r := range x.Results {
			vals[r] = outs[k]
		}
	}
	return nil, ir.Errorf(in.Pos, "fusion body does not end with return")
}
