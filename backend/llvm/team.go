package llvm

import (
	_ "embed"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The threads that split a kernel call across the cores are native: the
// pool in rt/pool.c, built by clang through the object cache (hash-checked
// like every object) and loaded once per process. One call from Go runs a
// whole split kernel call; rt/pool.c says why.

//go:embed rt/pool.c
var poolSource string

var team struct {
	once sync.Once
	run  uintptr // tpucc_pool_run
	err  error
}

// startTeam builds, loads and starts the pool with threads-1 threads (the
// caller's thread is the other), once per process.
func (b *Backend) startTeam() error {
	team.once.Do(func() {
		var times BuildTimes
		data, err := b.cache.build(b.tc, b.tc.objectKey(poolSource), "pool.c", poolSource, &times)
		if err != nil {
			team.err = err
			return
		}
		lib, err := b.cache.open(data, "the thread pool")
		if err != nil {
			team.err = err
			return
		}
		start, err := purego.Dlsym(lib, "tpucc_pool_start")
		if err == nil {
			team.run, err = purego.Dlsym(lib, "tpucc_pool_run")
		}
		if err != nil {
			team.err = fmt.Errorf("llvm: the thread pool: %v", err)
			return
		}
		// More threads than cores would spin against each other: a call
		// split into more parts than threads has its parts taken in turn.
		n := min(max(b.threads, 1), runtime.NumCPU())
		if r, _, _ := purego.SyscallN(start, uintptr(n)); r != 0 {
			team.err = fmt.Errorf("llvm: the thread pool could not start its threads")
		}
	})
	return team.err
}

// runSplit runs the kernel fn over [0, rows) in parts of chunk rows on the
// pool, part i with scratch[i]; args is the caller's reused argument slice.
func runSplit(args []uintptr, fn, bufs uintptr, rows, chunk int64, scratch []uintptr) {
	args = append(args[:0], fn, bufs, uintptr(rows), uintptr(chunk), uintptr(unsafe.Pointer(&scratch[0])))
	purego.SyscallN(team.run, args...)
}
