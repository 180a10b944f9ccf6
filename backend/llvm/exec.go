package llvm

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// load takes the opened object lib and resolves every kernel of the plan.
func (x *Executable) load(lib uintptr) error {
	x.lib = lib
	// The kernels go with the executable: Run keeps x alive while they run.
	runtime.SetFinalizer(x, func(x *Executable) { purego.Dlclose(x.lib) })
	for i := range x.plan.steps {
		st := &x.plan.steps[i]
		if st.kind != stepKernel {
			continue
		}
		fn, err := purego.Dlsym(lib, st.name)
		if err != nil {
			return fmt.Errorf("llvm: kernel %s: %v", st.name, err)
		}
		st.fn = fn
	}
	return nil
}

// state is the memory one Run works in: every temporary's storage, planned
// once from liveness (temporaries whose lives do not overlap share
// storage), and the pointer array each kernel is called with. States are
// reused across calls; concurrent calls each take their own.
type state struct {
	bufs []*backend.Buffer
	ptrs [][]unsafe.Pointer
	args []uintptr // SyscallN's arguments, reused: a fresh variadic slice escapes
	// update holds a stepUpdate's buffers, reused.
	update []*backend.Buffer
	// scratch has one region per part a kernel call is split into, and
	// scratchPtrs their 64-byte aligned addresses, for the thread pool.
	scratch     [][]byte
	scratchPtrs []uintptr
}

func (x *Executable) newState() *state {
	p := x.plan
	s := &state{bufs: make([]*backend.Buffer, len(p.slots)), ptrs: make([][]unsafe.Pointer, len(p.steps)), args: make([]uintptr, 4, 8)}
	for i := 0; i < x.threads; i++ {
		s.scratch = append(s.scratch, make([]byte, x.regionBytes(i)+64))
		s.scratchPtrs = append(s.scratchPtrs, s.scratchPtr(i))
	}
	// The pool hands range p scratchPtrs[p]: a fine or each step's call
	// has more ranges than threads, and uses no scratch, but the pool
	// still reads its entry.
	for i := range p.steps {
		st := &p.steps[i]
		if n := x.parts(st); n > 1 {
			for int64(len(s.scratchPtrs)) < x.ranges(st, n) {
				s.scratchPtrs = append(s.scratchPtrs, s.scratchPtrs[0])
			}
		}
	}
	arenas := planMemory(p)
	for i, sl := range p.slots {
		switch sl.kind {
		case slotConst:
			s.bufs[i], _ = backend.View(sl.typ, sl.data)
		case slotTemp:
			n := byteSize(sl.typ)
			b, err := backend.View(sl.typ, arenas[i][:n:n])
			if err != nil {
				panic(fmt.Sprintf("llvm: planned buffer: %v", err))
			}
			s.bufs[i] = b
		}
	}
	for i, st := range p.steps {
		s.ptrs[i] = make([]unsafe.Pointer, len(st.bufs))
	}
	return s
}

func byteSize(t ir.Type) int {
	n, _ := t.NumElements()
	return int(n) * t.DType.Size()
}

// Run executes the program. It is safe for concurrent use.
func (x *Executable) Run(args []*backend.Buffer) (res []*backend.Buffer, err error) {
	return x.run(args, nil, nil)
}

// run executes the program with the arguments donated lists consumed
// (donate.go) and the results written into into's storage (into.go).
func (x *Executable) run(args []*backend.Buffer, donated []int, into []*backend.Buffer) (res []*backend.Buffer, err error) {
	if err := x.checkArgs(args); err != nil {
		return nil, err
	}
	if into != nil {
		if err := backend.CheckInto(x.entry.Name, x.resultTypes(), into, args, donated); err != nil {
			return nil, err
		}
	}
	var s *state
	select {
	case s = <-x.states:
	default:
		s = x.newState()
	}
	defer func() {
		select {
		case x.states <- s:
		default:
		}
	}()
	p := x.plan
	made := 0
	for i, sl := range p.slots {
		switch sl.kind {
		case slotParam:
			s.bufs[i] = x.paramBuffer(i, args, donated, into)
		case slotResult:
			s.bufs[i] = x.resultBuffer(i, into, args)
			if into == nil && pooledSize(sl.typ) {
				made += (byteSize(sl.typ) + 7) / 8 * 8 // newResult's words
			}
		}
	}
	if err := x.runRange(s, 0, len(p.steps)); err != nil {
		return nil, err
	}
	if made > 0 {
		noteRun(made)
	}
	res = make([]*backend.Buffer, len(p.results))
	for i, r := range p.results {
		res[i] = s.bufs[r]
	}
	if into != nil {
		res = backend.CopyInto(res, into)
	}
	for i, sl := range p.slots {
		if sl.kind == slotParam || sl.kind == slotResult {
			s.bufs[i] = nil
		}
	}
	runtime.KeepAlive(args)
	runtime.KeepAlive(x)
	return res, nil
}

