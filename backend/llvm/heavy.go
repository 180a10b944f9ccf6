package llvm

import (
	"github.com/tpucc/tpucc/ir"
)

// kernel generates the kernel of a non-expression instruction when this
// backend has one for it, and reports whether it did.
func (pl *planner) kernel(in *ir.Instr, env map[*ir.Value]int) (bool, error) {
	for _, v := range append(append([]*ir.Value{}, in.Args...), in.Results...) {
		if v.Type.DType != ir.F32 || !v.Type.IsStatic() {
			return false, nil
		}
	}
	switch in.Op {
	case ir.OpDotGeneral:
		return pl.dot(in, env), nil
	case ir.OpReduceSum, ir.OpReduceMax, ir.OpReduceMin, ir.OpReduceProd:
		return pl.reduce(in, env), nil
	case ir.OpSoftmax, ir.OpLogSoftmax:
		return pl.softmax(in, env), nil
	case ir.OpRMSNorm, ir.OpLayerNorm:
		return pl.norm(in, env), nil
	}
	return false, nil
}

// newKernelStep starts the step of a kernel for in: one output slot per
// result, then in's operands.
func (pl *planner) newKernelStep(in *ir.Instr, env map[*ir.Value]int) (*kfn, step) {
	k := pl.p.gen.newKernel()
	st := step{kind: stepKernel, name: k.name, outs: len(in.Results), what: in.Op.String()}
	for _, r := range in.Results {
		st.bufs = append(st.bufs, pl.newSlot(slot{typ: r.Type}))
	}
	for _, a := range in.Args {
		st.bufs = append(st.bufs, env[a])
	}
	return k, st
}

// addStep records a finished kernel step and binds in's results.
func (pl *planner) addStep(in *ir.Instr, env map[*ir.Value]int, st step) {
	for i, r := range in.Results {
		env[r] = st.bufs[i]
	}
	pl.p.steps = append(pl.p.steps, st)
}
