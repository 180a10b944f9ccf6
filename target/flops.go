package target

import (
	"fmt"
	"math/bits"

	"github.com/tpucc/tpucc/ir"
)

// work is what one instruction computes, memory traffic aside. The counts
// follow XLA's HloCostAnalysis where it has a rule: one FLOP per element for
// elementwise ops, transcendentals counted apart from FLOPs (an exp is one
// transcendental and no FLOP), 2·M·N·K per batch for dot_general, one per
// combine for reductions; movement ops (reshape, transpose, broadcast, slice,
// concat, pad, iota, gather) compute nothing.
type work struct {
	flops           int64   // vector ops plus matmul FLOPs, useful work only
	matmul          int64   // the dot_general part of flops
	paddedMatmul    int64   // matmul FLOPs with the MXU's padding (= matmul off the MXU)
	transcendentals int64   // exp, log, tanh, erf, ...
	seconds         float64 // compute time at the target's rates
}

func (w *work) add(v work) {
	w.flops = addOK(w.flops, v.flops)
	w.matmul = addOK(w.matmul, v.matmul)
	w.paddedMatmul = addOK(w.paddedMatmul, v.paddedMatmul)
	w.transcendentals = addOK(w.transcendentals, v.transcendentals)
	w.seconds += v.seconds
}

// times is the work of k runs (an instruction in a loop body).
func (w work) times(k int64) work {
	if k == 1 {
		return w
	}
	return work{flops: mulOK(w.flops, k), matmul: mulOK(w.matmul, k), paddedMatmul: mulOK(w.paddedMatmul, k),
		transcendentals: mulOK(w.transcendentals, k), seconds: w.seconds * float64(k)}
}

// instrWork counts the work of one instruction that has no region and is not
// a call (those are summed by the caller). ok is false when a count overflows
// or a shape is not static.
func (t *Target) instrWork(in *ir.Instr) (w work, ok bool) {
	out := int64(0)
	if len(in.Results) > 0 {
		n, ok := in.Results[0].Type.NumElements()
		if !ok {
			return w, false
		}
		out = n
	}
	switch in.Op.Info().Cost {
	case ir.CostDot:
		return t.dotWork(in)
	case ir.CostRaggedDot:
		return t.raggedWork(in)
	case ir.CostConv:
		return t.convWork(in, out)
	}
	vec, trans := classWork(in, out)
	if vec < 0 || trans < 0 {
		return w, false
	}
	w = work{flops: vec, transcendentals: trans}
	w.seconds = (float64(vec) + float64(trans)*t.TranscendentalOps) / t.Vector
	return w, true
}

// classWork counts the vector ops and transcendentals of an instruction by
// its op's cost class, for a result of out elements; -1 when a count
// overflows or an operand's shape is not static.
func classWork(in *ir.Instr, out int64) (vec, trans int64) {
	// combines is the number of binary combines reducing the operand to the
	// result: one per input element beyond the first of each output (none
	// for an empty reduction, whose result is the identity).
	combines := func() int64 {
		n := elems(in.Args[0])
		if n < 0 {
			return -1
		}
		return max(n-out, 0)
	}
	switch c := in.Op.Info().Cost; c {
	case ir.CostNone: // moves data only: its bytes are the whole cost
		return 0, 0
	case ir.CostElementwise, ir.CostScan:
		return out, 0
	case ir.CostTranscendental: // XLA counts these as transcendentals, not FLOPs
		return 0, out
	case ir.CostReduce:
		return combines(), 0
	case ir.CostArgReduce: // a compare and a select per combine
		return mulOK(2, combines()), 0
	case ir.CostScatter: // one add per update element
		return elems(in.Args[2]), 0
	case ir.CostWindow: // a combine (or a compare) per element of each window
		return windowWork(in), 0
	case ir.CostSort: // a comparison sort: n·ceil(log2 n) compares per row
		x := in.Args[0]
		axis := x.Type.Rank() - 1
		if a, isAxis := in.Attr.(*ir.AxisAttr); isAxis {
			axis = int(a.Axis)
		}
		return mulOK(elems(x), ceilLog2(x.Type.Dims()[axis])), 0
	case ir.CostCustom:
		// The kernel is opaque: its cost attribute, 0 when absent (build
		// --report says which calls have none).
		return in.Attr.(*ir.CustomCallAttr).Cost, 0
	case ir.CostComposite:
		f := compositeWork[in.Op]
		if f == nil {
			panic(fmt.Sprintf("tpu: %s is a composite op without a cost formula", in.Op))
		}
		return f(in, out)
	default:
		// CostDot, CostRaggedDot and CostConv are instrWork's, CostRegion ops are summed by the caller;
		// an op without a cost class is a broken table (TestEveryOpHasCost).
		panic(fmt.Sprintf("tpu: no cost rule for %s (cost class %d)", in.Op, c))
	}
}

