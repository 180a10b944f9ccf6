package cpu

import (
	"fmt"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Eval runs one instruction other than call and return on operand tensors and
// returns its results; a while or a case runs its regions (the llvm backend's
// fallback for them; EvalIn resolves calls inside them). It is the executor's single step, exported for eager
// mode: in must be well typed (as the verifier checks) and args must have its
// operands' types; Eval checks the types and reports a mismatch as an error.
// Errors carry in's position.
func Eval(in *ir.Instr, args []*backend.Buffer) (res []*backend.Buffer, err error) {
	return EvalIn(nil, in, args)
}

// EvalIn is Eval with the module that resolves the calls inside a while's
// or case's regions (nil: a call there is an error).
func EvalIn(m *ir.Module, in *ir.Instr, args []*backend.Buffer) (res []*backend.Buffer, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = ir.Errorf(in.Pos, "internal error in the cpu executor running %s: %v", in.Op, r)
		}
	}()
	if ir.IsControl(in.Op) || in.Op == ir.OpSort {
		return evalControl(m, in, args)
	}
	if err := checkInstr(in, args); err != nil {
		return nil, ir.Errorf(in.Pos, "%v", err)
	}
	res, err = eval(in, args)
	if err != nil {
		return nil, ir.Errorf(in.Pos, "%v", err)
	}
	return res, nil
}

// checkInstr makes sure in can be run on args: the operands match, the
// instruction is consistent with the type rules (so its attribute is the
// right struct), and the results are static.
func checkInstr(in *ir.Instr, args []*backend.Buffer) error {
	if in.Op == ir.OpCall || in.Op == ir.OpReturn {
		return fmt.Errorf("%s is control flow, not a kernel", in.Op)
	}
	if len(in.Regions) > 0 {
		return fmt.Errorf("%s with nested regions is not supported by the cpu executor", in.Op)
	}
	if len(args) != len(in.Args) {
		return fmt.Errorf("%s has %d operands, got %d tensors", in.Op, len(in.Args), len(args))
	}
	types := make([]ir.Type, len(args))
	for i, a := range args {
		if a == nil {
			return fmt.Errorf("operand %d of %s is missing", i, in.Op)
		}
		if err := checkBuffer(a); err != nil {
			return fmt.Errorf("operand %d of %s: %v", i, in.Op, err)
		}
		if in.Args[i] != nil && !sameType(a.Type(), in.Args[i].Type) {
			return fmt.Errorf("operand %d of %s is %s, want %s", i, in.Op, a.Type(), in.Args[i].Type)
		}
		types[i] = a.Type()
	}
	hint := make([]ir.Type, len(in.Results))
	for i, r := range in.Results {
		if !r.Type.IsStatic() {
			return fmt.Errorf("run needs static shapes: result %d of %s is %s", i, in.Op, r.Type)
		}
		hint[i] = r.Type
	}
	if _, err := ir.Infer(in.Op, types, in.Attr, hint); err != nil {
		return err
	}
	if in.Op == ir.OpConstant {
		if _, ok := in.Attr.(*ir.ConstAttr); !ok {
			return fmt.Errorf("constant has no value")
		}
	}
	return nil
}

// sameType compares dtype and shape; layouts do not matter to the executor.
func sameType(a, b ir.Type) bool { return a.DType == b.DType && a.SameShape(b) }

