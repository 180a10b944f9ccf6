package target

import "github.com/tpucc/tpucc/ir"

// Check reports, with positions, the operations of m that this target's
// compiler cannot build, so that tpucc build says so at the user's line instead
// of handing XLA a module it rejects. Today that is one case, found by
// compiling every op and dtype with libtpu's compile-only client: TPUs have no
// 64-bit integer units, and XLA:TPU's X64 rewrite has no rule for dot, so an
// i64 dot_general fails with "While rewriting computation to not contain
// X{64|128} element types ... not implemented". Every other op and dtype
// compiled, but for c128: libtpu (0.0.x with jax 0.10) compiles add, mul,
// exp on c128 and crashes the process on div, tanh, abs and pow, and refuses
// sign, so c128 is refused outright (c64 compiled for every op defined on
// it). The CPU target accepts everything.
func (t *Target) Check(m *ir.Module) error {
	if t.Kind != KindTPU {
		return nil
	}
	var errs []*ir.Error
	for _, f := range m.Funcs {
		for _, p := range f.Params {
			if p.Type.DType == ir.C128 {
				errs = append(errs, t.noC128(p.Pos, "parameter %"+p.Name))
			}
		}
		f.Body.Walk(func(in *ir.Instr) {
			for _, r := range in.Results {
				if r.Type.DType == ir.C128 {
					errs = append(errs, t.noC128(in.Pos, in.Op.String()))
					break
				}
			}
			if in.Op == ir.OpDotGeneral && in.Args[0].Type.DType == ir.I64 {
				errs = append(errs, ir.Errorf(in.Pos, "%s has no 64-bit integer matmul: dot_general on %s cannot be compiled for it (use i32, or a float type)",
					t.name, in.Args[0].Type.DType))
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

func (t *Target) noC128(pos ir.Pos, what string) *ir.Error {
	return ir.Errorf(pos, "%s has no c128: %s is c128, which cannot be compiled for it (use c64)", t.name, what)
}
