package llvm

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// refEval runs in on the reference executor, reading its operands from
// args and copying its results into outs (planned memory); m resolves the
// calls inside a while's or case's regions (nil where there are none).
func refEval(m *ir.Module, in *ir.Instr, args, outs []*backend.Buffer) error {
	res, err := cpu.EvalIn(m, in, args)
	if err != nil {
		return err
	}
	if len(res) != len(outs) {
		return ir.Errorf(in.Pos, "internal error: %s gave %d results, want %d", in.Op, len(res), len(outs))
	}
	for i, r := range res {
		if len(r.Bytes()) != len(outs[i].Bytes()) {
			return ir.Errorf(in.Pos, "internal error: %s result %d is %s, want %s", in.Op, i, r.Type(), outs[i].Type())
		}
		copy(outs[i].Bytes(), r.Bytes())
	}
	return nil
}

// refConstant evaluates a constant instruction into its bytes.
func refConstant(in *ir.Instr) ([]byte, error) {
	t := in.Results[0].Type
	if !t.IsStatic() {
		return nil, ir.Errorf(in.Pos, "the llvm backend needs static shapes: %s", t)
	}
	out := backend.New(t)
	if err := refEval(nil, in, nil, []*backend.Buffer{out}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