// eval dispatches to the kernels; the instruction has been checked.
func eval(in *ir.Instr, a []*backend.Buffer) ([]*backend.Buffer, error) {
	one := func(t *backend.Buffer) ([]*backend.Buffer, error) { return []*backend.Buffer{t}, nil }
	oneErr := func(t *backend.Buffer, err error) ([]*backend.Buffer, error) {
		if err != nil {
			return nil, err
		}
		return []*backend.Buffer{t}, nil
	}
	if in.Op.Info().Reduce != ir.ReduceNone {
		return one(reduceKernel(in, a[0]))
	}
	switch in.Op.Info().Group {
	case ir.GroupUnary:
		return oneErr(unaryKernel(in, a[0]))
	case ir.GroupBinary:
		return oneErr(binaryKernel(in, a[0], a[1]))
	}
	switch in.Op {
	case ir.OpRelu, ir.OpSilu:
		return oneErr(unaryKernel(in, a[0]))
	case ir.OpCompare:
		return oneErr(compareKernel(in, a[0], a[1]))
	case ir.OpSelect:
		return one(selectKernel(in, a[0], a[1], a[2]))
	case ir.OpClamp:
		return one(clampKernel(in, a[0], a[1], a[2]))
	case ir.OpReshape:
		return one(reshapeKernel(in, a[0]))
	case ir.OpConvert:
		return one(convertKernel(in, a[0]))
	case ir.OpCopy: // the executor ignores layouts: the same values
		return one(retype(a[0], in.Results[0].Type))
	case ir.OpShardingConstraint: // one device holds every shard: the same values
		return one(retype(a[0], in.Results[0].Type))
	case ir.OpBroadcast:
		return one(broadcastKernel(in, a[0]))
	case ir.OpTranspose:
		return one(transposeKernel(in, a[0]))
	case ir.OpSlice:
		return one(sliceKernel(in, a[0]))
	case ir.OpConcat:
		return one(concatKernel(in, a))
	case ir.OpPad:
		return one(padKernel(in, a[0], a[1]))
	case ir.OpIota:
		return one(iotaKernel(in))
	case ir.OpDotGeneral:
		return one(dotKernel(in, a[0], a[1]))
	case ir.OpRaggedDot:
		return one(raggedDotKernel(in, a[0], a[1], a[2]))
	case ir.OpRaggedContract:
		return one(raggedContractKernel(in, a[0], a[1], a[2]))
	case ir.OpConvolution:
		return one(convKernel(in, a[0], a[1]))
	case ir.OpReduceWindow:
		return one(reduceWindowKernel(in, a[0], a[1]))
	case ir.OpSelectAndScatter:
		return one(selectScatterKernel(in, a[0], a[1], a[2]))
	case ir.OpArgmax, ir.OpArgmin:
		return one(argKernel(in, a[0]))
	case ir.OpCumsum:
		return one(cumsumKernel(in, a[0]))
	case ir.OpTake:
		return oneErr(takeKernel(in, a[0], a[1]))
	case ir.OpScatterAdd:
		return one(scatterAddKernel(in, a[0], a[1], a[2]))
	case ir.OpDynamicSlice:
		return one(dynamicSliceKernel(in, a[0], a[1:]))
	case ir.OpDynamicUpdateSlice:
		return one(dynamicUpdateSliceKernel(in, a[0], a[1], a[2:]))
	case ir.OpOneHot:
		return one(oneHotKernel(in, a[0]))
	case ir.OpTopK:
		return topKKernel(in, a[0]), nil
	case ir.OpArgsort:
		return one(argsortKernel(in, a[0]))
	case ir.OpBitcastConvert: // little-endian elements: the bytes as they are
		out := backend.New(in.Results[0].Type)
		copy(out.Bytes(), a[0].Bytes())
		return one(out)
	case ir.OpReducePrecision:
		return one(reducePrecisionKernel(in, a[0]))
	case ir.OpTriangularSolve:
		return one(triangularSolveKernel(in, a[0], a[1]))
	case ir.OpFFT:
		return one(fftKernel(in, a[0]))
	case ir.OpRngBitGenerator:
		return rngKernel(in, a[0]), nil
	case ir.OpGelu:
		return one(geluKernel(in, a[0]))
	case ir.OpSoftmax, ir.OpLogSoftmax:
		return one(softmaxKernel(in, a[0]))
	case ir.OpLayerNorm:
		return one(normKernel(in, a[0], a[1], a[2]))
	case ir.OpRMSNorm:
		return one(normKernel(in, a[0], a[1], nil))
	case ir.OpConstant:
		t, err := tensorFromLiteral(in.Results[0].Type, in.Attr.(*ir.ConstAttr).Value)
		return oneErr(t, err)
	case ir.OpReplicaID, ir.OpPartitionID: // one instruction alone: process 0 of a 1 × 1 grid
		return (&process{}).collective(in, a)
	}
	if ir.IsCollective(in.Op) {
		return (&process{}).collective(in, a)
	}
	return nil, fmt.Errorf("the cpu executor has no kernel for %s", in.Op)
}

// Folder evaluates single instructions on constant operands for the
// fold-constants pass: it has the method set of passes.Evaluator without
// importing passes.
type Folder struct{}

// Fold evaluates in on literal operands (one per in.Args, each a splat or one
// element per position of the operand's type) and returns one literal per
// result, each with every element written out. It refuses call and return,
// symbolic shapes, and instructions whose operands and results together would
// take more than DefaultMemoryLimit bytes in the executor.
func (Folder) Fold(in *ir.Instr, args []*ir.Literal) ([]*ir.Literal, error) {
	if in.Op == ir.OpCall || in.Op == ir.OpReturn {
		return nil, fmt.Errorf("cpu: %s is not folded", in.Op)
	}
	if len(args) != len(in.Args) {
		return nil, fmt.Errorf("cpu: %s has %d operands, got %d literals", in.Op, len(in.Args), len(args))
	}
	limit := DefaultMemoryLimit()
	bytes := int64(0)
	vals := append(append([]*ir.Value{}, in.Args...), in.Results...)
	for _, v := range vals {
		if v == nil {
			return nil, fmt.Errorf("cpu: %s has a missing operand", in.Op)
		}
		n, ok := v.Type.NumElements()
		if !ok || !v.Type.IsStatic() {
			return nil, fmt.Errorf("cpu: cannot fold %s on %s: the shape is not static or too large", in.Op, v.Type)
		}
		bytes = addBytes(bytes, mulBytes(n, int64(v.Type.DType.Size())))
	}
	if bytes > limit {
		return nil, fmt.Errorf("cpu: folding %s would need %d bytes; the limit is %d bytes", in.Op, bytes, limit)
	}
	ts := make([]*backend.Buffer, len(args))
	for i, l := range args {
		t, err := tensorFromLiteral(in.Args[i].Type, l)
		if err != nil {
			return nil, fmt.Errorf("cpu: operand %d of %s: %v", i, in.Op, err)
		}
		ts[i] = t
	}
	res, err := Eval(in, ts)
	if err != nil {
		return nil, err
	}
	out := make([]*ir.Literal, len(res))
	for i, t := range res {
		out[i] = literal(t)
	}
	return out, nil
}
