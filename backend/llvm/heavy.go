package llvm

import (
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// kernelFunc plans in as a kernel and reports whether it did (false: in's
// operand types are outside what the kernel handles).
type kernelFunc func(pl *planner, in *ir.Instr, env map[*ir.Value]int) bool

// kernels are the ops with a kernel of their own, besides the reductions
// over axes of ir's table (reduceKernel).
var kernels = map[ir.Op]kernelFunc{
	ir.OpRaggedDot:          (*planner).raggedDot, // its group sizes are i32
	ir.OpRaggedContract:     (*planner).raggedContract,
	ir.OpTopK:               (*planner).topK, // its indices are i32
	ir.OpArgsort:            (*planner).argsort,
	ir.OpArgmax:             (*planner).argReduce, // i32 indices of any numeric dtype
	ir.OpArgmin:             (*planner).argReduce,
	ir.OpCumsum:             (*planner).cumsum,
	ir.OpScatterAdd:         (*planner).scatterAdd,
	ir.OpDynamicUpdateSlice: (*planner).dynamicUpdateSlice, // any dtype, integer starts
	ir.OpTake:               (*planner).take,               // any dtype, integer indices
	ir.OpDotGeneral:         floatOnly(func(pl *planner, in *ir.Instr, env map[*ir.Value]int) bool { return pl.dot(in, env, pl.epis[in]) }),
	ir.OpSoftmax:            floatOnly((*planner).softmax),
	ir.OpLogSoftmax:         floatOnly((*planner).softmax),
	ir.OpRMSNorm:            floatOnly((*planner).norm),
	ir.OpLayerNorm:          floatOnly((*planner).norm),
	ir.OpRngBitGenerator:    (*planner).rngBitGenerator,
	ir.OpBitcastConvert:     (*planner).bitcastConvert,
	ir.OpReducePrecision:    (*planner).reducePrecision,
	ir.OpSelectAndScatter:   (*planner).selectAndScatter,
	ir.OpTriangularSolve:    (*planner).triangularSolve,
	ir.OpSort:               (*planner).sortRegion,
}

// kernelOf returns op's kernel, nil when it has none.
func kernelOf(op ir.Op) kernelFunc {
	if op.Info().Reduce != ir.ReduceNone {
		return reduceKernel
	}
	return kernels[op]
}

// floatOnly is f for instructions whose operands and results are all
// static f32, f16 or bf16.
func floatOnly(f kernelFunc) kernelFunc {
	return func(pl *planner, in *ir.Instr, env map[*ir.Value]int) bool { return floatStatic(in) && f(pl, in, env) }
}

func reduceKernel(pl *planner, in *ir.Instr, env map[*ir.Value]int) bool {
	return (floatStatic(in) || intStatic(in)) && pl.reduce(in, env)
}

// kernel generates the kernel of a non-expression instruction when this
// backend has one for it, and reports whether it did.
func (pl *planner) kernel(in *ir.Instr, env map[*ir.Value]int) (bool, error) {
	if f := kernelOf(in.Op); f != nil {
		return f(pl, in, env), nil
	}
	return false, nil
}

// newKernelStep starts the step of a kernel for in: one output slot per
// result, then in's operands.
func (pl *planner) newKernelStep(in *ir.Instr, env map[*ir.Value]int) (*kfn, step) {
	k := pl.p.gen.newKernel()
	st := step{kind: stepKernel, name: k.name, outs: len(in.Results), what: in.Op.String(), instr: in}
	for _, r := range in.Results {
		st.bufs = append(st.bufs, pl.newSlot(slot{typ: r.Type}))
	}
	for i, a := range in.Args {
		if x := pl.reshaped[in][i]; x != nil {
			a = x // read in place (reshapedOperand), maybe at its own width
		}
		if x := pl.narrowSrc[a]; x != nil {
			a = x // read at its own width (deferNarrow)
		}
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

// fbuf is a float buffer of a reduction or composite kernel: f32 in
// memory, or f16/bf16 widened on load and rounded on store (the kernel
// computes in f32).
type fbuf struct {
	k  *kfn
	p  value.Value
	dt ir.DType
}

func (k *kfn) fbuf(i int, dt ir.DType) fbuf {
	_, mem, _ := elemType(dt)
	return fbuf{k: k, p: k.buf(i, mem), dt: dt}
}

func (b fbuf) load(idx value.Value) value.Value { return b.k.loadDT(b.p, idx, b.dt) }

// vload8 loads the 8 elements at idx as <8 x float>.
func (b fbuf) vload8(idx value.Value) value.Value { return b.k.vloadDT(b.p, idx, b.dt) }

// vloadDT loads 8 elements of dt (f32, f16 or bf16) at p[idx] as
// <8 x float>: a narrow operand is read at its own width and widened in
// registers, so a bf16 weight costs half the memory traffic of an f32 one.
func (k *kfn) vloadDT(p, idx value.Value, dt ir.DType) value.Value {
	return k.vloadDTOf(v8, p, idx, dt)
}

// vloadDTOf is vloadDT for a float vector type of any width (v8, v16).
func (k *kfn) vloadDTOf(vt *types.VectorType, p, idx value.Value, dt ir.DType) value.Value {
	if dt == ir.F32 {
		return k.vloadOf(vt, p, idx)
	}
	n := vt.Len
	vi16 := types.NewVector(n, types.I16)
	ptr := k.cur.NewBitCast(k.at(types.I16, p, idx), types.NewPointer(vi16))
	l := k.cur.NewLoad(vi16, ptr)
	l.Align = 2
	if dt == ir.F16 {
		return k.cur.NewFPExt(k.cur.NewBitCast(l, types.NewVector(n, types.Half)), vt)
	}
	vi32 := types.NewVector(n, types.I32)
	sh := make([]constant.Constant, n)
	for i := range sh {
		sh[i] = constant.NewInt(types.I32, 16)
	}
	wide := k.cur.NewShl(k.cur.NewZExt(l, vi32), constant.NewVector(vi32, sh...))
	return k.cur.NewBitCast(wide, vt)
}

// loadDT loads the element of dt at p[idx] as a float.
func (k *kfn) loadDT(p, idx value.Value, dt ir.DType) value.Value {
	if dt == ir.F32 {
		return k.load(types.Float, p, idx)
	}
	return k.widen(k.load(types.I16, p, idx), dt)
}

func (b fbuf) store(v, idx value.Value) {
	if b.dt != ir.F32 {
		v = b.k.narrow(v, b.dt)
	}
	b.k.store(v, b.p, idx)
}

// floatStatic reports whether every operand and result of in is a float of
// static shape: what the reduction, composite and dot_general kernels take.
func floatStatic(in *ir.Instr) bool {
	for _, v := range append(append([]*ir.Value{}, in.Args...), in.Results...) {
		if !floatish(v.Type.DType) || !v.Type.IsStatic() {
			return false
		}
	}
	return true
}

// intStatic: in's operands and results have static shapes and one integer
// dtype the kernels hold in its own width (not i1, u16 or u64).
func intStatic(in *ir.Instr) bool {
	dt := in.Results[0].Type.DType
	if _, _, ok := elemType(dt); !ok || floatish(dt) || dt == ir.I1 {
		return false
	}
	for _, v := range append(append([]*ir.Value{}, in.Args...), in.Results...) {
		if v.Type.DType != dt || !v.Type.IsStatic() {
			return false
		}
	}
	return true
}
