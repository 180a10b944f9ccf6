package llvm

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Storage for large results, reused. Every Run returns its results in new
// memory, and the first touch of new memory costs the kernel a page fault
// per 4 KiB page: 16384 of them for a 64 MiB result, about as long as an
// elementwise kernel over it takes. So the storage of a large result is
// kept when nothing references it any more and handed to a later result of
// the same size. A finalizer on the storage itself (not on the Buffer, of
// which tensors make views) puts it back when the garbage collector finds
// it unreachable, so storage that any view still reads is never reused.
// Kernels write every element of their outputs (temporaries already live
// in reused arenas), so reused storage is never read before it is written.

const (
	poolMinBytes = 1 << 20   // smaller results are plain allocations
	poolMaxBytes = 512 << 20 // storage kept at most, over all sizes
)

var pool = struct {
	sync.Mutex
	free  map[int][][]uint64 // by length in words
	bytes int
}{free: map[int][][]uint64{}}

// newResult returns a buffer of type t for a Run's result: from the pool
// when t is large and storage of its size is free.
func newResult(t ir.Type) *backend.Buffer {
	n := byteSize(t)
	if n < poolMinBytes || t.DType == ir.I1 { // i1 views check their bytes
		return backend.New(t)
	}
	words := (n + 7) / 8
	w := takePooled(words)
	if w == nil {
		w = make([]uint64, words)
	}
	runtime.SetFinalizer(&w[0], func(p *uint64) { putPooled(unsafe.Slice(p, words)) })
	b, err := backend.View(t, unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n))
	if err != nil {
		panic(fmt.Sprintf("llvm: result storage: %v", err))
	}
	return b
}

func takePooled(words int) []uint64 {
	pool.Lock()
	defer pool.Unlock()
	l := pool.free[words]
	if len(l) == 0 {
		return nil
	}
	w := l[len(l)-1]
	pool.free[words] = l[:len(l)-1]
	pool.bytes -= 8 * words
	return w
}

// putPooled keeps w unless the pool is full; then the collector frees it.
func putPooled(w []uint64) {
	pool.Lock()
	defer pool.Unlock()
	if pool.bytes+8*len(w) > poolMaxBytes {
		return
	}
	pool.free[len(w)] = append(pool.free[len(w)], w)
	pool.bytes += 8 * len(w)
}

// pooledBytes is the storage the pool holds now (for tests).
func pooledBytes() int {
	pool.Lock()
	defer pool.Unlock()
	return pool.bytes
}