// elems is v's element count, or -1 when its shape is not static.
func elems(v *ir.Value) int64 {
	n, ok := v.Type.NumElements()
	if !ok {
		return -1
	}
	return n
}

// compositeWork counts the vector ops and transcendentals of each composite
// op of result size out.
var compositeWork = map[ir.Op]func(in *ir.Instr, out int64) (vec, trans int64){
	ir.OpClamp: func(_ *ir.Instr, out int64) (int64, int64) { return mulOK(2, out), 0 }, // a max and a min
	ir.OpGelu: func(in *ir.Instr, out int64) (int64, int64) {
		// exact: x/√2, erf, 1+, 0.5·x, · : 4 FLOPs and erf.
		// tanh form: x³ (2), ·0.044715, x+, ·√(2/π), tanh, 1+, 0.5·x, · : 8 and tanh.
		if a, isGelu := in.Attr.(*ir.GeluAttr); isGelu && a.Approximate {
			return mulOK(8, out), out
		}
		return mulOK(4, out), out
	},
	ir.OpSilu:    func(_ *ir.Instr, out int64) (int64, int64) { return out, out }, // sigmoid and a multiply
	ir.OpSoftmax: softmaxWork,
	// Substitution: each solved element takes a multiply and a subtract per
	// earlier element of its column (m-1 of them) and a divide unless the
	// diagonal is ones: m (or m-1) times the result's elements.
	ir.OpTriangularSolve: func(in *ir.Instr, out int64) (int64, int64) {
		m := in.Args[0].Type.Dims()[in.Args[0].Type.Rank()-1]
		if in.Attr.(*ir.TriangularSolveAttr).UnitDiagonal {
			m = max(m-1, 0)
		}
		return mulOK(m, out), 0
	},
	ir.OpLogSoftmax: softmaxWork,
	// A transform of n points takes about 5·n·log2(n) real flops (a radix-2
	// butterfly is a complex multiply and two adds per two points): 5·log2(n)
	// per element of the complex side, summed over the transformed axes. The
	// sines and cosines are constants.
	ir.OpFFT: func(in *ir.Instr, out int64) (int64, int64) {
		n := max(elems(in.Args[0]), out)
		var logs int64
		for _, l := range in.Attr.(*ir.FFTAttr).Length {
			logs += ceilLog2(l)
		}
		return mulOK(n, mulOK(5, logs)), 0
	},
	// Integer ops per 32-bit word made: Threefry-2x32's 20 rounds of an
	// add, a rotate (two shifts and an or) and a xor plus 5 key injections
	// give two words (about 60 a word); Philox-4x32's 10 rounds of two
	// 32x32->64 multiplies, four xors and a key raise give four (about 25).
	// An 8- or 16-bit element costs a whole word.
	ir.OpRngBitGenerator: func(in *ir.Instr, _ int64) (int64, int64) {
		bits := in.Results[1]
		n, ok := bits.Type.NumElements()
		if !ok {
			return -1, 0
		}
		per := int64(25)
		if in.Attr.(*ir.RngAttr).Algorithm == ir.RngThreeFry {
			per = 60
		}
		return mulOK(mulOK(n, per), int64(max(bits.Type.DType.Bits()/32, 1))), 0
	},
	ir.OpLayerNorm: func(in *ir.Instr, out int64) (int64, int64) {
		rows := out / lastOrAxis(in)
		// mean (sum, divide), x-mean, square, variance (sum, divide), +eps,
		// rsqrt per row, normalise, scale, bias per element
		return addOK(addOK(mulOK(5, out), mulOK(2, out-rows)), mulOK(3, rows)), rows
	},
	ir.OpRMSNorm: func(in *ir.Instr, out int64) (int64, int64) {
		rows := out / lastOrAxis(in)
		// square, sum, divide, +eps, rsqrt per row, normalise, scale
		return addOK(addOK(mulOK(3, out), out-rows), mulOK(2, rows)), rows
	},
}

// softmaxWork: max and sum reductions, x-max and a divide (or a subtract)
// per element, exp per element, and for log_softmax a log per row.
func softmaxWork(in *ir.Instr, out int64) (vec, trans int64) {
	rows := out / lastOrAxis(in)
	vec = addOK(mulOK(2, out), mulOK(2, out-rows))
	trans = out
	if in.Op == ir.OpLogSoftmax {
		trans = addOK(out, rows)
	}
	return vec, trans
}

