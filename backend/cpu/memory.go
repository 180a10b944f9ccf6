package cpu

import (
	"fmt"
	"math"
	"sync"

	"github.com/tpucc/tpucc/ir"
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
	if total > limit {
		return fmt.Errorf("@%s needs %d bytes for its tensors in all; the limit is %d bytes", f.Name, total, limit)
	}
	return nil
}

type memCount struct {
	m      *ir.Module
	limit  int64
	bodies map[*ir.Func]int64 // bytes of a function's results of instructions, callees included
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
		if in.Op == ir.OpCall {
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
// for a call the callee's body.
func (c *memCount) region(g *ir.Func, r *ir.Block) (int64, error) {
	total := int64(0)
	var err error
	r.Walk(func(x *ir.Instr) {
		if err != nil {
			return
		}
		var n int64
		if x.Op == ir.OpCall {
			var h *ir.Func
			if h, err = callee(c.m, x); err == nil {
				n, err = c.body(h)
			}
			total = addBytes(total, n)
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
// counts exactly the bytes the executor holds for each value; the margin is
// for what it does not count: a value and its operands are alive together,
// kernels keep scratch copies (dot_general's operands in canonical order, a
// reduction's float64 accumulators), and the caller holds its own data.
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
func physicalMemory() int64 { return meminfo("/proc/meminfo") }
