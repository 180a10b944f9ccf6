package llvm

import (
	"fmt"
	"math"
	"slices"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// Elementwise code is generated as expressions: a value defined by an
// elementwise or index-remapping op is computed where it is used, at the
// index the use needs, down to leaves read from buffers. The dtypes
// generated so far are f32, f16 and bf16 (computed in f32 and rounded to
// their dtype after every op, which gives the reference executor's results
// bit for bit for the IEEE ops: it computes in f64 and rounds through f32),
// i32 and i1 (stored as one byte); every other dtype runs on the reference
// executor.

// elemType is how a dtype is held in registers and in memory.
func elemType(dt ir.DType) (reg, mem types.Type, ok bool) {
	switch dt {
	case ir.F32:
		return types.Float, types.Float, true
	case ir.I32, ir.U32:
		return types.I32, types.I32, true
	case ir.I8, ir.U8:
		return types.I8, types.I8, true
	case ir.I16, ir.U16:
		return types.I16, types.I16, true
	case ir.I64, ir.U64:
		return types.I64, types.I64, true
	case ir.I1:
		return types.I1, types.I8, true
	case ir.F16, ir.BF16:
		return types.Float, types.I16, true
	}
	return nil, nil, false
}

// floatish dtypes are held as f32 in registers.
func floatish(dt ir.DType) bool { return dt == ir.F32 || dt == ir.F16 || dt == ir.BF16 }

// widen turns a stored f16/bf16 bit pattern into its exact f32 value.
func (k *kfn) widen(x value.Value, dt ir.DType) value.Value {
	c := k.cur
	if dt == ir.F16 {
		return c.NewFPExt(c.NewBitCast(x, types.Half), types.Float)
	}
	return c.NewBitCast(c.NewShl(c.NewZExt(x, types.I32), constant.NewInt(types.I32, 16)), types.Float)
}

// narrow rounds an f32 to f16/bf16 bits to nearest even, as ir's
// Float32ToF16 and Float32ToBF16 do (a NaN stays a quiet NaN).
func (k *kfn) narrow(x value.Value, dt ir.DType) value.Value {
	c := k.cur
	if dt == ir.F16 {
		return c.NewBitCast(c.NewFPTrunc(x, types.Half), types.I16)
	}
	i32c := func(v int64) value.Value { return constant.NewInt(types.I32, v) }
	b := c.NewBitCast(x, types.I32)
	hi := c.NewLShr(b, i32c(16))
	rounded := c.NewLShr(c.NewAdd(c.NewAdd(b, i32c(0x7fff)), c.NewAnd(hi, i32c(1))), i32c(16))
	nan := c.NewOr(hi, i32c(0x40))
	r := c.NewSelect(c.NewFCmp(enum.FPredUNO, x, x), nan, rounded)
	return c.NewTrunc(r, types.I16)
}

// round brings an f32 result into dt (a no-op for f32).
func (k *kfn) round(x value.Value, dt ir.DType) value.Value {
	if dt == ir.F32 {
		return x
	}
	return k.widen(k.narrow(x, dt), dt)
}

func supportedType(t ir.Type) bool {
	_, _, ok := elemType(t.DType)
	return ok && t.IsStatic()
}

// exprOp reports whether this backend computes op as an expression: the
// elementwise ops of ir's table, which combine operands at the same index,
// and remapOps, which map an output index to their operands' indices; not
// the elementwise ops of refOps, which never have operands it can hold.
func exprOp(op ir.Op) bool { return op.Info().Elementwise && refOps[op] == "" || remapOps[op] }

var boolOps = map[ir.Op]bool{
	ir.OpNot: true, ir.OpAnd: true, ir.OpOr: true, ir.OpXor: true, ir.OpCompare: true,
	ir.OpSelect: true, ir.OpMax: true, ir.OpMin: true, ir.OpConvert: true, ir.OpCopy: true,
	ir.OpBroadcast: true, ir.OpTranspose: true, ir.OpReshape: true, ir.OpSlice: true, ir.OpConcat: true,
	ir.OpPad: true, ir.OpDynamicSlice: true, ir.OpOneHot: true, ir.OpShardingConstraint: true,
}

// isExpr reports whether in is computed as an expression by this backend.
func isExpr(in *ir.Instr) bool {
	if !exprOp(in.Op) || len(in.Results) != 1 || !supportedType(in.Results[0].Type) {
		return false
	}
	for _, a := range in.Args {
		if !supportedType(a.Type) {
			return false
		}
	}
	dt := in.Results[0].Type.DType
	switch in.Op {
	case ir.OpConstant:
		l := in.Attr.(*ir.ConstAttr).Value
		return l != nil && l.Len() == 1
	case ir.OpPow, ir.OpAtan2:
		return floatish(dt)
	case ir.OpConvert:
		from := in.Args[0].Type.DType
		switch {
		case floatish(from) && dt.IsInt():
			return false // float to integer saturates in the reference executor
		case (from == ir.I64 || from == ir.U64) && floatish(dt):
			return false // i64 to float rounds once in the reference, twice here
		}
	}
	if in.Args != nil && len(in.Args) > 0 && in.Args[0].Type.DType == ir.I1 {
		return boolOps[in.Op] // i1 arithmetic wraps in its own way
	}
	return true
}

// expr emits the computation of values at indices inside kernel k. Leaves
// are buffers of the kernel (by value); defs are the virtual values.
type expr struct {
	k    *kfn
	leaf func(*ir.Value) (int, bool) // the kernel buffer holding a materialised value
	defs map[*ir.Value]*ir.Instr
	memo map[string]value.Value
	bufs map[*ir.Value]int
	// flat: every index is one flat (row-major) index, the same for a
	// value and for what it reads (flatExpr).
	flat bool
	// seg says that the loop variable at runs over operand op of the
	// concat in alone, which starts at off along the concat's axis.
	seg struct {
		in  *ir.Instr
		at  value.Value
		op  int
		off int64
	}
}

// concatCuts are the offsets where each operand of the concat c starts
// along its axis, and its end; nil for no concat.
func concatCuts(c *ir.Instr) []int64 {
	if c == nil {
		return nil
	}
	axis := c.Attr.(*ir.AxisAttr).Axis
	cuts := []int64{0}
	for _, a := range c.Args {
		cuts = append(cuts, cuts[len(cuts)-1]+a.Type.Dims()[axis])
	}
	return cuts
}

// ownConcat is a concat that v reads at its own index (v itself, or
// through elementwise ops of v's shape), or nil. Its operands' parts of
// its axis can then each have a loop (or, in a row's dimension, a branch)
// of their own.
func ownConcat(v *ir.Value, defs map[*ir.Value]*ir.Instr) *ir.Instr {
	in := defs[v]
	if in == nil || len(v.Type.Dims()) < 2 {
		return nil
	}
	switch in.Op {
	case ir.OpConcat:
		if int(in.Attr.(*ir.AxisAttr).Axis) < len(v.Type.Dims())-1 && len(in.Args) > maxConcatParts {
			return nil // each part repeats the nest inside that axis
		}
		return in
	}
	if remapOps[in.Op] {
		return nil // reads its operand at another index
	}
	for _, a := range in.Args {
		if a.Type.SameShape(v.Type) {
			if c := ownConcat(a, defs); c != nil {
				return c
			}
		}
	}
	return nil
}

// lastConcat is a concat along the last axis that the expressions vs read
// with their own last index (through elementwise ops, transposes that keep
// the last axis last, reshapes and slices that keep it whole, broadcasts
// along other axes), or nil: rotary embedding's rotate_half, concat(-x2,
// x1), under the heads' transpose. Split at its cuts, the innermost loop
// reads one operand in each part (e.seg) where it selected between
// clamped reads of both, which the vectoriser left scalar. Values in
// memory (inMemory) are read, not computed, so the walk stops there; an
// index that does reach the concat otherwise only falls back to the
// selects (expr.concat compares the loop variable itself).
func lastConcat(vs []*ir.Value, defs map[*ir.Value]*ir.Instr, inMemory func(*ir.Value) bool) *ir.Instr {
	if len(vs) == 0 || vs[0].Type.Rank() < 2 {
		return nil
	}
	last := vs[0].Type.Dims()[vs[0].Type.Rank()-1]
	seen := map[*ir.Value]bool{}
	var walk func(v *ir.Value) *ir.Instr
	walk = func(v *ir.Value) *ir.Instr {
		in := defs[v]
		if in == nil || seen[v] || inMemory(v) || v.Type.Rank() == 0 || v.Type.Dims()[v.Type.Rank()-1] != last {
			return nil
		}
		seen[v] = true
		r := v.Type.Rank() - 1
		for _, a := range lastAxisOperands(in, r) {
			if a.Type.Rank() > 0 && a.Type.Dims()[a.Type.Rank()-1] == last {
				if c := walk(a); c != nil {
					return c
				}
			}
		}
		if in.Op == ir.OpConcat && int(in.Attr.(*ir.AxisAttr).Axis) == r && len(in.Args) <= maxConcatParts {
			return in
		}
		return nil
	}
	for _, v := range vs {
		if c := walk(v); c != nil {
			return c
		}
	}
	return nil
}

// lastAxisOperands are the operands of in (whose result's last axis is r)
// that it reads at its own last index.
func lastAxisOperands(in *ir.Instr, r int) []*ir.Value {
	switch in.Op {
	case ir.OpTranspose:
		if perm := in.Attr.(*ir.PermAttr).Perm; int(perm[r]) != r {
			return nil
		}
	case ir.OpReshape:
		// Equal last dimensions (lastConcat checks) make the last axis a
		// group of its own in reshapeIndex: its index passes through.
	case ir.OpSlice:
		a := in.Attr.(*ir.SliceAttr)
		if a.Start[r] != 0 || len(a.Stride) > 0 && a.Stride[r] != 1 {
			return nil
		}
	case ir.OpBroadcast:
		dims := in.Attr.(*ir.DimsAttr).Dims
		if len(dims) == 0 || int(dims[len(dims)-1]) != r {
			return nil
		}
	default:
		if !in.Op.Info().Elementwise || remapOps[in.Op] {
			return nil
		}
	}
	return in.Args
}

// flatExpr reports whether the expressions vs read every value at their
// own flat index: through elementwise ops of their shape and reshapes
// only, down to values in memory (inMemory) or single-element constants.
// Such a kernel is one loop over the flat index, whatever the shape: its
// text has no dimension in it (the range is its size), so copies and
// elementwise kernels that differ only in shape are one kernel
// (dedupeKernels; a decode step's reshapes of 16 x 128 and 1 x 1024
// were two).
func flatExpr(vs []*ir.Value, defs map[*ir.Value]*ir.Instr, inMemory func(*ir.Value) bool) bool {
	seen := map[*ir.Value]bool{}
	var flat func(v *ir.Value) bool
	flat = func(v *ir.Value) bool {
		if seen[v] || inMemory(v) {
			return true
		}
		seen[v] = true
		in := defs[v]
		switch {
		case in == nil:
			return false
		case in.Op == ir.OpReshape:
			return flat(in.Args[0])
		case in.Op == ir.OpConstant:
			return true // isExpr: one element
		case remapOps[in.Op] || len(in.Args) == 0:
			return false
		}
		for _, a := range in.Args {
			if !a.Type.SameShape(v.Type) || !flat(a) {
				return false
			}
		}
		return true
	}
	for _, v := range vs {
		if !flat(v) {
			return false
		}
	}
	return true
}

// maxConcatParts is the most operands a concat along an outer axis split
// into parts has (along the last axis each part is one loop anyway).
const maxConcatParts = 16

// leafBuf is the kernel buffer of v, if v is in memory.
func (e *expr) leafBuf(v *ir.Value) (int, bool) {
	if b, ok := e.bufs[v]; ok {
		return b, true
	}
	b, ok := e.leaf(v)
	if ok {
		e.bufs[v] = b
	}
	return b, ok
}

// at computes v at idx (one i64 per dimension of v).
func (e *expr) at(v *ir.Value, idx []value.Value) value.Value {
	key := memoKey(v, idx)
	if r, ok := e.memo[key]; ok {
		return r
	}
	r := e.compute(v, idx)
	e.memo[key] = r
	return r
}

// memoKey names v at idx in an expr's memo.
func memoKey(v *ir.Value, idx []value.Value) string {
	key := fmt.Sprintf("%p", v)
	for _, x := range idx {
		key += fmt.Sprintf(" %p", x)
	}
	return key
}

func (e *expr) compute(v *ir.Value, idx []value.Value) value.Value {
	k := e.k
	if b, ok := e.leafBuf(v); ok {
		reg, mem, _ := elemType(v.Type.DType)
		var at value.Value
		if e.flat {
			at = idx[0]
		} else {
			at = k.linear(idx, v.Type.Dims())
		}
		x := k.load(mem, k.buf(b, mem), at)
		switch {
		case v.Type.DType == ir.F16 || v.Type.DType == ir.BF16:
			return k.widen(x, v.Type.DType)
		case reg != mem:
			return k.cur.NewTrunc(x, reg)
		}
		return x
	}
	in := e.defs[v]
	if in == nil {
		panic(fmt.Sprintf("llvm: value %v is neither a leaf nor defined", v))
	}
	if r := e.remap(in, idx); r != nil {
		return r
	}
	args := make([]value.Value, len(in.Args))
	for i, a := range in.Args {
		args[i] = e.at(a, idx)
	}
	if len(args) == 0 {
		return e.nullary(in, idx)
	}
	dt := in.Results[0].Type.DType
	if in.Op == ir.OpConvert || in.Op == ir.OpCopy || in.Op == ir.OpShardingConstraint {
		return e.convert(args[0], in.Args[0].Type.DType, dt)
	}
	if floatish(in.Args[0].Type.DType) {
		r := e.float(in, args)
		if floatish(dt) {
			r = k.round(r, dt)
		}
		return r
	}
	return e.integer(in, args)
}

// remap handles the ops that read their operand at another index; nil for
// the others.
func (e *expr) remap(in *ir.Instr, idx []value.Value) value.Value {
	k := e.k
	src := in.Args
	if e.flat && in.Op == ir.OpReshape {
		return e.at(src[0], idx) // a row-major reshape moves no element
	}
	switch in.Op {
	case ir.OpBroadcast:
		dims := in.Attr.(*ir.DimsAttr).Dims
		od := src[0].Type.Dims()
		oi := make([]value.Value, len(dims))
		for i, d := range dims {
			if od[i] == 1 {
				oi[i] = ci(0)
			} else {
				oi[i] = idx[d]
			}
		}
		return e.at(src[0], oi)
	case ir.OpTranspose:
		perm := in.Attr.(*ir.PermAttr).Perm
		oi := make([]value.Value, len(perm))
		for i, p := range perm {
			oi[p] = idx[i]
		}
		return e.at(src[0], oi)
	case ir.OpReshape:
		return e.at(src[0], k.reshapeIndex(idx, in.Results[0].Type.Dims(), src[0].Type.Dims()))
	case ir.OpSlice:
		a := in.Attr.(*ir.SliceAttr)
		oi := make([]value.Value, len(idx))
		for i := range idx {
			s := int64(1)
			if len(a.Stride) > 0 {
				s = a.Stride[i]
			}
			oi[i] = k.mulAdd(idx[i], s, ci(a.Start[i]))
		}
		return e.at(src[0], oi)
	case ir.OpConcat:
		return e.concat(in, idx)
	case ir.OpPad:
		return e.pad(in, idx)
	case ir.OpDynamicSlice:
		return e.dynamicSlice(in, idx)
	case ir.OpOneHot:
		return e.oneHot(in, idx)
	}
	return nil
}

// index is the integer value v at idx as an i64, as Buffer.Int64At reads
// it: unsigned dtypes and i1 zero-extended, the others sign-extended; a u64
// of 2^63 or more is past any dimension, MaxInt64, as the reference reads it.
func (e *expr) index(v *ir.Value, idx []value.Value) value.Value {
	x := e.at(v, idx)
	dt := v.Type.DType
	switch {
	case dt == ir.I64:
		return x
	case dt == ir.U64:
		c := e.k.cur
		return c.NewSelect(c.NewICmp(enum.IPredSLT, x, constant.NewInt(i64, 0)), constant.NewInt(i64, math.MaxInt64), x)
	case dt.IsUnsigned() || dt == ir.I1:
		return e.k.cur.NewZExt(x, i64)
	}
	return e.k.cur.NewSExt(x, i64)
}

// oneHot is 1 where the index value equals the last coordinate; an index
// outside [0, depth) equals none, so its row is zeros.
func (e *expr) oneHot(in *ir.Instr, idx []value.Value) value.Value {
	k := e.k
	r := len(idx) - 1
	eq := k.cur.NewICmp(enum.IPredEQ, e.index(in.Args[0], idx[:r]), idx[r])
	dt := in.Results[0].Type.DType
	reg, _, _ := elemType(dt)
	switch {
	case dt == ir.I1:
		return eq
	case floatish(dt):
		return k.cur.NewSelect(eq, f32(1), f32(0))
	}
	return k.cur.NewZExt(eq, reg)
}

// concat evaluates every operand at its clamped index and selects the one
// the index falls in, unless the kernel's innermost loop runs over one
// operand's part alone (e.seg).
func (e *expr) concat(in *ir.Instr, idx []value.Value) value.Value {
	k := e.k
	axis := in.Attr.(*ir.AxisAttr).Axis
	if in == e.seg.in && idx[axis] == e.seg.at {
		oi := append([]value.Value(nil), idx...)
		oi[axis] = k.cur.NewSub(idx[axis], ci(e.seg.off))
		return e.at(in.Args[e.seg.op], oi)
	}
	var out value.Value
	off := int64(0)
	for _, a := range in.Args {
		n := a.Type.Dims()[axis]
		if n == 0 {
			continue
		}
		oi := append([]value.Value(nil), idx...)
		rel := k.cur.NewSub(idx[axis], ci(off))
		lo := k.cur.NewSelect(k.cur.NewICmp(enum.IPredSLT, rel, ci(0)), ci(0), rel)
		oi[axis] = k.cur.NewSelect(k.cur.NewICmp(enum.IPredSGT, lo, ci(n-1)), ci(n-1), lo)
		x := e.at(a, oi)
		if out == nil {
			out = x
		} else {
			out = k.cur.NewSelect(k.cur.NewICmp(enum.IPredSGE, idx[axis], ci(off)), x, out)
		}
		off += n
	}
	if out == nil { // every operand is empty along axis, so is the result: never read
		reg, _, _ := elemType(in.Results[0].Type.DType)
		return constant.NewZeroInitializer(reg)
	}
	return out
}

// pad reads, along each dimension, the operand element that lands at idx
// (at low, then every interior+1 positions) where there is one, and the
// padding value everywhere else. The operand index is clamped into range,
// so that the read is in bounds whichever value the select keeps.
func (e *expr) pad(in *ir.Instr, idx []value.Value) value.Value {
	k := e.k
	a := in.Attr.(*ir.PadAttr)
	x := in.Args[0]
	fill := e.at(in.Args[1], nil)
	dims := x.Type.Dims()
	oi := make([]value.Value, len(idx))
	var inside value.Value = constant.True
	for i, n := range dims {
		if n == 0 {
			return fill // the result is padding only
		}
		step := int64(1)
		if len(a.Interior) > 0 {
			step += a.Interior[i]
		}
		var rel, q, ok value.Value
		rel = k.cur.NewSub(idx[i], ci(a.Low[i]))
		q, ok = rel, k.cur.NewICmp(enum.IPredSGE, rel, ci(0))
		if step > 1 {
			q = k.cur.NewSDiv(rel, ci(step))
			ok = k.cur.NewAnd(ok, k.cur.NewICmp(enum.IPredEQ, k.cur.NewSRem(rel, ci(step)), ci(0)))
		}
		ok = k.cur.NewAnd(ok, k.cur.NewICmp(enum.IPredSLT, q, ci(n)))
		inside = k.cur.NewAnd(inside, ok)
		lo := k.cur.NewSelect(k.cur.NewICmp(enum.IPredSLT, q, ci(0)), ci(0), q)
		oi[i] = k.cur.NewSelect(k.cur.NewICmp(enum.IPredSGT, lo, ci(n-1)), ci(n-1), lo)
	}
	v := e.at(x, oi)
	return k.cur.NewSelect(inside, v, fill)
}

// dynamicSlice reads the operand at idx plus the window's start, each start
// clamped into [0, dim-size] as the reference executor clamps it.
func (e *expr) dynamicSlice(in *ir.Instr, idx []value.Value) value.Value {
	k := e.k
	dims, sizes := in.Args[0].Type.Dims(), in.Results[0].Type.Dims()
	oi := append([]value.Value(nil), idx...)
	for d, s := range in.Args[1:] {
		st := e.index(s, nil)
		lo := k.cur.NewSelect(k.cur.NewICmp(enum.IPredSLT, st, ci(0)), ci(0), st)
		hi := ci(dims[d] - sizes[d])
		oi[d] = k.cur.NewAdd(idx[d], k.cur.NewSelect(k.cur.NewICmp(enum.IPredSGT, lo, hi), hi, lo))
	}
	return e.at(in.Args[0], oi)
}

// reshapeIndex maps an index of a reshape's result (dims out) to its
// operand's (dims src). The dimensions fall into runs whose sizes multiply
// to the same count on both sides, and each run is mapped alone: splitting
// one dimension into several (heads out of a hidden dimension) is then a
// multiply-add, and only merging needs a division, by a constant. Going
// through the flat index divided every element's index by each dimension,
// and the loop vectoriser cannot see a contiguous read through that.
func (k *kfn) reshapeIndex(idx []value.Value, out, src []int64) []value.Value {
	res := make([]value.Value, 0, len(src))
	for i, j := 0, 0; i < len(out) || j < len(src); {
		i0, j0 := i, j
		po, ps := int64(1), int64(1)
		for !(i == len(out) && j == len(src)) && !(po == ps && i > i0 && j > j0) {
			if i < len(out) && (po <= ps || j == len(src)) {
				po *= out[i]
				i++
			} else {
				ps *= src[j]
				j++
			}
		}
		res = append(res, k.delinear(k.linear(idx[i0:i], out[i0:i]), src[j0:j])...)
	}
	return res
}

// delinear splits a flat index into dims' coordinates (unsigned division:
// indices are never negative, and a constant divisor becomes a multiply).
func (k *kfn) delinear(lin value.Value, dims []int64) []value.Value {
	out := make([]value.Value, len(dims))
	rest := lin
	for d := len(dims) - 1; d >= 0; d-- {
		if d == 0 {
			out[0] = rest
			break
		}
		if dims[d] == 1 {
			out[d] = ci(0)
			continue
		}
		out[d] = k.cur.NewURem(rest, ci(dims[d]))
		rest = k.cur.NewUDiv(rest, ci(dims[d]))
	}
	// Copies: callers may change the elements of either.
	k.delin = append(k.delin, delinearized{lin: lin, dims: slices.Clone(dims), idx: slices.Clone(out)})
	return out
}

func (e *expr) nullary(in *ir.Instr, idx []value.Value) value.Value {
	t := in.Results[0].Type
	reg, _, _ := elemType(t.DType)
	switch in.Op {
	case ir.OpIota:
		i := idx[in.Attr.(*ir.AxisAttr).Axis]
		switch t.DType {
		case ir.F32, ir.F16, ir.BF16:
			return e.k.round(e.k.cur.NewSIToFP(i, reg), t.DType)
		case ir.I1:
			return e.k.cur.NewICmp(enum.IPredNE, i, ci(0))
		case ir.I64, ir.U64:
			return i
		}
		return e.k.cur.NewTrunc(i, reg)
	case ir.OpConstant:
		l := in.Attr.(*ir.ConstAttr).Value
		switch t.DType {
		case ir.F32, ir.F16, ir.BF16:
			return constant.NewFloat(types.Float, float64(float32(t.DType.RoundFloat(l.Float(0)))))
		case ir.I1:
			return constant.NewBool(l.Int(0) != 0)
		}
		it := reg.(*types.IntType)
		v := t.DType.WrapInt(l.Int(0))
		if t.DType.IsUnsigned() { // LLVM writes the bits as a signed number
			v = v << (64 - it.BitSize) >> (64 - it.BitSize)
		}
		return constant.NewInt(it, v)
	}
	panic(fmt.Sprintf("llvm: no expression for %s", in.Op))
}

func (e *expr) convert(x value.Value, from, to ir.DType) value.Value {
	c := e.k.cur
	reg, _, _ := elemType(to)
	switch {
	case from == to:
		return x
	case floatish(from) && floatish(to):
		return e.k.round(x, to)
	case floatish(from) && to == ir.I1:
		return c.NewFCmp(enum.FPredUNE, x, constant.NewFloat(types.Float, 0))
	case from == ir.I1 && floatish(to):
		return e.k.round(c.NewUIToFP(x, reg), to)
	case from.IsSigned() && floatish(to):
		return e.k.round(c.NewSIToFP(x, reg), to)
	case from.IsUnsigned() && floatish(to):
		return e.k.round(c.NewUIToFP(x, reg), to)
	case from == ir.I1:
		return c.NewZExt(x, reg)
	case to == ir.I1:
		return c.NewICmp(enum.IPredNE, x, constant.NewInt(x.Type().(*types.IntType), 0))
	case from.Bits() > to.Bits():
		return c.NewTrunc(x, reg)
	case from.Bits() < to.Bits() && from.IsSigned():
		return c.NewSExt(x, reg)
	case from.Bits() < to.Bits():
		return c.NewZExt(x, reg)
	}
	if from.Bits() == to.Bits() { // i32 <-> u32: the same bits
		return x
	}
	panic(fmt.Sprintf("llvm: no conversion from %s to %s", from, to))
}

func f32(v float64) value.Value { return constant.NewFloat(types.Float, v) }

// call1 calls the one-argument float function name (an intrinsic or libm).
func (e *expr) call1(name string, x value.Value) value.Value {
	return e.k.cur.NewCall(e.k.g.declare(name, types.Float, types.Float), x)
}

func (e *expr) call2(name string, x, y value.Value) value.Value {
	return e.k.cur.NewCall(e.k.g.declare(name, types.Float, types.Float, types.Float), x, y)
}

// sigmoid is 1/(1+exp(-x)), as the reference executor writes it.
func (e *expr) sigmoid(x value.Value) value.Value {
	c := e.k.cur
	ex := c.NewCall(e.k.g.expf(), c.NewFNeg(x))
	return c.NewFDiv(f32(1), c.NewFAdd(f32(1), ex))
}

// floatCalls are the unary float ops that are one call of an LLVM intrinsic
// or a libm function on f32.
var floatCalls = map[ir.Op]string{
	ir.OpAbs: "llvm.fabs.f32", ir.OpLog: "llvm.log.f32", ir.OpLog1p: "log1pf", ir.OpExpm1: "expm1f",
	ir.OpSqrt: "llvm.sqrt.f32", ir.OpTanh: "tanhf", ir.OpSin: "llvm.sin.f32", ir.OpCos: "llvm.cos.f32",
	ir.OpFloor: "llvm.floor.f32", ir.OpCeil: "llvm.ceil.f32", ir.OpRound: "llvm.roundeven.f32",
	ir.OpErf: "erff", ir.OpCbrt: "cbrtf", ir.OpTan: "tanf", ir.OpRoundAFZ: "llvm.round.f32",
}

// float emits a float op on f32 operands.
func (e *expr) float(in *ir.Instr, a []value.Value) value.Value {
	c := e.k.cur
	if name, ok := floatCalls[in.Op]; ok {
		return e.call1(name, a[0])
	}
	switch in.Op {
	case ir.OpNeg:
		return c.NewFNeg(a[0])
	case ir.OpExp:
		return c.NewCall(e.k.g.expf(), a[0])
	case ir.OpRsqrt:
		return c.NewFDiv(f32(1), e.call1("llvm.sqrt.f32", a[0]))
	case ir.OpSigmoid:
		return e.sigmoid(a[0])
	case ir.OpSilu:
		return c.NewFMul(a[0], e.sigmoid(a[0]))
	case ir.OpGelu:
		return e.gelu(in, a[0])
	case ir.OpRelu:
		return e.k.fmax(a[0], f32(0), true)
	case ir.OpSign:
		pos := c.NewSelect(c.NewFCmp(enum.FPredOGT, a[0], f32(0)), f32(1), a[0])
		return c.NewSelect(c.NewFCmp(enum.FPredOLT, a[0], f32(0)), f32(-1), pos)
	case ir.OpAdd:
		return c.NewFAdd(a[0], a[1])
	case ir.OpSub:
		return c.NewFSub(a[0], a[1])
	case ir.OpMul:
		return c.NewFMul(a[0], a[1])
	case ir.OpDiv:
		return c.NewFDiv(a[0], a[1])
	case ir.OpRem:
		return c.NewFRem(a[0], a[1])
	case ir.OpPow:
		return e.call2("llvm.pow.f32", a[0], a[1])
	case ir.OpAtan2:
		return e.call2("atan2f", a[0], a[1])
	case ir.OpMax:
		return e.k.fmax(a[0], a[1], true)
	case ir.OpMin:
		return e.k.fmax(a[0], a[1], false)
	case ir.OpCompare:
		return c.NewFCmp(fpred[in.Attr.(*ir.CompareAttr).Dir], a[0], a[1])
	case ir.OpSelect:
		return c.NewSelect(a[0], a[1], a[2])
	case ir.OpClamp:
		return e.k.fmax(e.k.fmax(a[1], a[0], true), a[2], false)
	}
	panic(fmt.Sprintf("llvm: no f32 expression for %s (add it to floatCalls or expr.float in backend/llvm/expr.go)", in.Op))
}

// fpred: ordered comparisons are false on NaN, ne is true on NaN, as Go's
// operators (and so the reference executor) behave.
var fpred = map[ir.CmpDir]enum.FPred{
	ir.CmpEQ: enum.FPredOEQ, ir.CmpNE: enum.FPredUNE, ir.CmpLT: enum.FPredOLT,
	ir.CmpLE: enum.FPredOLE, ir.CmpGT: enum.FPredOGT, ir.CmpGE: enum.FPredOGE,
}

var ipred = map[ir.CmpDir]enum.IPred{
	ir.CmpEQ: enum.IPredEQ, ir.CmpNE: enum.IPredNE, ir.CmpLT: enum.IPredSLT,
	ir.CmpLE: enum.IPredSLE, ir.CmpGT: enum.IPredSGT, ir.CmpGE: enum.IPredSGE,
}

func (e *expr) gelu(in *ir.Instr, x value.Value) value.Value {
	c := e.k.cur
	var inner value.Value
	if in.Attr.(*ir.GeluAttr).Approximate {
		x3 := c.NewFMul(c.NewFMul(x, x), x)
		t := c.NewFMul(f32(float64(float32(math.Sqrt(2/math.Pi)))), c.NewFAdd(x, c.NewFMul(f32(float64(float32(0.044715))), x3)))
		inner = e.call1("tanhf", t)
	} else {
		inner = e.call1("erff", c.NewFMul(x, f32(float64(float32(1/math.Sqrt2)))))
	}
	return c.NewFMul(c.NewFMul(f32(0.5), x), c.NewFAdd(f32(1), inner))
}

// integer emits an op on integer or i1 operands. Two's complement
// arithmetic wraps exactly as the reference executor wraps into the dtype;
// unsigned dtypes and i1 (0 and 1) order without sign.
func (e *expr) integer(in *ir.Instr, a []value.Value) value.Value {
	c := e.k.cur
	dt := in.Args[0].Type.DType
	signed := dt.IsSigned()
	it, _ := a[0].Type().(*types.IntType)
	if in.Op == ir.OpSelect || in.Op == ir.OpClamp {
		it, _ = a[1].Type().(*types.IntType)
	}
	n := func(v int64) value.Value { return constant.NewInt(it, v) }
	switch in.Op {
	case ir.OpNeg:
		return c.NewSub(n(0), a[0])
	case ir.OpAbs:
		if !signed {
			return a[0]
		}
		return c.NewSelect(c.NewICmp(enum.IPredSLT, a[0], n(0)), c.NewSub(n(0), a[0]), a[0])
	case ir.OpRelu:
		return e.imax(a[0], n(0), signed)
	case ir.OpSign:
		pos := c.NewSelect(c.NewICmp(enum.IPredNE, a[0], n(0)), n(1), n(0))
		if !signed {
			return pos
		}
		return c.NewSelect(c.NewICmp(enum.IPredSLT, a[0], n(0)), n(-1), pos)
	case ir.OpNot:
		if dt == ir.I1 {
			return c.NewXor(a[0], constant.NewBool(true))
		}
		return c.NewXor(a[0], n(-1))
	case ir.OpAdd:
		return c.NewAdd(a[0], a[1])
	case ir.OpSub:
		return c.NewSub(a[0], a[1])
	case ir.OpMul:
		return c.NewMul(a[0], a[1])
	case ir.OpAnd:
		return c.NewAnd(a[0], a[1])
	case ir.OpOr:
		return c.NewOr(a[0], a[1])
	case ir.OpXor:
		return c.NewXor(a[0], a[1])
	case ir.OpMax:
		return e.imax(a[0], a[1], signed)
	case ir.OpMin:
		return e.imin(a[0], a[1], signed)
	case ir.OpDiv, ir.OpRem:
		return e.divide(in.Op, a[0], a[1], it, signed)
	case ir.OpShiftLeft, ir.OpShiftRightLogical, ir.OpShiftRightArithmetic:
		return e.shift(in.Op, a[0], a[1], it)
	case ir.OpPopcnt:
		return c.NewCall(e.k.g.declare(fmt.Sprintf("llvm.ctpop.i%d", it.BitSize), it, it), a[0])
	case ir.OpClz: // defined at 0: the bit width
		return c.NewCall(e.k.g.declare(fmt.Sprintf("llvm.ctlz.i%d", it.BitSize), it, it, types.I1), a[0], constant.NewBool(false))
	case ir.OpCompare:
		p := ipred[in.Attr.(*ir.CompareAttr).Dir]
		if !signed {
			p = upred[p]
		}
		return c.NewICmp(p, a[0], a[1])
	case ir.OpSelect:
		return c.NewSelect(a[0], a[1], a[2])
	case ir.OpClamp:
		s2 := in.Args[1].Type.DType.IsSigned()
		return e.imin(e.imax(a[1], a[0], s2), a[2], s2)
	}
	panic(fmt.Sprintf("llvm: no integer expression for %s", in.Op))
}

// divide is the reference executor's integer a / b or a % b, which
// divides in int64 and wraps into the dtype: a / 0 is -1 (all ones) and
// a % 0 is a; signed MIN / -1 wraps to MIN and MIN % -1 is 0. The divisor
// the instruction sees is 1 in those cases, so it never traps.
func (e *expr) divide(op ir.Op, a, b value.Value, it *types.IntType, signed bool) value.Value {
	c := e.k.cur
	n := func(v int64) value.Value { return constant.NewInt(it, v) }
	zero := c.NewICmp(enum.IPredEQ, b, n(0))
	var one value.Value = zero
	if signed { // b = -1: MIN / -1 is MIN = a / 1, and x % -1 is 0 = x % 1
		var m1 value.Value = c.NewICmp(enum.IPredEQ, b, n(-1))
		if op == ir.OpDiv {
			m1 = c.NewAnd(m1, c.NewICmp(enum.IPredEQ, a, n(-1<<(it.BitSize-1))))
		}
		one = c.NewOr(zero, m1)
	}
	d := c.NewSelect(one, n(1), b)
	switch {
	case op == ir.OpDiv && signed:
		return c.NewSelect(zero, n(-1), c.NewSDiv(a, d))
	case op == ir.OpDiv:
		return c.NewSelect(zero, n(-1), c.NewUDiv(a, d))
	case signed:
		return c.NewSelect(zero, a, c.NewSRem(a, d))
	}
	return c.NewSelect(zero, a, c.NewURem(a, d))
}

// shift is the reference executor's shift: LLVM's shifts are poison from
// the bit width on, so the amount (unsigned) is checked first: the left and
// logical shifts give 0 there, the arithmetic one shifts by width-1.
func (e *expr) shift(op ir.Op, a, b value.Value, it *types.IntType) value.Value {
	c := e.k.cur
	n := func(v int64) value.Value { return constant.NewInt(it, v) }
	w := int64(it.BitSize)
	big := c.NewICmp(enum.IPredUGE, b, n(w))
	switch op {
	case ir.OpShiftLeft:
		return c.NewSelect(big, n(0), c.NewShl(a, c.NewSelect(big, n(0), b)))
	case ir.OpShiftRightLogical:
		return c.NewSelect(big, n(0), c.NewLShr(a, c.NewSelect(big, n(0), b)))
	}
	return c.NewAShr(a, c.NewSelect(big, n(w-1), b))
}

// upred compares unsigned values and i1 (0 and 1; signed i1 has -1 for true).
var upred = map[enum.IPred]enum.IPred{
	enum.IPredEQ: enum.IPredEQ, enum.IPredNE: enum.IPredNE, enum.IPredSLT: enum.IPredULT,
	enum.IPredSLE: enum.IPredULE, enum.IPredSGT: enum.IPredUGT, enum.IPredSGE: enum.IPredUGE,
}

func (e *expr) imax(x, y value.Value, signed bool) value.Value {
	p := enum.IPredSGT
	if !signed {
		p = enum.IPredUGT
	}
	return e.k.cur.NewSelect(e.k.cur.NewICmp(p, x, y), x, y)
}

func (e *expr) imin(x, y value.Value, signed bool) value.Value {
	p := enum.IPredSLT
	if !signed {
		p = enum.IPredULT
	}
	return e.k.cur.NewSelect(e.k.cur.NewICmp(p, x, y), x, y)
}

// fmax is the reference executor's max (or min): NaN propagates, and -0
// orders below +0. (LLVM 14 cannot select llvm.maximum on x86.)
func (k *kfn) fmax(a, b value.Value, isMax bool) value.Value {
	c := k.cur
	p := enum.FPredOGT
	if !isMax {
		p = enum.FPredOLT
	}
	r := c.NewSelect(c.NewFCmp(p, a, b), a, b)
	var it, ft types.Type = types.I32, types.Float
	if vt, ok := a.Type().(*types.VectorType); ok { // lane by lane
		it, ft = types.NewVector(vt.Len, types.I32), vt
	}
	ai, bi := c.NewBitCast(a, it), c.NewBitCast(b, it)
	var z value.Value
	if isMax {
		z = c.NewAnd(ai, bi)
	} else {
		z = c.NewOr(ai, bi)
	}
	r = c.NewSelect(c.NewFCmp(enum.FPredOEQ, a, b), c.NewBitCast(z, ft), r)
	return c.NewSelect(c.NewFCmp(enum.FPredUNO, a, b), c.NewFAdd(a, b), r)
}
