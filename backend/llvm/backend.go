// Package llvm is the fast CPU backend: it generates LLVM IR for a program
// with github.com/llir/llvm, builds it with the system clang into a shared
// object kept in a private, hash-checked cache, loads it with purego (no
// cgo) and runs the program as a plan of kernel calls. Ops it does not
// generate yet run on the reference executor (backend/cpu) as steps of the
// same plan, so every program runs, and coverage grows op by op.
// docs/CPU_BACKEND.md describes the design and what is generated.
package llvm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

func init() {
	backend.Register("llvm", openDefault)
}

// warnOut is where openDefault says why the cache was refused.
var (
	warnOut  io.Writer = os.Stderr
	warnOnce sync.Once
)

// openDefault is the registered backend: Open's, saying once per process
// on stderr that the configured cache directory was refused, why, and
// which directory is used instead.
func openDefault() (backend.Backend, error) {
	b, err := Open(Options{})
	if err == nil && b.CacheWarning != "" {
		warnOnce.Do(func() {
			fmt.Fprintf(warnOut, "tpucc: warning: %s; using %s instead\n", b.CacheWarning, b.CacheDir())
		})
	}
	return b, err
}

// Options configure the backend; the zero value is the default.
type Options struct {
	// CacheDir holds built objects; "" is $TPUCC_LLVM_CACHE, else
	// tpucc/llvm under the user's cache directory.
	CacheDir string
	// Threads is how many parts one kernel call is split into (run by the
	// calling thread and the native pool, team.go); 0 is runtime.NumCPU().
	Threads int
}

// Backend compiles programs to native code.
type Backend struct {
	tc      *toolchain
	cache   *objectCache
	threads int
	// wide: kernels may use AVX-512's 16-float vectors (gen.wide): the
	// CPU has avx512f. Tests set it either way.
	wide bool
	// gemm chooses the blocked product's parameters for this host
	// (gemm_calibrate.go).
	gemm *gemmTuner
	// bf16 is how products of two bf16 operands run (bf16dot.go): from
	// the CPU flags; tests set it either way.
	bf16 bf16Unit
	// stream is target.stream: the output size from which loop kernels
	// use streaming stores (stream.go), from the host's caches; tests set
	// it.
	stream int64
	// CacheWarning says why the configured cache directory was refused and
	// a fallback one (CacheDir) is used instead; "" when it is used.
	CacheWarning string
}

// Open finds clang and opens the object cache. A cache directory that is
// not private is refused: Open then uses a fallback directory private to
// the user (the default one, else tpucc-llvm-UID in the temporary
// directory) and says why in CacheWarning.
func Open(o Options) (*Backend, error) {
	tc, err := findToolchain()
	if err != nil {
		return nil, err
	}
	dir := o.CacheDir
	if dir == "" {
		dir = defaultCacheDir()
	}
	c, cerr := openCache(dir)
	if c == nil {
		return nil, cerr
	}
	gt, err := newGemmTuner(gemmRecordDir())
	if err != nil {
		return nil, err
	}
	b := &Backend{tc: tc, cache: c, threads: o.Threads, wide: hasFlag(tc.features, "avx512f"), gemm: gt, bf16: hostBF16(tc.features)}
	if cerr != nil {
		b.CacheWarning = cerr.Error()
	}
	if b.threads <= 0 {
		b.threads = runtime.NumCPU()
	}
	b.stream = streamMinBytes(tc.features, gt.host.L3, min(b.threads, runtime.NumCPU()))
	if err := b.startTeam(); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Backend) Name() string { return "llvm" }

// CacheDir is the directory objects are kept in: the configured one, or
// the fallback when it was refused (CacheWarning).
func (b *Backend) CacheDir() string { return b.cache.dir }

// Fingerprint names the code generator's version, the clang, the CPU and
// the blocked product's parameters as they stand (a calibration that a
// compile runs changes them: gemmTuner).
func (b *Backend) Fingerprint() string {
	return fmt.Sprintf("llvm/1 %s %s gemm %s", b.tc.version, b.tc.objectKey(""), b.gemm.current())
}

// Compile generates, builds (or finds in the cache) and loads the kernels
// of p's entry.
func (b *Backend) Compile(p *backend.Program) (backend.Executable, error) {
	if p == nil || p.Entry == nil {
		return nil, fmt.Errorf("llvm: no program to compile")
	}
	return b.compileDonating(p.Module, p.Entry, nil, p.Donate)
}

// Executable is a compiled program.
type Executable struct {
	plan    *plan
	entry   *ir.Func
	threads int
	lib     uintptr
	states  chan *state
	code    backend.NativeCode // the object loaded, and its identity
	// Times is what compiling it cost.
	Times BuildTimes
	// clock has, per step, the nanoseconds and calls of its runs so far.
	clock []stepClock
	// resultOf is, per slot, the result it holds, or -1 (into.go).
	resultOf []int
}

// CompileStages are the times of generating the IR, clang ("clang (cached)"
// with zero time when the object came from the cache) and loading.
func (x *Executable) CompileStages() []backend.Stage {
	clang := "clang"
	if x.Times.Cached {
		clang = "clang (cached)"
	}
	return []backend.Stage{{Name: "llvm-ir", Time: x.Times.IRGen}, {Name: clang, Time: x.Times.Clang}, {Name: "load", Time: x.Times.Load}}
}

