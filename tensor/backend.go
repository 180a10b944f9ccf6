package tensor

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/backend/llvm"
)

// eager is the backend every eager op runs on, once chosen.
var eager atomic.Pointer[eagerChoice]

type eagerChoice struct {
	name string
	b    backend.Eager
}

// EagerEnv names the environment variable that selects the default eager
// backend: "reference" for the reference executor, "llvm" (or unset) for
// the llvm backend's eager kernels.
const EagerEnv = "TPUCC_EAGER_BACKEND"

// eagerWarn is where the one warning about falling back goes.
var eagerWarn io.Writer = os.Stderr

var defaultOnce sync.Once

// eagerBackend is the chosen backend; the first eager op without a choice
// opens the default (defaultEager).
func eagerBackend() backend.Eager {
	if c := eager.Load(); c != nil {
		return c.b
	}
	defaultOnce.Do(func() { eager.CompareAndSwap(nil, defaultEager()) })
	return eager.Load().b
}

// defaultEager is the cpu device's backend (backend.OpenCPU): the llvm
// backend's eager kernels (shape-generic kernels built once per machine and
// kept in its object cache), unless EagerEnv says "reference". When clang is
// missing or the library does not build, eager ops run on the reference
// executor, and one warning says why.
func defaultEager() *eagerChoice {
	name := os.Getenv(EagerEnv)
	warn := func(line string) { io.WriteString(eagerWarn, line) }
	b, err := backend.OpenCPU(name, "eager ops", eagerReady, warn)
	if err != nil {
		fmt.Fprintf(eagerWarn, "tpucc: warning: %s=%q is neither %s nor %s; eager ops run on the %s executor\n", EagerEnv, name, backend.CPUDefault, backend.CPUFallback, backend.CPUFallback)
		b = cpu.Reference{}
	}
	return &eagerChoice{name: b.Name(), b: b.(backend.Eager)}
}

// eagerReady builds the llvm backend's eager library now, so that a missing
// clang or a failing build falls back here rather than failing the first op.
// A refused cache directory is not a reason to fall back: the backend then
// keeps its objects in the user's own fallback directory, reused by every
// process, and has said so once on stderr.
func eagerReady(b backend.Backend) error {
	lb, ok := b.(*llvm.Backend)
	if !ok {
		return fmt.Errorf("backend %s does not run eager ops", b.Name())
	}
	_, err := lb.EagerTimes()
	return err
}

// SetEagerBackend makes eager ops run on the backend registered as name
// (backend.Names): "llvm" (the default, see EagerEnv) or "reference", the
// reference executor, whose results are the oracle's bit for bit. The
// backend must run single instructions (backend.Eager). Safe to call while
// other goroutines compute; ops already running finish where they started.
func SetEagerBackend(name string) error {
	b, err := backend.Lookup(name)
	if err != nil {
		return err
	}
	e, ok := b.(backend.Eager)
	if !ok {
		return fmt.Errorf("backend %q does not run eager ops", name)
	}
	eager.Store(&eagerChoice{name: name, b: e})
	return nil
}

// EagerBackend names the backend eager ops run on (opening the default if
// none was chosen yet).
func EagerBackend() string {
	eagerBackend()
	return eager.Load().name
}
