package target

import "github.com/tpucc/tpucc/ir"

// Check reports, with positions, the operations of m that this target's
// compiler cannot build, so that tpucc build says so at the user's line instead
// of handing XLA a module it rejects. Today that is one case, found by
// compiling every op and dtype with libtpu's compile-only client: TPUs have no
// 64-bit integer units, and XLA:TPU's X64 rewrite has no rule for dot, so an
// i64 dot_general fails with "While rewriting computation to not contain
// X{64|128} element types ... not implemented". Every other op and dtype
// compiled. The CPU target accepts everything.
func (t *Target) Check(m *ir.Module) error {
	if t.Kind != KindTPU {
		return nil
	}
	var errs []*ir.Error
	for _, f := range m.Funcs {
		f.Body.Walk(func(in *ir.Instr) {
			if in.Op == ir.OpDotGeneral && in.Args[0].Type.DType == ir.I64 {
				errs = append(errs, ir.Errorf(in.Pos, "%s has no 64-bit integer matmul: dot_general on %s cannot be compiled for it (use i32, or a float type)",
					t.name, in.Args[0].Type.DType))
			}
			if in.Op == ir.OpReducePrecision && in.Args[0].Type.DType == ir.F64 {
				// XLA:TPU rewrites f64 into pairs of f32 and has no rule for reduce-precision (UNIMPLEMENTED).
				errs = append(errs, ir.Errorf(in.Pos, "%s cannot compile reduce_precision on f64 (use f32)", t.name))
			}
		})
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return &ir.ErrorList{Errs: errs}
}
