package target

import "github.com/tpucc/tpucc/ir"

// Check reports, with positions, the operations of m that this target's
// compiler cannot build, so that tpucc build says so at the user's line instead
// of handing XLA a module it rejects. Today that is one case, found by
// compiling every op and dtype with libtpu's compile-only client: TPUs have no
// 64-bit integer units, and XLA:TPU's X64 rewrite has no rule for dot, so an
// i64 dot_general fails with "While rewriting computation to not contain
// X{64|128} element types ... not implemented" (u64 likewise). Every other op
// and dtype compiled, but for c128 and for i2 and u2. libtpu (0.0.x with jax
// 0.10) compiles add, mul, exp on c128 and crashes the process on div, tanh,
// abs and pow, and refuses sign, so c128 is refused outright (c64 compiled
// for every op defined on it). i2 and u2: libtpu (v5e and v6e, compile-only)
// rejects them outside tiles of at least 16 rows of 128 ("INT2 is not
// supported for rank 1") and, within such tiles, aborts on some modules that
// hold them (an i2 negate beside a u2 multiply, or beside a u64 reduction:
// "pipeline_emitter.cc: Check failed: params.span_buffer != nullptr"), so
// TPU targets refuse them. The CPU target accepts everything.
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
		if e := t.checkInt2(f.Pos, "parameter", f.Params); e != nil {
			errs = append(errs, e)
		}
		if e := t.checkF6(f.Pos, "parameter", f.Params); e != nil {
			errs = append(errs, e)
		}
		f.Body.Walk(func(in *ir.Instr) { errs = append(errs, t.checkInstr(in)...) })
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return &ir.ErrorList{Errs: errs}
}

// checkInstr is Check of one instruction.
func (t *Target) checkInstr(in *ir.Instr) []*ir.Error {
	var errs []*ir.Error
	for _, r := range in.Results {
		if r.Type.DType == ir.C128 {
			errs = append(errs, t.noC128(in.Pos, in.Op.String()))
			break
		}
	}
	if d := in.Args; in.Op == ir.OpDotGeneral && (d[0].Type.DType == ir.I64 || d[0].Type.DType == ir.U64) {
		errs = append(errs, ir.Errorf(in.Pos, "%s has no 64-bit integer matmul: dot_general on %s cannot be compiled for it (use i32, or a float type)",
			t.name, in.Args[0].Type.DType))
	}
	if e := t.checkInt2(in.Pos, in.Op.String(), in.Results); e != nil {
		errs = append(errs, e)
	}
	if e := t.checkF6(in.Pos, in.Op.String(), in.Results); e != nil {
		errs = append(errs, e)
	}
	if in.Op == ir.OpReducePrecision && in.Args[0].Type.DType == ir.F64 {
		// XLA:TPU rewrites f64 into pairs of f32 and has no rule for reduce-precision (UNIMPLEMENTED).
		errs = append(errs, ir.Errorf(in.Pos, "%s cannot compile reduce_precision on f64 (use f32)", t.name))
	}
	if a, ok := in.Attr.(*ir.RngAttr); ok && a.Algorithm == ir.RngDefault && in.Args[0].Type.Dims()[0] == 3 {
		// libtpu's default generator keeps a u64[2] state: it fails an
		// internal check on u64[3] ("ShapeUtil::Compatible ... (u64[3], ...)
		// vs (u64[2], ...)", compile-only, v5e and v6e, jax 0.10.2).
		errs = append(errs, ir.Errorf(in.Pos, "%s cannot compile rng_bit_generator {algorithm=default} of a u64[3] state (use u64[2], or algorithm=philox)", t.name))
	}
	if a, ok := in.Attr.(*ir.DotAttr); ok && a.Algorithm != nil && a.Algorithm.Lhs != ir.BF16 {
		// libtpu implements bf16 x bf16 in f32 alone of the algorithms
		// tpucc keeps: "UNIMPLEMENTED: Dot algorithm ALG_DOT_F32_F32_F32
		// is not supported" (also F16_F16_F32; compile-only, v5e and v6e,
		// jax 0.10.2).
		errs = append(errs, ir.Errorf(in.Pos, "%s cannot compile dot_general {algorithm=[%s,%s,%s,...]}: of the algorithms tpucc keeps, it has bf16 x bf16 in f32 alone (drop the algorithm, or give bf16 operands)", t.name, a.Algorithm.Lhs, a.Algorithm.Rhs, a.Algorithm.Acc))
	}
	return errs
}

// noC128 refuses a c128 value, named by what.
func (t *Target) noC128(pos ir.Pos, what string) *ir.Error {
	return ir.Errorf(pos, "%s has no c128: %s is c128, which cannot be compiled for it (use c64)", t.name, what)
}

// checkF6 refuses f6e2m3fn and f6e3m2fn values, each where it is defined:
// libtpu (compile-only, v5e and v6e, jax 0.10.2) rejects a convert to them
// ("Invalid XLA PrimitiveType: 36 (F6E2M3FN)") and crashes the process on a
// module that also holds f8 constants and dot_generals. The f8 types and f4
// compile.
func (t *Target) checkF6(pos ir.Pos, what string, vals []*ir.Value) *ir.Error {
	for _, v := range vals {
		if d := v.Type.DType; d == ir.F6E2M3FN || d == ir.F6E3M2FN {
			return ir.Errorf(pos, "%s cannot compile %s values (libtpu rejects or crashes on them): %s %s (use an f8 type)",
				t.name, d, what, ir.Type{DType: d, Shape: v.Type.Shape})
		}
	}
	return nil
}

// checkInt2 refuses i2 and u2 values, each where it is defined.
func (t *Target) checkInt2(pos ir.Pos, what string, vals []*ir.Value) *ir.Error {
	for _, v := range vals {
		if d := v.Type.DType; d == ir.I2 || d == ir.U2 {
			return ir.Errorf(pos, "%s cannot compile %s values (libtpu rejects or aborts on them): %s %s (use i4 or i8)",
				t.name, d, what, ir.Type{DType: d, Shape: v.Type.Shape})
		}
	}
	return nil
}
