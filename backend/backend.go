// Package backend declares what a backend implements and the one buffer type
// that tensors, the runtime and every backend share.
//
// A backend turns an optimised program (the module after the pass pipeline,
// and its StableHLO text) into an Executable that runs on Buffers. The
// reference executor (backend/cpu) is the first; the LLVM CPU backend and the
// PJRT client plug in beside it. Backends register themselves by name, the
// one use of init() registration the style allows.
package backend

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tpucc/tpucc/ir"
)

// Program is what the compile path hands a backend: the module after the
// passes (layouts assigned for Target), its entry, and the entry lowered to
// StableHLO. A backend uses whichever form it compiles from.
type Program struct {
	Module *ir.Module
	Entry  *ir.Func
	HLO    string
	Target string // the target the passes ran for ("cpu", "tpu-v6e", ...)
	// Donate lists the entry's parameters (by position) that callers may
	// donate (RunOptions.Donate): a host backend may then write a result
	// into a donated argument's storage.
	Donate []int
}

// Backend compiles programs into executables.
type Backend interface {
	// Name is the name the backend is registered and selected by.
	Name() string
	// Fingerprint is everything about this backend that can change what a
	// compiled program computes or how it is encoded (its version, the
	// machine features it compiles for): it is part of every cache key.
	Fingerprint() string
	// Compile prepares p to run. It must not modify p.
	Compile(p *Program) (Executable, error)
}

// Executable is one compiled program. Run is safe for concurrent use.
type Executable interface {
	// Run executes the program on args (one per entry parameter, in
	// order, of the parameter's type) and returns its results in return
	// order. Results never share storage with args.
	Run(args []*Buffer) ([]*Buffer, error)
}

// FallbackLister is an Executable that runs some instructions on another
// executor than its own code: Fallbacks says which, one line each with the
// instruction's position and the reason (TPUCC_LOGS=fallback prints them).
type FallbackLister interface {
	Fallbacks() []string
}

// Staged is an Executable that says what compiling it cost, stage by stage
// (tpucc run --time prints them).
type Staged interface {
	CompileStages() []Stage
}

// Stage is one named part of compiling a program and the time it took.
type Stage struct {
	Name string
	Time time.Duration
}

// RunOptions ask an executable for more than Run does.
type RunOptions struct {
	// KeepOnDevice leaves the results in the device's memory (OnDevice
	// buffers), for the next call to take without a copy.
	KeepOnDevice bool
	// Donate lists the arguments whose device storage the call consumes.
	Donate []int
	// Into, when not nil, is storage for the results, one entry per
	// result (nil: the call allocates that one): each result is written
	// into its entry, which the call returns in the result's place. The
	// rules are CheckInto's (into.go).
	Into []*Buffer
}

// OptionsRunner is an Executable that honours RunOptions. One that does not
// is run with Run: its results are host buffers, and a donation only marks
// the arguments, and the runtime copies its results into RunOptions.Into. A
// result of RunWith may take a donated argument's storage (the caller marks
// the argument consumed after the call, unless it is also the Into entry
// that holds the result). An OptionsRunner that cannot honour Into returns
// an error saying so.
type OptionsRunner interface {
	RunWith(args []*Buffer, o RunOptions) ([]*Buffer, error)
}

// NativeCode is a compiled executable's native code as the runtime's
// persistent cache keeps it beside the optimised program: ID names the code
// and the way to check it (the llvm backend writes "llvm-object sha256:HEX
// ir-sha256:HEX", the object's hash and the hash of the IR it was built
// from), Data is the code itself, or nil when the backend keeps the bytes in
// a store of its own and finds them by ID.
type NativeCode struct {
	ID   string
	Data []byte
}

// Persistable is implemented by an Executable that has native code worth
// persisting with the runtime's cache entry (so that a restarted process
// runs it without building it again). ok is false when it has none.
type Persistable interface {
	NativeCode() (code NativeCode, ok bool)
}

// ExpectingCompiler is implemented by a backend that can compile a program
// whose native code a persistent entry recorded (NativeCode, handed back by
// the Persistable executable a previous Compile made). CompileExpecting
// returns what Compile would, using code only after checking it against
// its ID (and, for code built from an intermediate form, that the program
// still generates that form): code that is missing, corrupt or stale is
// built again, never loaded unverified. The runtime's persistent cache
// calls it when an entry it loads carries code for this backend (the
// backend's Name and Fingerprint are part of every entry's key, so the
// code comes from the same backend build and machine features).
type ExpectingCompiler interface {
	CompileExpecting(p *Program, code NativeCode) (Executable, error)
}

// Eager is what a backend implements to run eager tensor ops: one
// instruction at a time, outside any function (its operands are detached
// values of the given types). The tensor package runs every eager op
// through one.
type Eager interface {
	Eval(in *ir.Instr, args []*Buffer) ([]*Buffer, error)
}

var (
	mu       sync.Mutex
	registry = map[string]func() (Backend, error){}
)

// Register makes a backend available by name; open is called on each Lookup
// (a backend that needs a library or a device reports its absence there).
// Registering a name twice is a programming error.
func Register(name string, open func() (Backend, error)) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("backend.Register: %q registered twice", name))
	}
	registry[name] = open
}

// Lookup opens the backend registered as name.
func Lookup(name string) (Backend, error) {
	mu.Lock()
	open, ok := registry[name]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown backend %q (have %s)", name, strings.Join(Names(), ", "))
	}
	return open()
}

// Names lists the registered backends, sorted.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return slices.Clip(names)
}

// The cpu device's backends: CPUDefault runs compiled programs and eager ops
// on this host, and CPUFallback, the reference executor (slower, exact), runs
// them where CPUDefault cannot (no clang on PATH, the backend not linked in,
// its object cache refused).
const (
	CPUDefault  = "llvm"
	CPUFallback = "reference"
)

// OpenCPU is the cpu device's one fallback policy, for compiled programs
// (package engine) and eager ops (package tensor) alike. It opens the
// backend named (CPUDefault when name is ""; any name but the two is an
// error). ready, if not nil, says whether an opened CPUDefault can serve
// what the caller needs. Where it cannot open or is not ready, OpenCPU opens
// CPUFallback and hands warn the warning line that says why; what names what
// runs there ("programs", "eager ops"). A CPUFallback asked for by name is
// opened as it is.
func OpenCPU(name, what string, ready func(Backend) error, warn func(line string)) (Backend, error) {
	switch name {
	case "", CPUDefault:
	case CPUFallback:
		return Lookup(CPUFallback)
	default:
		return nil, fmt.Errorf("unknown cpu backend %q (want %s or %s)", name, CPUDefault, CPUFallback)
	}
	b, err := Lookup(CPUDefault)
	if err == nil && ready != nil {
		err = ready(b)
	}
	if err == nil {
		return b, nil
	}
	warn(fmt.Sprintf("tpucc: warning: %s run on the %s executor, not %s: %v\n", what, CPUFallback, CPUDefault, err))
	return Lookup(CPUFallback)
}
