package cpu

import (
	"fmt"

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

// evalControl runs a while or a case on its own (Eval), with a value table
// large enough for the values of its regions. Its operands are checked as
// Run checks arguments.
func evalControl(m *ir.Module, in *ir.Instr, args []*backend.Buffer) ([]*backend.Buffer, error) {
	if len(args) != len(in.Args) {
		return nil, ir.Errorf(in.Pos, "%s has %d operands, got %d tensors", in.Op, len(in.Args), len(args))
	}
	for i, a := range args {
		if a == nil || !sameType(a.Type(), in.Args[i].Type) {
			return nil, ir.Errorf(in.Pos, "operand %d of %s is %s, want %s", i, in.Op, typeOf(a), in.Args[i].Type)
		}
	}
	n := 0
	grow := func(v *ir.Value) { n = max(n, v.ID+1) }
	var err error
	for _, r := range in.Regions {
		for _, p := range r.Params {
			grow(p)
		}
		r.Walk(func(x *ir.Instr) {
			for _, v := range x.Results {
				grow(v)
				if err == nil && !v.Type.IsStatic() {
					err = ir.Errorf(x.Pos, "run needs static shapes: result of %s is %s", x.Op, v.Type)
				}
			}
			for _, r := range x.Regions {
				for _, p := range r.Params {
					grow(p)
				}
			}
		})
	}
	if err != nil {
		return nil, err
	}
	mc := &machine{m: m, proc: &process{}}
	return mc.instr(nil, in, make([]*backend.Buffer, n), args)
}

func typeOf(b *backend.Buffer) string {
	if b == nil {
		return "missing"
	}
	return fmt.Sprint(b.Type())
}