// dotWork counts a dot_general: 2·B·M·N·K FLOPs, with B the batch size and M,
// N and K the products of the lhs free, rhs free and contracting dimensions.
// On the MXU, K and N are padded to the array width and M to the 8 sublanes
// of a vector register, and the padded FLOPs are what take time; off it (the
// CPU, or a dtype the MXU lacks) nothing is padded.
func (t *Target) dotWork(in *ir.Instr) (work, bool) {
	a, isDot := in.Attr.(*ir.DotAttr)
	if !isDot || len(in.Args) != 2 {
		return work{}, false
	}
	lhs, rhs := in.Args[0].Type.Dims(), in.Args[1].Type.Dims()
	prod := func(dims []int64, axes []int64) int64 {
		n := int64(1)
		for _, ax := range axes {
			n = mulOK(n, dims[ax])
		}
		return n
	}
	free := func(dims []int64, batch, contract []int64) []int64 {
		var axes []int64
		for i := range dims {
			if !has(batch, int64(i)) && !has(contract, int64(i)) {
				axes = append(axes, int64(i))
			}
		}
		return axes
	}
	for _, d := range append(append([]int64(nil), lhs...), rhs...) {
		if d < 0 {
			return work{}, false
		}
	}
	b := prod(lhs, a.LhsBatch)
	k := prod(lhs, a.LhsContract)
	m := prod(lhs, free(lhs, a.LhsBatch, a.LhsContract))
	n := prod(rhs, free(rhs, a.RhsBatch, a.RhsContract))
	flops := mulOK(mulOK(mulOK(mulOK(2, b), m), n), k)
	if flops < 0 {
		return work{}, false
	}
	rate, mxu := t.MatmulPeak(in.Args[0].Type.DType)
	padded := flops
	if mxu {
		s := t.MXUSize
		padded = mulOK(mulOK(mulOK(mulOK(2, b), roundUp(m, 8)), roundUp(n, s)), roundUp(k, s))
		if padded < 0 {
			return work{}, false
		}
	}
	return work{flops: flops, matmul: flops, paddedMatmul: padded, seconds: float64(padded) / rate}, true
}

// raggedWork is a ragged_dot's arithmetic: every row of lhs [m,k] is in at
// most one group, so at most 2·m·k·n FLOPs, which the model takes (the
// group sizes are known only when it runs). On a TPU each group's rows are
// padded to the MXU's sublanes and n and k to its tiles, one group at a time.
func (t *Target) raggedWork(in *ir.Instr) (work, bool) {
	m, k, g, n, ok := raggedDims(in)
	if !ok {
		return work{}, false
	}
	flops := mulOK(mulOK(mulOK(2, m), n), k)
	if flops < 0 {
		return work{}, false
	}
	rate, mxu := t.MatmulPeak(in.Args[0].Type.DType)
	padded := flops
	if mxu {
		s := t.MXUSize
		rows := roundUp(m, 8) + min(g, m)*7 // each non-empty group pads its last tile of rows
		padded = mulOK(mulOK(mulOK(2, rows), roundUp(n, s)), roundUp(k, s))
		if padded < 0 {
			return work{}, false
		}
	}
	return work{flops: flops, matmul: flops, paddedMatmul: padded, seconds: float64(padded) / rate}, true
}

// raggedDims are a grouped product's rows m, contraction k, groups g and
// columns n: ragged_dot's lhs [m,k], rhs [g,k,n], and ragged_contract's lhs
// [m,k'], rhs [m,n] (the rows are contracted there, but each row still meets
// one group's k'·n products, so the count is the same 2·m·k'·n).
func raggedDims(in *ir.Instr) (m, k, g, n int64, ok bool) {
	l, r := in.Args[0].Type.Dims(), in.Args[1].Type.Dims()
	if in.Op == ir.OpRaggedContract {
		s := in.Args[2].Type.Dims()
		if len(l) != 2 || len(r) != 2 || len(s) != 1 || l[0] < 0 || l[1] < 0 || r[1] < 0 || s[0] < 0 {
			return 0, 0, 0, 0, false
		}
		return l[0], l[1], s[0], r[1], true
	}
	if len(l) != 2 || len(r) != 3 || l[0] < 0 || l[1] < 0 || r[0] < 0 || r[2] < 0 {
		return 0, 0, 0, 0, false
	}
	return l[0], l[1], r[0], r[2], true
}

// lastOrAxis is the length of the axis a softmax or norm works along.
func lastOrAxis(in *ir.Instr) int64 {
	dims := in.Args[0].Type.Dims()
	axis := len(dims) - 1
	if a, ok := in.Attr.(*ir.AxisAttr); ok {
		axis = int(a.Axis)
	}
	if axis < 0 || axis >= len(dims) || dims[axis] <= 0 {
		return 1
	}
	return dims[axis]
}

func has(xs []int64, x int64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func roundUp(x, m int64) int64 {
	if x <= 0 {
		return x
	}
	return mulOK((x+m-1)/m, m)
}

// ceilLog2 is ceil(log2 n), and 0 for n <= 1.
func ceilLog2(n int64) int64 {
	if n <= 1 {
		return 0
	}
	return int64(bits.Len64(uint64(n - 1)))
}
