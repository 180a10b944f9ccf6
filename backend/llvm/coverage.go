package llvm

import (
	"fmt"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// What this backend generates, op by op. Every op of ir's table is either
// computed as an expression (exprOp: the table's elementwise ops and
// remapOps), planned by the planner itself (planned), given a kernel
// (kernels in heavy.go, and the reductions), or listed in refOps;
// TestEveryOpCovered walks ir.Ops() and names the op that is in none, and
// TestEveryOpGenerated checks that refOps does fall back, so the list
// cannot outlive a kernel. Within a covered op, the instructions
// that still run on the reference executor are those fallbackReason
// explains (TestCorpus fails on any other).

// planned are the ops the planner handles without a kernel of their own.
var planned = map[ir.Op]string{
	ir.OpCall:         "inlined",
	ir.OpCustomCall:   "its fallback function inlined as a call (no custom kernels here); refused without one",
	ir.OpFusion:       "opened: its body is planned",
	ir.OpReturn:       "ends the plan",
	ir.OpConstant:     "filled once at compile time, or an expression when scalar",
	ir.OpConvolution:  "rewritten as im2col (a take of the padded image's rows) and dot_general's GEMM",
	ir.OpReduceWindow: "rewritten as a take of its windows and a reduction over them (window.go)",
}

// refOps are the ops with no kernel yet: every instance runs on the
// reference executor (docs/CPU_BACKEND.md lists them).
var refOps = map[ir.Op]string{
	// Complex values have no kernels (elemType): every op on them falls
	// back, and these three always have a complex operand or result.
	ir.OpComplex: complexFallback,
	ir.OpReal:    complexFallback,
	ir.OpImag:    complexFallback,
	// A program on this backend runs alone (one process, replica 0 and
	// partition 0): the reference executor runs each collective on that
	// 1 × 1 grid, and refuses groups that name another process.
	ir.OpAllReduce: collectiveFallback, ir.OpAllGather: collectiveFallback, ir.OpAllToAll: collectiveFallback,
	ir.OpReduceScatter: collectiveFallback, ir.OpCollectiveBroadcast: collectiveFallback, ir.OpCollectivePermute: collectiveFallback,
	ir.OpCollectiveReduce: collectiveFallback, ir.OpReplicaID: collectiveFallback, ir.OpPartitionID: collectiveFallback,
	ir.OpFFT: complexFallback,
}

const collectiveFallback = "collectives run on the reference executor, as one process (replica 0, partition 0); groups naming other processes are refused"

const complexFallback = "complex values have no kernels yet: every op on c64 or c128 runs on the reference executor"

// covered reports how this backend computes op, or "" when it has no way.
func covered(op ir.Op) string {
	switch {
	case exprOp(op):
		return "an expression"
	case kernelOf(op) != nil:
		return "a kernel"
	case planned[op] != "":
		return planned[op]
	case ir.IsControl(op):
		return "its regions planned as steps the executor loops over or picks from (control.go)"

	case refOps[op] != "":
		return "the reference executor: " + refOps[op]
	}
	return ""
}

// fallbackReason says why in runs on the reference executor: an op in
// refOps, or operand types that no kernel of the op handles. "" means no
// documented reason, which TestCorpus reports as a gap.
func fallbackReason(in *ir.Instr) string {
	if r, ok := refOps[in.Op]; ok {
		return r
	}
	vals := append(append([]*ir.Value{}, in.Args...), in.Results...)
	for _, v := range vals {
		if _, _, ok := elemType(v.Type.DType); !ok {
			return fmt.Sprintf("%s values have no kernels", v.Type.DType)
		}
		if !v.Type.IsStatic() {
			return "dynamic shapes have no kernels"
		}
		if n, _ := v.Type.NumElements(); n == 0 && in.Op.Info().Reduce == ir.ReduceNone {
			return "an empty tensor"
		}
	}
	return typeLimit(in)
}

// typeLimit explains the fallbacks of covered ops on operand types their
// kernels leave to the reference executor.
func typeLimit(in *ir.Instr) string {
	dt := in.Results[0].Type.DType
	switch in.Op {
	case ir.OpDotGeneral:
		if !floatStatic(in) {
			return "integer and mixed-type products have no kernel"
		}
	case ir.OpReduceWindow:
		if floatStatic(in) || intStatic(in) {
			return "its padded operand has more rows than i32 indices reach"
		}
	case ir.OpTriangularSolve:
		if !floatStatic(in) {
			return "triangular_solve has a kernel for f32, f16 and bf16"
		}
	case ir.OpSort:
		if !comparatorExpr(in) {
			return "its comparator has an instruction that is not an expression here (or not on scalars): the reference executor runs the region"
		}
	case ir.OpSelectAndScatter:
		if !floatStatic(in) && !intStatic(in) {
			return "select_and_scatter has a kernel for f32, f16, bf16 and the integers other kernels hold"
		}
	case ir.OpConvolution:
		if !floatStatic(in) {
			return "integer convolutions have no kernel (dot_general has none)"
		}
	case ir.OpRaggedDot:
		if !raggedGenerated(in) {
			return "ragged_dot has a kernel for f32 operands and i32 group sizes only"
		}
	case ir.OpRaggedContract:
		if !raggedContractGenerated(in) {
			return "ragged_contract has a kernel for f32 operands and i32 group sizes only"
		}
	case ir.OpPow, ir.OpAtan2:
		if !floatish(dt) {
			return "integer " + in.Op.String() + " has no expression"
		}
	case ir.OpConvert:
		from := in.Args[0].Type.DType
		if floatish(from) && dt.IsInt() {
			return "float to integer converts saturate on the reference executor"
		}
		if from == ir.I64 && floatish(dt) {
			return "i64 to float rounds once on the reference executor, twice here"
		}
		if from == ir.U64 && floatish(dt) {
			return "u64 to float rounds once on the reference executor, twice here"
		}
	case ir.OpTopK, ir.OpArgsort:
		if x := in.Args[0].Type.DType; !floatish(x) && !intKeyed(x) {
			return x.String() + " keys have no sort kernel"
		}
	case ir.OpTake, ir.OpScatterAdd, ir.OpDynamicUpdateSlice:
		idx := in.Args[1:2] // take and scatter_add: x, idx (, updates)
		if in.Op == ir.OpDynamicUpdateSlice {
			idx = in.Args[2:] // x, update, starts...
		}
		for _, a := range idx {
			if _, ok := indexLoad(a.Type.DType); !ok {
				return a.Type.DType.String() + " indices have no kernel"
			}
		}
	}
	if in.Op.Info().Reduce != ir.ReduceNone && dt == ir.I1 {
		return "i1 reductions have no kernel"
	}
	if len(in.Args) > 0 && in.Args[0].Type.DType == ir.I1 && !boolOps[in.Op] {
		return "i1 " + in.Op.String() + " has no expression"
	}
	return ""
}

// Fallbacks lists the instructions of the program that run on the
// reference executor, one line each with its position and the reason
// (TPUCC_LOGS=fallback prints them).
func (x *Executable) Fallbacks() []string {
	var out []string
	for _, st := range x.plan.steps {
		if st.kind != stepRef {
			continue
		}
		in := st.instr
		why := fallbackReason(in)
		if why == "" {
			why = "no kernel for these operand types"
		}
		out = append(out, fmt.Sprintf("%s: %s %s runs on the reference executor: %s", in.Pos, in.Op, signature(in), why))
	}
	return out
}

// signature is in's operand and result types, as "f32[4], i32[] -> f32[2]".
func signature(in *ir.Instr) string {
	var a, r []string
	for _, v := range in.Args {
		a = append(a, v.Type.String())
	}
	for _, v := range in.Results {
		r = append(r, v.Type.String())
	}
	return strings.Join(a, ", ") + " -> " + strings.Join(r, ", ")
}
