package cpu

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/target"
)

// CheckMemory refuses, before anything is allocated, a program whose tensors
// would not fit in limit bytes. A value's size is its element count times its
// dtype's size (ir.DType.Size; i1 counts one byte). It returns a positioned
// *ir.Error for the first value (parameters first, then results in program
// order, a callee's values at its call) that alone exceeds the limit:
//
//	FILE:L:C: error: %x needs 400000000000 bytes (f32[100000000000]); the limit is 17179869184 bytes
//
// and otherwise a plain error naming the total when the parameters and every
// value of f and of its callees (once per call) together exceed it. That total
// is an upper bound of what Run holds at once, since Run drops dead values.
// The total also holds the largest scratch one kernel keeps while it runs
// (scratchBytes, by the op table's scratch class; kernels run one at a
// time), and an instruction whose scratch alone exceeds the limit is its
// positioned error:
//
//	FILE:L:C: error: argsort needs 1073741824 bytes of scratch in the executor; the limit is 536870912 bytes
//
// Symbolic shapes, unknown callees and recursion are errors too.
func CheckMemory(m *ir.Module, f *ir.Func, limit int64) error {
	if m == nil {
		m = f.Module
	}
	var serr error
	if err := reachable(m, f, func(g *ir.Func) {
		if serr == nil {
			serr = checkStatic(g)
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	c := &memCount{m: m, limit: limit, bodies: map[*ir.Func]int64{}}
	total := int64(0)
	for _, p := range f.Params {
		n, err := c.value(f, p)
		if err != nil {
			return err
		}
		total = addBytes(total, n)
	}
	n, err := c.body(f)
	if err != nil {
		return err
	}
	total = addBytes(total, n)
	if c.scratch > 0 && addBytes(total, c.scratch) > limit {
		return fmt.Errorf("@%s needs %d bytes for its tensors and %d bytes of scratch for %s; the limit is %d bytes",
			f.Name, total, c.scratch, c.scratchOp.Op, limit)
	}
	if total > limit {
		return fmt.Errorf("@%s needs %d bytes for its tensors in all; the limit is %d bytes", f.Name, total, limit)
	}
	return nil
}

type memCount struct {
	m         *ir.Module
	limit     int64
	bodies    map[*ir.Func]int64 // bytes of a function's results of instructions, callees included
	scratch   int64              // the most scratch one kernel holds (scratchBytes)
	scratchOp *ir.Instr          // the instruction that holds it
}

// kernel records in's scratch: kernels run one at a time, so the most any
// one holds is added to the tensors. Scratch alone over the limit is the
// instruction's positioned error.
func (c *memCount) kernel(g *ir.Func, in *ir.Instr) error {
	if in.Op == ir.OpFusion || in.Op == ir.OpCall || in.Op == ir.OpCustomCall || in.Op == ir.OpReturn {
		return nil
	}
	n := scratchBytes(in)
	if n > c.limit {
		return ir.Errorf(in.Pos, "%s needs %d bytes of scratch in the executor; the limit is %d bytes", in.Op, n, c.limit)
	}
	if n > c.scratch {
		c.scratch, c.scratchOp = n, in
	}
	return nil
}

// body sums the results of g's instructions and, for each call, the callee's
// body instead of the call's results (the callee's parameters are the
// caller's tensors and its results become the call's, so neither is new).
func (c *memCount) body(g *ir.Func) (int64, error) {
	if n, ok := c.bodies[g]; ok {
		return n, nil
	}
	total := int64(0)
	for _, in := range g.Body.Instrs {
		if in.Op == ir.OpCall || in.Op == ir.OpCustomCall {
			h, err := callee(c.m, in)
			if err != nil {
				return 0, err
			}
			n, err := c.body(h)
			if err != nil {
				return 0, err
			}
			total = addBytes(total, n)
			continue // the call's results are the callee's tensors, counted there
		}
		for _, r := range in.Results {
			n, err := c.value(g, r)
			if err != nil {
				return 0, err
			}
			total = addBytes(total, n)
		}
		if err := c.kernel(g, in); err != nil {
			return 0, err
		}
		// The values of a region (a fusion's, a while's or case's, nested
		// ones too) are tensors as well: the executor runs the body op by
		// op (its results are also the op's, counted twice: an upper bound).
		// A loop's iterations each drop their values, so one counts.
		for _, r := range in.Regions {
			n, err := c.region(g, r)
			if err != nil {
				return 0, err
			}
			total = addBytes(total, n)
		}
	}
	c.bodies[g] = total
	return total, nil
}

// region sums the values of r's instructions and of their regions, and
// for a call the callee's body; each instruction's scratch is checked as
// the top level's is.
func (c *memCount) region(g *ir.Func, r *ir.Block) (int64, error) {
	total := int64(0)
	var err error
	r.Walk(func(x *ir.Instr) {
		if err != nil {
			return
		}
		var n int64
		if x.Op == ir.OpCall || x.Op == ir.OpCustomCall {
			var h *ir.Func
			if h, err = callee(c.m, x); err == nil {
				n, err = c.body(h)
			}
			total = addBytes(total, n)
			return
		}
		if err = c.kernel(g, x); err != nil {
			return
		}
		for _, v := range x.Results {
			if n, err = c.value(g, v); err != nil {
				return
			}
			total = addBytes(total, n)
		}
	})
	return total, err
}

func (c *memCount) value(g *ir.Func, v *ir.Value) (int64, error) {
	n, ok := v.Type.NumElements()
	size := int64(v.Type.DType.Size())
	if !ok || (size > 0 && n > math.MaxInt64/size) {
		return 0, ir.Errorf(v.Pos, "%s needs more than %d bytes (%s); the limit is %d bytes",
			valueName(g, v), int64(math.MaxInt64), v.Type, c.limit)
	}
	if b := n * size; b > c.limit {
		return 0, ir.Errorf(v.Pos, "%s needs %d bytes (%s); the limit is %d bytes", valueName(g, v), b, v.Type, c.limit)
	}
	return n * size, nil
}

// addBytes adds without overflowing: the sum saturates at MaxInt64.
func addBytes(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// mulBytes multiplies non-negative numbers, saturating at MaxInt64.
func mulBytes(n, k int64) int64 {
	if k > 0 && n > math.MaxInt64/k {
		return math.MaxInt64
	}
	return n * k
}

// DefaultMemoryLimit is the limit Run passes to CheckMemory: 16 GiB, or a
// quarter of the machine's physical memory if that is less. CheckMemory
// counts exactly the bytes the executor holds for each value and the
// kernels' scratch (dot_general's operands in canonical order, a
// reduction's float64 accumulators); the margin is for what it does not
// count: Go's rounding of allocations, fixed-size buffers, garbage not yet
// collected, and the caller's own data.
func DefaultMemoryLimit() int64 {
	memOnce.Do(func() {
		memLimit = 16 << 30
		if total := physicalMemory(); total > 0 && total/4 < memLimit {
			memLimit = total / 4
		}
	})
	return memLimit
}

var (
	memOnce  sync.Once
	memLimit int64
)

// physicalMemory reads MemTotal from /proc/meminfo; 0 where there is none.
func physicalMemory() int64 { return target.Host().Memory }

// scratchBytes is the memory in's kernel holds while it runs beyond its
// operands and results, by the op's scratch class (ir.OpInfo.Scratch):
// TestScratchCounted measures every op against it. Fixed-size buffers (a
// few KiB: the elementwise kernels' chunks) are left to the margin of
// DefaultMemoryLimit.
func scratchBytes(in *ir.Instr) int64 {
	elems := func(v *ir.Value) int64 { n, _ := v.Type.NumElements(); return n }
	line := func() int64 { // the op's axis, or the last one
		dims := in.Args[0].Type.Dims()
		if a, ok := in.Attr.(*ir.AxisAttr); ok && int(a.Axis) < len(dims) {
			return dims[a.Axis]
		}
		if len(dims) == 0 {
			return 1
		}
		return dims[len(dims)-1]
	}
	switch in.Op.Info().Scratch {
	case ir.ScratchReduce: // the sums, and one row of the operand
		acc := int64(8) // float64 or int64
		if in.Args[0].Type.DType.IsComplex() {
			acc = 16 // complex128
		}
		return mulBytes(addBytes(elems(in.Results[0]), line()), acc)
	case ir.ScratchLine: // at most four float64 (or index) copies of a line
		return mulBytes(line(), 32)
	case ir.ScratchSort:
		// The reference keeps a key (8 bytes) and a position (4) per
		// element of one line; the llvm backend's merge sort 8 bytes an
		// element of each line it sorts at once, one per thread.
		lines := int64(1)
		if n := line(); n > 0 {
			lines = elems(in.Args[0]) / n
		}
		return mulBytes(line(), max(12, 8*min(lines, int64(runtime.NumCPU()))))
	case ir.ScratchDot:
		return dotScratchBytes(in)
	case ir.ScratchConv:
		return mulBytes(addBytes(addBytes(elems(in.Args[0]), elems(in.Args[1])), elems(in.Results[0])), 8)
	case ir.ScratchSpectrum:
		return fftScratchBytes(in)
	case ir.ScratchGrouped: // lhs [m,k], a result [.., n]: two rows of n, one of k
		res := in.Results[0].Type.Dims()
		return mulBytes(addBytes(2*res[len(res)-1], in.Args[0].Type.Dims()[1]), 8)
	}
	return 0
}

// dotScratchBytes is a dot_general's scratch: a copy of each operand that
// its canonical layout reorders, and dotScratch's words.
func dotScratchBytes(in *ir.Instr) int64 {
	d := dotLayout(in)
	n := mulBytes(dotScratch(d.nm, d.nn, d.nk), 8)
	if in.Args[0].Type.DType.IsComplex() { // two rows of complex128 (dotComplex)
		n = mulBytes(int64(min(d.nk, dotChunk)), 32)
	}
	for i, perm := range [][]int64{d.lperm, d.rperm} {
		t := in.Args[i].Type
		if movesData(t.Dims(), perm) {
			k, _ := t.NumElements()
			n = addBytes(n, mulBytes(k, int64(t.DType.Size())))
		}
	}
	return n
}
