package llvm

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
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
//
// The collector runs when the heap has grown by its live size, and storage
// taken from the pool does not grow it: left alone, a loop that drops each
// result found the pool empty on about half its calls, and each of those
// paid 20 ms of faults for 64 MiB (bench/cpu's chain). So when the pool has
// nothing of the size asked for (8 MiB or more), and the results made
// since newResult last collected amount to a quarter of the live heap (the
// pool's storage left out), it collects and looks again; for 4 to 8 MiB
// it starts that collection in the background and takes new storage
// meanwhile (aheadMinBytes). And when a call
// takes the pool's last storage of a size, a collection starts in the
// background, so that the storage of results dropped since is back before
// the next call asks. Collections are then at most those of GOGC=25 for the
// results alone, a fraction of a millisecond against the faults they save.

const (
	poolMinBytes = 1 << 20 // smaller results are plain allocations
	// collectMinBytes is the least result a miss collects for: the faults
	// of 8 MiB (about 2.5 ms here) outweigh a collection (0.3-1 ms), those
	// of 1 MiB do not.
	collectMinBytes = 8 << 20
	// aheadMinBytes is the least result a miss starts a collection in the
	// background for (when one is due), taking new storage meanwhile: the
	// faults of 4 MiB cost 1.3 ms (a 1024 x 1024 product ran 5.6 ms a call
	// in new storage, 4.3 in reused), and beside a large live heap (bench/cpu
	// holds hundreds of MiB of inputs) the collector's own cycles came so
	// seldom that 4 MiB results were new memory for tens of calls in a row:
	// the matmul's rounds ran 5.6-6.1 ms or 4.3-4.5 by whether a cycle had
	// just refilled the pool; with this, 4.2-5.2 ms (-skip-peers, three
	// runs each, alternated). A blocking collection there (as for 8 MiB)
	// cost more: it waits for the sweep of the whole heap.
	aheadMinBytes = 4 << 20
)

// poolFloorBytes is the storage the pool keeps at most, over all sizes,
// unless one Run returns more (pool.run): a training step returns its
// parameters and optimizer state anew each call and the caller drops the
// previous ones, three [151936, 1024] f32 tables (1.9 GB) for a Qwen3's
// embedding alone; kept to 512 MiB, the pool took none of them and every
// step first touched 1.9 GB of new memory (0.46 M page faults). A
// variable so that a test can see the limit grow with small results.
var poolFloorBytes = 512 << 20

var pool = struct {
	sync.Mutex
	free  map[int][][]uint64 // by length in words
	bytes int
	// made is the bytes of pooled-size results handed out since
	// newResult last collected.
	made uint64
	// run is the most bytes of pooled-size results one Run has returned:
	// a loop that drops each call's results needs that much back.
	run int
	// returned is the bytes of pooled-size results Runs returned since
	// newResult last collected.
	returned int
}{free: map[int][][]uint64{}}

// collectFor returns storage of words words after a collection when enough
// results were made since the last one for some of them to be garbage;
// otherwise, or when none was, new storage.
func collectFor(words int) []uint64 {
	if collectDue(words) {
		runtime.GC()
		// The finalizers run on their own goroutine once the cycle ends.
		for range 4 {
			if w, _ := takePooled(words); w != nil {
				return w
			}
			runtime.Gosched()
		}
	}
	return make([]uint64, words)
}

// collectDue reports whether a collection may find results of words
// words dropped: they are large enough for their faults to cost more than
// a collection, and the results made since the last one are a quarter of
// the live heap, or
// Runs returned those of one Run since. It counts a collection from then on.
func collectDue(words int) bool {
	if 8*words < aheadMinBytes {
		return false
	}
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(m)
	pool.Lock()
	defer pool.Unlock()
	live := m[0].Value.Uint64() - min(uint64(pool.bytes), m[0].Value.Uint64())
	// Or one Run's results were returned since: a loop that drops each
	// call's results has dropped that much by then. A training step
	// allocates its new parameters first, beside a live heap (the old
	// ones, the arenas) of many times them, and collected last for a
	// small result late in the previous call, before that call's
	// arguments were dropped: by the quarter alone its next call took
	// its 1.9 GB anew.
	if pool.made < live/4 && (pool.run == 0 || pool.returned < pool.run) {
		return false
	}
	pool.made, pool.returned = 0, 0
	return true
}

// collecting is set while a collection started by collectAhead runs.
var collecting atomic.Bool

// collectAhead starts a collection in the background when the pool has
// just given its last storage of words words, so that the storage of
// results dropped since is back before the next call asks: the blocking
// collection of a miss cost the chain (16M floats) about a millisecond of
// its 9 ms per call.
func collectAhead(words int) {
	if !collectDue(words) || !collecting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		runtime.GC()
		collecting.Store(false)
	}()
}

// newResult returns a buffer of type t for a Run's result: from the pool
// when t is large and storage of its size is free.
func newResult(t ir.Type) *backend.Buffer {
	n := byteSize(t)
	if !pooledSize(t) {
		return backend.New(t)
	}
	words := (n + 7) / 8
	w, last := takePooled(words)
	switch {
	case w == nil && 8*words < collectMinBytes: // 4-8 MiB: see aheadMinBytes
		collectAhead(words)
		w = make([]uint64, words)
	case w == nil:
		w = collectFor(words)
	case last:
		collectAhead(words)
	}
	pool.Lock()
	pool.made += uint64(8 * words)
	pool.Unlock()
	runtime.SetFinalizer(&w[0], func(p *uint64) { putPooled(unsafe.Slice(p, words)) })
	b, err := backend.View(t, unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n))
	if err != nil {
		panic(fmt.Sprintf("llvm: result storage: %v", err))
	}
	return b
}

// takePooled returns free storage of words words, if any, and whether it
// was the last.
func takePooled(words int) (w []uint64, last bool) {
	pool.Lock()
	defer pool.Unlock()
	l := pool.free[words]
	if len(l) == 0 {
		return nil, false
	}
	w = l[len(l)-1]
	l[len(l)-1] = nil // else the list's array keeps w reachable, and its finalizer never runs
	pool.free[words] = l[:len(l)-1]
	pool.bytes -= 8 * words
	return w, len(l) == 1
}

// noteRun raises the pool's limit to n, the bytes of pooled-size results
// one Run returned, and counts them returned.
func noteRun(n int) {
	pool.Lock()
	pool.run = max(pool.run, n)
	pool.returned += n
	pool.Unlock()
}

// pooledSize reports whether newResult takes t's storage from the pool.
func pooledSize(t ir.Type) bool {
	return byteSize(t) >= poolMinBytes && t.DType != ir.I1 // i1 views check their bytes
}

// putPooled keeps w unless the pool is full; then the collector frees it.
func putPooled(w []uint64) {
	pool.Lock()
	defer pool.Unlock()
	if pool.bytes+8*len(w) > max(poolFloorBytes, pool.run) {
		return
	}
	pool.free[len(w)] = append(pool.free[len(w)], w)
	pool.bytes += 8 * len(w)
}
