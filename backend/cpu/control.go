package cpu

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// runWhile runs a while as StableHLO does: the carried values go to cond;
// while it returns true, do maps them to the next carried values. Each
// iteration's region values are dropped at their last use, as in a body.
func (mc *machine) runWhile(f *ir.Func, in *ir.Instr, vals, carried []*backend.Buffer) ([]*backend.Buffer, error) {
	cond, body := in.Regions[ir.WhileCond], in.Regions[ir.WhileBody]
	for {
		more, err := mc.block(f, cond, vals, carried)
		if err != nil {
			return nil, err
		}
		if more[0].Int64At(0) == 0 {
			return carried, nil
		}
		if carried, err = mc.block(f, body, vals, carried); err != nil {
			return nil, err
		}
	}
}

// runCase runs branch k on the operands after the index; an index outside
// [0, N) runs the last branch, as StableHLO's case does.
func (mc *machine) runCase(f *ir.Func, in *ir.Instr, vals, args []*backend.Buffer) ([]*backend.Buffer, error) {
	return mc.block(f, in.Regions[CaseBranch(args[0].Int64At(0), len(in.Regions))], vals, args[1:])
}

// CaseBranch is the branch a case with n branches runs for index k.
func CaseBranch(k int64, n int) int {
	if k < 0 || k >= int64(n) {
		return n - 1
	}
	return int(k)
}