func (x *Executable) checkArgs(args []*backend.Buffer) error {
	f := x.entry
	if len(args) != len(f.Params) {
		return fmt.Errorf("@%s takes %d arguments, got %d", f.Name, len(f.Params), len(args))
	}
	for i, prm := range f.Params {
		a := args[i]
		if a == nil {
			return fmt.Errorf("argument %d of @%s: missing (nil), want %s", i, f.Name, prm.Type)
		}
		if a.Type().DType != prm.Type.DType || !a.Type().SameShape(prm.Type) {
			return fmt.Errorf("argument %d of @%s: got %s, want %s", i, f.Name, a.Type(), prm.Type)
		}
	}
	return nil
}

// runRange runs steps [lo, hi); a while or case runs its regions' steps
// (control.go) and the walk goes on after them.
func (x *Executable) runRange(s *state, lo, hi int) error {
	for i := lo; i < hi; {
		if x.plan.steps[i].ctl != nil {
			next, err := x.runControl(s, i)
			if err != nil {
				return err
			}
			i = next
			continue
		}
		t0 := time.Now()
		if err := x.runStep(s, i); err != nil {
			return err
		}
		x.clock[i].add(time.Since(t0))
		i++
	}
	return nil
}

func (x *Executable) runStep(s *state, i int) error {
	st := &x.plan.steps[i]
	switch st.kind {
	case stepTest, stepCarry, stepYield, stepJoin:
		panic("llvm: a region's marker step run as a step") // runControl handles them
	case stepCopy:
		copy(s.bufs[st.bufs[0]].Bytes(), s.bufs[st.bufs[1]].Bytes())
		return nil
	case stepUpdate:
		s.update = s.update[:0] // reused: a loop's update runs every iteration
		for _, b := range st.bufs {
			s.update = append(s.update, s.bufs[b])
		}
		runUpdate(s.update)
		return nil
	case stepRef:
		bufs := make([]*backend.Buffer, len(st.bufs))
		for j, b := range st.bufs {
			bufs[j] = s.bufs[b]
		}
		return refEval(st.mod, st.instr, bufs[st.outs:], bufs[:st.outs])
	}
	ptrs := s.ptrs[i]
	for j, b := range st.bufs {
		if v := x.plan.slots[b].view; v != nil {
			ptrs[j] = v.address(s)
			continue
		}
		ptrs[j] = dataPtr(s.bufs[b])
	}
	x.call(s, st, ptrs)
	for j := range ptrs {
		ptrs[j] = nil
	}
	return nil
}

func dataPtr(b *backend.Buffer) unsafe.Pointer {
	d := b.Bytes()
	if len(d) == 0 {
		return nil
	}
	return unsafe.Pointer(&d[0])
}

// splitWork is the work (elements or multiply-adds) below which a kernel
// runs on the calling thread alone: splitting costs a few microseconds.
const splitWork = 1 << 16

// fineRanges is how many ranges per thread a fine step's call is cut
// into (each of at least splitWork): the threads take them from a shared
// counter, so a thread held up for a while (by the Go collector, which
// runs when a large result's storage is recycled, or by another process
// on a shared machine) leaves its ranges to the others instead of holding
// up the call. bench/cpu's chain (16M floats), 60 runs per process, six
// processes: medians 4.12-5.17 ms with a range per thread, 4.12-4.20 with
// 8 per thread, the fastest runs level (2026-12-05).
const fineRanges = 8

// call runs the kernel over [0, rows), split across the thread pool when it is
// big enough.
// regionBytes is the size of scratch region i: the plan's scratchBytes,
// or more for a step whose call has a part i (parts).
func (x *Executable) regionBytes(i int) int64 {
	n := x.plan.scratchBytes
	for j := range x.plan.steps {
		st := &x.plan.steps[j]
		if st.scratch > n && x.parts(st) > int64(i) {
			n = st.scratch
		}
	}
	return n
}

// parts is how many threads call splits st among (a fine step's ranges
// are more, but such steps use no step scratch): 1 runs on the caller.
func (x *Executable) parts(st *step) int64 {
	n := min(int64(x.threads), st.rows)
	if n <= 1 || st.work < splitWork {
		return 1
	}
	return n
}

