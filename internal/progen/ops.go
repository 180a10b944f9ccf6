package progen

import (
	"github.com/tpucc/tpucc/ir"
)

// extraWeight gives common ops more turns than the one every op gets, so
// that programs chain arithmetic between the rarer ops.
var extraWeight = map[ir.Op]int{
	ir.OpAdd: 3, ir.OpSub: 2, ir.OpMul: 3, ir.OpConvert: 2, ir.OpBroadcast: 2,
	ir.OpSelect: 1, ir.OpCompare: 1, ir.OpMax: 1, ir.OpReshape: 1, ir.OpDotGeneral: 1,
	// ragged_dot has a kernel for f32 only: drawn three times, an f32 instance shows up in 300 programs.
	ir.OpRaggedDot: 2,
	ir.OpAtan2:     1, // most tries fail its operand ranges (no zero crossing): without it an f32 instance is rare
}

// helperOps are the ops a helper function is built from.
var helperOps = []ir.Op{ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpMax, ir.OpMin, ir.OpNeg, ir.OpAbs,
	ir.OpTanh, ir.OpExp, ir.OpSelect, ir.OpCompare, ir.OpConvert, ir.OpRelu}

// notGenerated names the ops of ir's table that programs never contain, each
// with the reason; by name, so that the list does not depend on which ops
// the table has yet. Every other op is generated (TestCoverage checks).
var notGenerated = map[string]string{
	"return":  "ends every function; not drawn as an op",
	"fusion":  "a region op that the fusion pass makes; users do not write it",
	"complex": "complex values are not drawn (see drawnDTypes)",
	"real":    "complex values are not drawn (see drawnDTypes)",
	"imag":    "complex values are not drawn (see drawnDTypes)",
	"fft":     "complex values are not drawn (see drawnDTypes): every fft has a complex operand or result",
	// XLA has no kernel for a target the generator could name; the
	// fallback is a call, which is drawn.
	"custom_call": "its kernel is outside the IR: XLA cannot run it; hand-written tests run its fallback",
	// A random program runs as one process, where every collective's
	// groups could only hold process 0; the suite's run_parallel tests and
	// backend/cpu's grid tests exchange between processes instead.
	"all_reduce": collectiveReason, "all_gather": collectiveReason, "all_to_all": collectiveReason,
	"reduce_scatter": collectiveReason, "collective_broadcast": collectiveReason, "collective_permute": collectiveReason,
	"collective_reduce": collectiveReason, "replica_id": collectiveReason, "partition_id": collectiveReason,
}

const collectiveReason = "collectives need a process grid; a random program runs alone"

// drawnDTypes are the dtypes programs use: all of ir's but the complex
// ones, whose semantics the generator's value ranges (val) do not model,
// and the narrow floats (f8, f6, f4), which have no arithmetic;
// the complex ops are checked by hand-written programs instead (the
// reference executor's and the XLA oracle's complex tests).
var drawnDTypes = func() []ir.DType {
	var out []ir.DType
	for _, dt := range ir.DTypes {
		if !dt.IsComplex() && !dt.IsNarrowFloat() {
			out = append(out, dt)
		}
	}
	return out
}()

// NotGenerated reports whether programs never contain op, and why.
func NotGenerated(op ir.Op) (reason string, ok bool) {
	reason, ok = notGenerated[op.String()]
	return reason, ok
}

// bagLast is the last op of the table the seeds' programs draw. An op
// added to the table after it is drawn only where a program forces it
// (Config.Force, Corpus): a new op in the bag would shift every seed's
// random stream, so that every test drawing seeds would meet new programs
// and their unrelated failures (and an op another test needs could
// vanish from them). Forced programs are random programs around the op.
const bagLast = ir.OpSort

// nextOp draws the next op to try. @main draws from a shuffled bag holding
// every generated op of the table up to bagLast once plus the extra turns,
// refilled when empty, so that every op gets tried about equally often.
func (g *gen) nextOp() ir.Op {
	if g.fn.simple {
		return pick(g, helperOps)
	}
	if len(g.opBag) == 0 {
		for _, op := range ir.Ops() {
			if _, skip := NotGenerated(op); skip || op > bagLast {
				continue
			}
			g.opBag = append(g.opBag, op)
			for k := extraWeight[op]; k > 0; k-- {
				g.opBag = append(g.opBag, op)
			}
		}
		g.r.Shuffle(len(g.opBag), func(i, j int) { g.opBag[i], g.opBag[j] = g.opBag[j], g.opBag[i] })
	}
	op := g.opBag[len(g.opBag)-1]
	g.opBag = g.opBag[:len(g.opBag)-1]
	return op
}

