package tensor

import (
	"fmt"
	"sync/atomic"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
)

// eager is the backend every eager op runs on.
var eager atomic.Pointer[eagerChoice]

type eagerChoice struct {
	name string
	b    backend.Eager
}

func eagerBackend() backend.Eager {
	if c := eager.Load(); c != nil {
		return c.b
	}
	return cpu.Reference{}
}

// SetEagerBackend makes eager ops run on the backend registered as name
// (backend.Names); "reference", the reference executor, is the default. The
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

// EagerBackend names the backend eager ops run on.
func EagerBackend() string {
	if c := eager.Load(); c != nil {
		return c.name
	}
	return "reference"
}