func (b *Backend) compile(m *ir.Module, f *ir.Func, expect *backend.NativeCode) (x *Executable, err error) {
	return b.compileDonating(m, f, expect, nil)
}

// compileDonating is compile for a caller that may donate the parameters
// at the positions donate lists (donate.go).
func (b *Backend) compileDonating(m *ir.Module, f *ir.Func, expect *backend.NativeCode, donate []int) (x *Executable, err error) {
	if r := m.NumReplicas(); r > 1 {
		// Its collectives run on the reference executor, one process alone.
		return nil, fmt.Errorf("@%s runs as %d replicas, and the llvm backend runs one: the pjrt and reference backends run replicas", f.Name, r)
	}
	return b.compileWith(m, f, expect, donate, gemmParams{})
}

// compileWith is compileDonating with the blocked product's parameters gp
// (the zero value: the backend's, gemmTuner.forFunc).
func (b *Backend) compileWith(m *ir.Module, f *ir.Func, expect *backend.NativeCode, donate []int, gp gemmParams) (x *Executable, err error) {
	defer func() {
		if r := recover(); r != nil {
			x, err = nil, fmt.Errorf("internal error in the llvm backend compiling @%s: %v", f.Name, r)
		}
	}()
	if m == nil {
		m = f.Module
	}
	if err := ir.VerifyFunc(f); err != nil {
		return nil, err
	}
	if gp == (gemmParams{}) {
		gp = b.gemm.forFunc(b, f)
	}
	var times BuildTimes
	t0 := time.Now()
	p, err := newPlan(m, f, target{wide: b.wide, threads: b.threads, gemm: gp, bf16: b.bf16, stream: b.stream}, donate...)
	if err != nil {
		return nil, err
	}
	text := p.gen.text()
	times.IRGen = time.Since(t0)
	x = &Executable{plan: p, entry: f, threads: b.threads, states: make(chan *state, 8), clock: make([]stepClock, len(p.steps)), resultOf: resultSlots(p)}
	if p.gen.n > 0 {
		key := b.tc.objectKey(text)
		data, ok := expected(expect, key)
		if ok {
			times.Cached = true
		} else if data, err = b.cache.program(b.tc, key, text, p.gen, p.kernelNames(), &times); err != nil {
			return nil, err
		}
		t1 := time.Now()
		if err := b.loadObject(x, data); err != nil {
			return nil, err
		}
		times.Load += time.Since(t1)
		h := sha256.Sum256(data)
		x.code = backend.NativeCode{ID: fmt.Sprintf("llvm-object sha256:%x ir-sha256:%s", h[:], key), Data: data}
	}
	x.Times = times
	return x, nil
}

// loadObject writes verified object bytes where dlopen can read them and
// resolves x's kernels in them.
func (b *Backend) loadObject(x *Executable, data []byte) error {
	lib, err := b.cache.open(data, "the program's kernels")
	if err != nil {
		return err
	}
	return x.load(lib)
}

// expected returns code's object when it is one for the IR whose object
// key is key and its bytes hash to the hash its ID records; ok is false
// otherwise (no code, another program's or another generator's, or corrupt
// bytes), and the caller builds or finds the object as usual.
func expected(code *backend.NativeCode, key string) (data []byte, ok bool) {
	if code == nil || code.Data == nil {
		return nil, false
	}
	var sum, irKey string
	if n, err := fmt.Sscanf(code.ID, "llvm-object sha256:%s ir-sha256:%s", &sum, &irKey); err != nil || n != 2 {
		return nil, false
	}
	h := sha256.Sum256(code.Data)
	if irKey != key || hex.EncodeToString(h[:]) != sum {
		return nil, false
	}
	return code.Data, true
}

// CompileExpecting compiles p as Compile does, loading code (which a
// previous Compile's Executable handed back as its NativeCode, kept by the
// runtime's persistent cache) without running clang when it is an object
// for the IR p generates now and its bytes hash to the recorded hash.
// Otherwise the object is found in the backend's own cache or built, as
// Compile would: a stale or corrupt object is never loaded.
func (b *Backend) CompileExpecting(p *backend.Program, code backend.NativeCode) (backend.Executable, error) {
	if p == nil || p.Entry == nil {
		return nil, fmt.Errorf("llvm: no program to compile")
	}
	return b.compileDonating(p.Module, p.Entry, &code, p.Donate)
}

// NativeCode is the executable's object and its identity, for the
// runtime's persistent cache (backend.Persistable); ok is false for a
// program without kernels.
func (x *Executable) NativeCode() (backend.NativeCode, bool) {
	return x.code, x.code.Data != nil
}

// Coverage lists the ops of the program by how they run: generated into
// kernels, or on the reference executor.
func (x *Executable) Coverage() (generated, fallback string) {
	return opCounts(x.plan.generated), opCounts(x.plan.fallback)
}

func opCounts(m map[ir.Op]int) string {
	var parts []string
	for op, n := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", op, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