func (x *Executable) call(s *state, st *step, ptrs []unsafe.Pointer) {
	base := uintptr(unsafe.Pointer(&ptrs[0]))
	n := x.parts(st)
	if n <= 1 {
		s.args[0], s.args[1], s.args[2], s.args[3] = base, 0, uintptr(st.rows), s.scratchPtr(0)
		purego.SyscallN(st.fn, s.args...)
		runtime.KeepAlive(ptrs)
		return
	}
	n = x.ranges(st, n)
	runSplit(s.args, st.fn, base, st.rows, (st.rows+n-1)/n, s.scratchPtrs)
	runtime.KeepAlive(ptrs)
}

// ranges is how many ranges a call of st split among n > 1 parts is cut
// into: n, or more for a fine or each step.
func (x *Executable) ranges(st *step, n int64) int64 {
	switch {
	case st.each:
		return st.rows
	case st.fine:
		return min(st.rows, n*fineRanges, max(n, st.work/splitWork))
	}
	return n
}

// scratchPtr is the 64-byte aligned scratch region i.
func (s *state) scratchPtr(i int) uintptr {
	p := uintptr(unsafe.Pointer(&s.scratch[i][0]))
	return (p + 63) &^ 63
}

// stepClock sums a step's wall time over runs (callers may run
// concurrently). Two clock reads per step cost about 50 ns, against
// microseconds for the smallest kernel call.
type stepClock struct{ nanos, calls atomic.Int64 }

func (c *stepClock) add(d time.Duration) {
	c.nanos.Add(int64(d))
	c.calls.Add(1)
}

// StepTime is the wall time one step of an executable's plan took, summed
// over the runs so far: where a program's time goes, step by step.
type StepTime struct {
	Step   int    // its index in the plan
	Kernel string // the kernel's symbol in the object (kNN), "" for a step that runs none
	What   string // what it computes, as in the plan: "dot_general+add", "softmax", "reference argsort"
	Calls  int64
	Total  time.Duration
	// Bytes is the size of the values a call writes and reads, each
	// counted once: the least memory traffic it has (a rate's numerator).
	Bytes int64
	// MACs is a product's multiply-adds per call (dot_general, ragged_dot),
	// 0 for any other step; Shape is a dot_general's "BxMxKxN lhs mk rhs
	// nk": the product's sizes and each operand's storage order (m, n: its
	// free index; k: the contracting one; the last letter is stride 1).
	MACs  int64
	Shape string
	Out   string // the type of its first result ("f32[1024,151936]"), "" for none
}

// StepTimes returns the time each step of the plan took over the
// executable's runs so far (every caller's), in plan order.
func (x *Executable) StepTimes() []StepTime {
	out := make([]StepTime, len(x.plan.steps))
	for i, st := range x.plan.steps {
		out[i] = StepTime{Step: i, Kernel: st.name, What: st.what, Calls: x.clock[i].calls.Load(), Total: time.Duration(x.clock[i].nanos.Load()),
			Bytes: x.stepBytes(&st)}
		if st.outs > 0 {
			out[i].Out = x.plan.slots[st.bufs[0]].typ.String()
		}
		if st.instr != nil && st.kind == stepKernel && (st.instr.Op == ir.OpDotGeneral || st.instr.Op == ir.OpRaggedDot) {
			out[i].MACs = st.work
		}
		if st.instr != nil && st.kind == stepKernel && st.instr.Op == ir.OpDotGeneral {
			out[i].Shape = dotLayout(analyseDot(st.instr))
		}
	}
	return out
}

// stepBytes is the size of st's slots, each counted once.
func (x *Executable) stepBytes(st *step) int64 {
	var n int64
	seen := map[int]bool{}
	for _, b := range st.bufs {
		if !seen[b] {
			seen[b] = true
			n += int64(byteSize(x.plan.slots[b].typ))
		}
	}
	return n
}

// dotLayout is StepTime.Shape's text for d.
func dotLayout(d dotShape) string {
	order := func(o dotOperand, free string) string {
		switch {
		case o.contract.stride1():
			return free + "k"
		case o.free.stride1():
			return "k" + free
		}
		return free + "k(strided)"
	}
	return fmt.Sprintf("%dx%dx%dx%d lhs %s rhs %s", d.B, d.M, d.K, d.N, order(d.lhs, "m"), order(d.rhs, "n"))
}
