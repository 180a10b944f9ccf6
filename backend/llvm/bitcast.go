package llvm

import (
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// bitcastConvert generates bitcast_convert as the reference does it: both
// sides hold little-endian elements of whole bytes, so the result is the
// operand's bytes as they are, one byte per index of the kernel's range
// (a loop clang vectorises). Complex, sub-byte and empty values are left
// to the reference executor (fallbackReason names them).
func (pl *planner) bitcastConvert(in *ir.Instr, env map[*ir.Value]int) bool {
	x, r := in.Args[0].Type, in.Results[0].Type
	n, ok := x.NumElements()
	for _, d := range []ir.DType{x.DType, r.DType} {
		_, whole := copyType(d)
		ok = ok && whole && !d.IsComplex() && d.Bits() == 8*d.Size()
	}
	if !ok || n == 0 || !r.IsStatic() {
		return false
	}
	bytes := n * int64(x.DType.Size())
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work = bytes, bytes
	out, src := k.buf(0, types.I8), k.buf(1, types.I8)
	k.loop(k.lo, k.hi, nil, func(i value.Value, _ []value.Value) []value.Value {
		k.store(k.load(types.I8, src, i), out, i)
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}
