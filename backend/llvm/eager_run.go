package llvm

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/llir/llvm/ir/enum"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// eagerLib is the loaded eager library: its kernels by name.
type eagerLib struct {
	lib   uintptr
	fns   map[string]uintptr
	times BuildTimes
}

var (
	eagerOnce sync.Once
	eagerLoad *eagerLib
	eagerErr  error
)

// eagerLibrary builds (or finds in the object cache) and loads the eager
// library, once per process; later calls return the first result.
func (b *Backend) eagerLibrary() (*eagerLib, error) {
	eagerOnce.Do(func() { eagerLoad, eagerErr = b.loadEager() })
	return eagerLoad, eagerErr
}

func (b *Backend) loadEager() (*eagerLib, error) {
	var times BuildTimes
	t0 := time.Now()
	g := eagerModule(b.wide)
	text := g.text()
	times.IRGen = time.Since(t0)
	data, err := b.cache.object(b.tc, b.tc.objectKey(text), text, &times)
	if err != nil {
		return nil, err
	}
	t1 := time.Now()
	lib, err := b.cache.open(data, "the eager library")
	if err != nil {
		return nil, err
	}
	l := &eagerLib{lib: lib, fns: map[string]uintptr{}}
	for _, f := range g.m.Funcs {
		if len(f.Blocks) == 0 || f.Linkage == enum.LinkageInternal {
			continue // a declaration, or a helper the kernels inline (expf)
		}
		fn, err := purego.Dlsym(lib, f.Name())
		if err != nil {
			return nil, fmt.Errorf("llvm: eager kernel %s: %v", f.Name(), err)
		}
		l.fns[f.Name()] = fn
	}
	times.Load += time.Since(t1)
	l.times = times
	return l, nil
}

// EagerTimes is what building and loading the eager library cost this
// process (IR generation, clang when the object was not cached, load).
func (b *Backend) EagerTimes() (BuildTimes, error) {
	l, err := b.eagerLibrary()
	if err != nil {
		return BuildTimes{}, err
	}
	return l.times, nil
}

// Eval runs one eager instruction (backend.Eager): on the eager library's
// kernels where one covers it (f32 elementwise, broadcast, transpose,
// reductions, dot_general), else on the reference executor, whose results
// the kernels agree with within the oracle's f32 tolerance.
func (b *Backend) Eval(in *ir.Instr, args []*backend.Buffer) ([]*backend.Buffer, error) {
	if l, err := b.eagerLibrary(); err == nil && eagerTypesOK(in, args) {
		if out := b.eagerEval(l, in, args); out != nil {
			return []*backend.Buffer{out}, nil
		}
	}
	return cpu.Eval(in, args)
}

// eagerTypesOK: one f32 result, and every operand an f32 buffer of the
// type the instruction declares (anything else goes to cpu.Eval, which
// reports mismatches).
func eagerTypesOK(in *ir.Instr, args []*backend.Buffer) bool {
	if len(in.Results) != 1 || in.Results[0].Type.DType != ir.F32 || !in.Results[0].Type.IsStatic() || len(args) != len(in.Args) {
		return false
	}
	for i, a := range args {
		t := in.Args[i].Type
		if a == nil || t.DType != ir.F32 || a.Type().DType != ir.F32 || !a.Type().SameShape(t) || !t.IsStatic() {
			return false
		}
	}
	return true
}

// eagerEval runs in on a kernel and returns its result, or nil when no
// kernel covers it.
func (b *Backend) eagerEval(l *eagerLib, in *ir.Instr, args []*backend.Buffer) *backend.Buffer {
	rt := in.Results[0].Type
	n, _ := rt.NumElements()
	switch {
	case isEagerOp(in.Op, eagerUnary):
		variant := ""
		if a, ok := in.Attr.(*ir.GeluAttr); ok {
			variant = map[bool]string{false: "exact", true: "tanh"}[a.Approximate]
		}
		out := backend.New(rt)
		b.eagerCall(l.fns[eagerName(in.Op, variant)], n, n, false, out, args[0])
		return out
	case isEagerOp(in.Op, eagerBinary):
		if !args[0].Type().SameShape(rt) || !args[1].Type().SameShape(rt) {
			return nil
		}
		out := backend.New(rt)
		b.eagerCall(l.fns[eagerName(in.Op, "")], n, n, false, out, args[0], args[1])
		return out
	case in.Op == ir.OpBroadcast:
		return b.eagerBroadcast(l, in.Attr.(*ir.DimsAttr).Dims, args[0], rt)
	case in.Op == ir.OpTranspose:
		return b.eagerTranspose(l, in.Attr.(*ir.PermAttr).Perm, args[0])
	case isEagerOp(in.Op, eagerReduce):
		return b.eagerReduce(l, in.Op, in.Attr.(*ir.AxesAttr).Axes, args[0], rt)
	case in.Op == ir.OpDotGeneral:
		return b.eagerDot(l, in.Attr.(*ir.DotAttr), args[0], args[1], rt)
	}
	return nil
}

func isEagerOp(op ir.Op, ops []ir.Op) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// eagerCalls counts kernel calls, so tests can tell a kernel from the
// reference fallback.
var eagerCalls atomic.Int64

// eagerScratch holds the gemm's packing space, one region per part of a call.
var eagerScratch = sync.Pool{New: func() any {
	s := make([]byte, gemmScratch(gemmMC, gemmKC, gemmNC)+64)
	return &s
}}

// eagerCall runs kernel fn over [0, rows) on buffers (results first; a
// trailing []int64 is the descriptor), split across the thread pool
// when work (elements or multiply-adds) is large enough.
func (b *Backend) eagerCall(fn uintptr, rows, work int64, scratch bool, bufs ...any) {
	eagerCalls.Add(1)
	if rows <= 0 {
		return
	}
	ptrs := make([]unsafe.Pointer, len(bufs))
	for i, x := range bufs {
		switch v := x.(type) {
		case *backend.Buffer:
			ptrs[i] = dataPtr(v)
		case []int64:
			ptrs[i] = unsafe.Pointer(&v[0])
		}
	}
	base := uintptr(unsafe.Pointer(&ptrs[0]))
	parts := min(int64(b.threads), rows)
	if work < splitWork {
		parts = 1
	}
	chunk := (rows + parts - 1) / parts
	var held []*[]byte
	scratches := make([]uintptr, parts)
	for i := range scratches {
		if scratch {
			s := eagerScratch.Get().(*[]byte)
			held = append(held, s)
			scratches[i] = (uintptr(unsafe.Pointer(&(*s)[0])) + 63) &^ 63
		}
	}
	runSplit(make([]uintptr, 0, 8), fn, base, rows, chunk, scratches)
	for _, s := range held {
		eagerScratch.Put(s)
	}
	runtime.KeepAlive(ptrs)
	runtime.KeepAlive(bufs)
}