// genOp tries to add one op (and whatever operands it needs) to the current
// function; false if this attempt could not.
func (g *gen) genOp(op ir.Op) bool {
	if _, ok := transcendentals[op]; ok {
		return g.genTranscendental(op)
	}
	if op.Info().Reduce != ir.ReduceNone {
		return g.genReduce(op)
	}
	switch op {
	case ir.OpFloor, ir.OpCeil, ir.OpRound, ir.OpSign, ir.OpRoundAFZ:
		return g.genRounding(op)
	case ir.OpNeg, ir.OpAbs:
		return g.genNegAbs(op)
	case ir.OpNot:
		return g.genNot()
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpMax, ir.OpMin:
		return g.genArith(op)
	case ir.OpDiv:
		return g.genDiv()
	case ir.OpRem:
		return g.genRem()
	case ir.OpPow:
		return g.genPow()
	case ir.OpAnd, ir.OpOr, ir.OpXor:
		return g.genBitwise(op)
	case ir.OpAtan2:
		return g.genAtan2()
	case ir.OpCompare:
		return g.genCompare()
	case ir.OpSelect:
		return g.genSelect()
	case ir.OpClamp:
		return g.genClamp()
	case ir.OpReshape:
		return g.genReshape()
	case ir.OpConvert:
		return g.genConvert()
	case ir.OpBroadcast:
		return g.genBroadcast()
	case ir.OpTranspose:
		return g.genTranspose()
	case ir.OpCopy:
		return g.genCopy()
	case ir.OpShardingConstraint:
		return g.genShardingConstraint()
	case ir.OpSlice:
		return g.genSlice()
	case ir.OpConcat:
		return g.genConcat()
	case ir.OpPad:
		return g.genPad()
	case ir.OpIota:
		return g.genIota()
	case ir.OpDotGeneral:
		return g.genDot()
	case ir.OpRaggedDot:
		return g.genRaggedDot()
	case ir.OpRaggedContract:
		return g.genRaggedContract()
	case ir.OpConvolution:
		return g.genConv()
	case ir.OpReduceWindow:
		return g.genReduceWindow()
	case ir.OpSelectAndScatter:
		return g.genSelectAndScatter()
	case ir.OpArgmax, ir.OpArgmin:
		return g.genArg(op)
	case ir.OpCumsum:
		return g.genCumsum()
	case ir.OpTake:
		return g.genTake()
	case ir.OpScatterAdd:
		return g.genScatterAdd()
	case ir.OpDynamicSlice:
		return g.genDynamicSlice()
	case ir.OpDynamicUpdateSlice:
		return g.genDynamicUpdateSlice()
	case ir.OpOneHot:
		return g.genOneHot()
	case ir.OpTopK:
		return g.genTopK()
	case ir.OpArgsort:
		return g.genArgsort()
	case ir.OpRelu:
		return g.genRelu()
	case ir.OpGelu, ir.OpSilu:
		return g.genGeluSilu(op)
	case ir.OpSoftmax, ir.OpLogSoftmax:
		return g.genSoftmax(op)
	case ir.OpLayerNorm, ir.OpRMSNorm:
		return g.genNorm(op)
	case ir.OpConstant:
		return g.constant(want{}) != nil
	case ir.OpCall:
		return g.genCall()
	case ir.OpCase:
		return g.genCase()
	case ir.OpWhile:
		return g.genWhile()
	case ir.OpTriangularSolve:
		return g.genTriangularSolve()
	case ir.OpShiftLeft, ir.OpShiftRightLogical, ir.OpShiftRightArithmetic:
		return g.genShift(op)
	case ir.OpPopcnt, ir.OpClz:
		return g.genBitCount(op)
	case ir.OpReducePrecision:
		return g.genReducePrecision()
	case ir.OpBitcastConvert:
		return g.genBitcast()
	case ir.OpSort:
		return g.genSort()
	case ir.OpRngBitGenerator:
		return g.genRng()
	}
	return false
}
