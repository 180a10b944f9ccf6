package stablehlo

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// flatten lowers a fusion as the plain ops of its body, in body order, at the
// fusion's place: XLA forms its own fusions, so ours only group work for the
// cost model and the CPU backend. A fusion whose members were adjacent in the
// unfused program therefore lowers to exactly the unfused text. The region's
// parameters stand for the operands and the fusion's results for the values
// the body returns.
func (e *emitter) flatten(in *ir.Instr) error {
	body := in.FusionBody()
	for i, p := range body.Params {
		v, ok := e.vals[in.Args[i]]
		if !ok {
			return fmt.Errorf("internal: operand %d of fusion is not defined", i)
		}
		e.vals[p] = v
	}
	for _, x := range body.Instrs {
		if x.Op == ir.OpReturn {
			if len(x.Args) != len(in.Results) {
				return fmt.Errorf("internal: fusion body returns %d values for %d results", len(x.Args), len(in.Results))
			}
			for i, a := range x.Args {
				v, ok := e.vals[a]
				if !ok {
					return fmt.Errorf("internal: fusion body returns an undefined value")
				}
				e.vals[in.Results[i]] = hv{v.ref, in.Results[i].Type}
			}
			return nil
		}
		if err := e.instr(x); err != nil {
			return err
		}
	}
	return fmt.Errorf("internal: fusion body does not end with return")
}
