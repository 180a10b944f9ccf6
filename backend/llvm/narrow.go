package llvm

import "github.com/tpucc/tpucc/ir"

// A checkpoint stored in bf16 (most of Hugging Face's) keeps its weights
// bf16 in memory, and each step of the model converts them to f32 as it
// uses them: `%w32 = convert %w : f32[...]` feeding a dot_general.
// Materialised, that convert read 2 bytes and wrote 4 for every weight on
// every step, and the product read the 4 again: a Qwen3-0.6B decode step
// spent 177 of its 303 ms converting. Instead the convert is not planned
// at all and the products read the bf16 weights and widen them in
// registers (fbuf.vload8, the gemm's packing), which is exact: widening
// f16/bf16 to f32 loses nothing, and the product computes in f32 either
// way.

// deferNarrow finds body's converts that no step needs: f32 converts of
// f16 or bf16 values whose every use is an operand (lhs or rhs) of a
// generated dot_general of body itself with an f32 result, or a transpose
// [0,2,1] that only generated ragged_dots take as their rhs (an MoE's
// experts stored [experts, out, in], which those kernels read as stored:
// raggedRhsT). It records the narrow value of each in pl.narrowSrc, where
// the kernels find it, and returns the converts, which are then never
// planned. The narrow value is in
// memory when the product runs: a parameter, or a value the convert's use
// outside its group made flush keep.
func (pl *planner) deferNarrow(body []*ir.Instr, users map[*ir.Value][]*ir.Instr) map[*ir.Instr]bool {
	at := map[*ir.Instr]int{}
	for i, in := range body {
		at[in] = i
	}
	out := map[*ir.Instr]bool{}
	for _, c := range body {
		if c.Op != ir.OpConvert || c.Results[0].Type.DType != ir.F32 || !c.Results[0].Type.IsStatic() {
			continue
		}
		r, src := c.Results[0], c.Args[0]
		if dt := src.Type.DType; dt != ir.BF16 && dt != ir.F16 || len(users[r]) == 0 {
			continue
		}
		ok := true
		for _, u := range users[r] {
			ok = ok && (narrowDot(u) || narrowRaggedT(u, body, at, users) || narrowFusion(u, r))
		}
		if !ok {
			continue
		}
		out[c] = true
		pl.narrowSrc[r] = src
	}
	return out
}

// narrowDot reports whether u is a dot_general whose kernel reads narrow
// operands: generated (floats, static) with an f32 result.
func narrowDot(u *ir.Instr) bool {
	return u.Op == ir.OpDotGeneral && floatStatic(u) && u.Results[0].Type.DType == ir.F32
}

// narrowFusion reports whether u is a fusion that the planner opens into
// its group (inlinable) and reads r only as the operand of its generated
// dot_generals: a product with a layout epilogue (a projection whose
// result is transposed into heads) reading bf16 activations. Its products
// find the narrow value through the fusion's binding (reshapedOperand).
func narrowFusion(u *ir.Instr, r *ir.Value) bool {
	if !inlinable(u) {
		return false
	}
	body := u.FusionBody()
	for i, a := range u.Args {
		if a != r {
			continue
		}
		p, used := body.Params[i], false
		for _, x := range body.Instrs {
			for _, b := range x.Args {
				if b == p && !narrowDot(x) {
					return false
				}
				used = used || b == p
			}
		}
		if !used {
			return false
		}
	}
	return true
}

// narrowRaggedT reports whether u is a transpose that stays virtual as
// the rhs of generated ragged_dots (raggedRhsT), and only that: body
// holds it and them with nothing between that would end the group (a
// call, or a fusion not opened into it), since it is the group that
// leaves the transpose unplanned.
func narrowRaggedT(u *ir.Instr, body []*ir.Instr, at map[*ir.Instr]int, users map[*ir.Value][]*ir.Instr) bool {
	if u.Op != ir.OpTranspose || len(users[u.Results[0]]) == 0 {
		return false
	}
	for _, d := range users[u.Results[0]] {
		if d.Op != ir.OpRaggedDot || raggedRhsT(d, 1, map[*ir.Value]*ir.Instr{u.Results[0]: u}) == nil {
			return false
		}
		i, j := at[u], at[d]
		if j < i {
			return false
		}
		for _, x := range body[i+1 : j] {
			if x.Op == ir.OpCall || x.Op == ir.OpCustomCall || x.Op == ir.OpFusion && !inlinable(x) {
				return false
			}
		}
	}
	return true
}

// dotShape is in's shape as its kernel reads it: an operand read at its
// own width (deferNarrow, or through a convert operandSource followed) has
// that dtype.
func (pl *planner) dotShape(in *ir.Instr) dotShape {
	d := analyseDot(in)
	if x := pl.operandRead(in, 0); x != nil {
		d.lhs.dt = x.Type.DType
	}
	if x := pl.operandRead(in, 1); x != nil {
		d.rhs.dt = x.Type.DType
	}
	return d
}

// operandRead is the value whose memory in's kernel reads for operand i
// when that is not the operand itself, else nil.
func (pl *planner) operandRead(in *ir.Instr, i int) *ir.Value {
	if x := pl.reshaped[in][i]; x != nil {
		return x
	}
	return pl.narrowSrc[in.Args[i]]
}

// A loop over stacked bf16 weights reads layer i's weight as
// convert(reshape(dynamic_slice(W, i, 0, 0))), the reshape and convert a
// loop fusion of their own, and a product that takes an epilogue (a
// residual add, an activation) sits in an output fusion. deferNarrow sees
// neither: the convert is not an instruction of the function's body, and
// the fusion's operand is the converted weight, which was materialised as
// f32 on every trip: a Qwen3-0.6B-shaped decode step read each weight as
// bf16, wrote it as f32 and read that again, slower than f32 weights.
// operandSource sees through those expressions to the value in memory (or
// the contiguous slice a view reads, view.go), which the product reads at
// its own width.

// operandSource follows v back through the expressions a product may
// read through in place: copies (an opened fusion's bindings), one
// reshape (row-major: the elements do not move) and, when narrow (the
// product widens narrow operands), one f32 convert of an f16/bf16 value.
// It returns the value reached (nil when it followed nothing) and whether
// a reshape or convert was followed, not copies alone.
func operandSource(v *ir.Value, defs map[*ir.Value]*ir.Instr, narrow bool) (*ir.Value, bool) {
	x, reshaped, converted := v, false, false
	// defs holds the group's expressions, constants and iotas among them:
	// an operand-less definition ends the walk (a constant operand, oracle
	// seed 20085, reached past them).
	for d := defs[x]; d != nil && len(d.Args) > 0; d = defs[x] {
		plain := d.Results[0].Type.Layout == nil && d.Args[0].Type.Layout == nil
		switch {
		case d.Op == ir.OpCopy:
		case d.Op == ir.OpReshape && !reshaped && plain:
			reshaped = true
		case d.Op == ir.OpConvert && narrow && !converted && plain &&
			d.Results[0].Type.DType == ir.F32 && d.Args[0].Type.DType != ir.F32 && wideable(d.Args[0].Type.DType):
			converted = true
		default:
			return source(x, v), reshaped || converted
		}
		x = d.Args[0]
	}
	return source(x, v), reshaped || converted
}

// source is x, or nil when it is v itself.
func source(x, v *ir.Value) *ir.Value {
	if x == v {
		return nil
	}
	return x
}

// wideable reports whether a product's kernel reads operands of dt: f32,
// or f16/bf16 widened as they are loaded.
func wideable(dt ir.DType) bool { return dt == ir.F32 || dt == ir.F16 || dt == ir.BF16 }
