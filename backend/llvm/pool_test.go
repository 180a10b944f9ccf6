package llvm

import (
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
)

// A result of about 4 MiB (large enough for the pool) whose size no other
// test's result has, so that every pooled storage of this size is this
// test's.
const poolSrc = "func @f(%x: f32[1031,1021]) -> f32[1031,1021] {\n  %y = mul %x, %x\n  %z = add %y, %x\n  return %z\n}\n"

const poolWords = (1031*1021*4 + 7) / 8

// poolSeen are the addresses of every result this test has made (in any
// of its runs under -count): every storage of poolWords in the pool is one
// of them.
var poolSeen = map[uintptr]bool{}

// waitPooled collects garbage until the pool holds storage of words words
// (the finalizers that return storage run after a collection, on their own
// goroutine).
func waitPooled(t *testing.T, words int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		pool.Lock()
		n := len(pool.free[words])
		pool.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no dropped result's storage reached the pool")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestResultStorageReused: the storage of a result that nothing
// references is given to a later result, and the values are right; a
// result still referenced through a view keeps its storage and its
// values.
func TestResultStorageReused(t *testing.T) {
	b := testBackend(t)
	exe := compileText(t, "pool.tir", []byte(poolSrc))
	x, err := b.compile(exe.Module, exe.Entry, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := cpu.RandomInputs(exe.Entry, 2)
	want, err := cpu.Run(exe.Module, exe.Entry, args)
	if err != nil {
		t.Fatal(err)
	}
	run := func() *backend.Buffer {
		out, err := x.Run(args)
		if err != nil {
			t.Fatal(err)
		}
		poolSeen[uintptr(unsafe.Pointer(unsafe.SliceData(out[0].Bytes())))] = true // keeps nothing alive
		if !out[0].Equal(want[0]) {
			t.Fatal("the result differs from the reference executor's")
		}
		return out[0]
	}
	for range 3 { // dropped at once (the newest may stay reachable for a cycle or two)
		run()
	}
	waitPooled(t, poolWords)
	kept := run()
	if !poolSeen[uintptr(unsafe.Pointer(unsafe.SliceData(kept.Bytes())))] {
		t.Fatal("the result did not take a dropped result's storage")
	}
	view := kept.WithType(kept.Type()) // a view keeps the storage alive
	kept = nil
	runtime.GC()
	runtime.GC()
	next := run()
	if unsafe.SliceData(next.Bytes()) == unsafe.SliceData(view.Bytes()) {
		t.Fatal("storage still read through a view was reused")
	}
	if !view.Equal(want[0]) {
		t.Fatal("a view's values changed")
	}
}

// TestDroppedResultsReused: a loop that drops each result (8 MiB or more),
// as a benchmark or a serving loop does, gets its storage back: once the
// collector has found a dropped result unreachable, its storage is in the
// pool and the next call's result is written there. The test waits for
// that event (collecting until the storage is back) rather than for a
// time: on a busy host the finalizers run late, and a call made before
// they ran takes new storage, which is slower but not wrong. Under
// -count=3 it also checks that storage taken from the pool can be
// collected again (the free list's array once kept it reachable).
func TestDroppedResultsReused(t *testing.T) {
	const src = "func @f(%x: f32[2063,1021]) -> f32[2063,1021] {\n  %y = add %x, %x\n  return %y\n}\n"
	exe := compileText(t, "drop.tir", []byte(src))
	x, err := testBackend(t).compile(exe.Module, exe.Entry, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := cpu.RandomInputs(exe.Entry, 3)
	words := (2063*1021*4 + 7) / 8
	seen := map[uintptr]bool{}
	for range 24 {
		out, err := x.Run(args)
		if err != nil {
			t.Fatal(err)
		}
		seen[uintptr(unsafe.Pointer(unsafe.SliceData(out[0].Bytes())))] = true
		out = nil
		waitPooled(t, words)
	}
	if len(seen) > 2 {
		t.Fatalf("24 dropped results used %d storages, want at most 2", len(seen))
	}
}

// TestPoolHoldsOneRunsResults: when one Run's results are more than the
// pool's floor (a training step's new parameters and optimizer state,
// 1.9 GB for a Qwen3's embedding tables), a loop that drops the previous
// call's results still gets all their storage back: the pool keeps what
// one Run returns. With the floor lowered to 1 MiB and three results of
// about 4 MiB a call, the pool once kept one of the three, and every call
// after the first took two new storages.
func TestPoolHoldsOneRunsResults(t *testing.T) {
	const src = "func @f(%x: f32[1039,1013]) -> (f32[1039,1013], f32[1039,1013], f32[1039,1013]) {\n  %a = add %x, %x\n  %b = mul %x, %x\n  %c = sub %x, %a\n  return %a, %b, %c\n}\n"
	const words = (1039*1013*4 + 7) / 8
	pool.Lock()
	free, bytes, run, floor := pool.free, pool.bytes, pool.run, poolFloorBytes
	pool.free, pool.bytes, pool.run, poolFloorBytes = map[int][][]uint64{}, 0, 0, 1<<20
	pool.Unlock()
	defer func() {
		pool.Lock()
		pool.free, pool.bytes, pool.run, poolFloorBytes = free, bytes, run, floor
		pool.Unlock()
	}()
	exe := compileText(t, "steady.tir", []byte(src))
	x, err := testBackend(t).compile(exe.Module, exe.Entry, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := cpu.RandomInputs(exe.Entry, 5)
	seen := map[uintptr]bool{}
	for range 8 {
		out, err := x.Run(args)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out {
			seen[uintptr(unsafe.Pointer(unsafe.SliceData(o.Bytes())))] = true
		}
		out = nil
		waitPooledN(t, words, 3)
	}
	if len(seen) > 6 {
		t.Fatalf("8 calls dropping 3 results each used %d storages, want at most 6", len(seen))
	}
	pool.Lock()
	defer pool.Unlock()
	if want := 3 * 8 * words; pool.run != want {
		t.Fatalf("the pool's limit is %d bytes, want one call's results, %d", pool.run, want)
	}
}

// waitPooledN collects garbage until the pool holds n storages of words
// words, or fails after 10 s.
func waitPooledN(t *testing.T, words, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		pool.Lock()
		k := len(pool.free[words])
		pool.Unlock()
		if k >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d dropped results' storages reached the pool", k, n)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestCollectDueAfterOneRun: a miss collects once Runs have returned one
// Run's results since the last collection, however large the live heap:
// a training step's new parameters are its first results, and the last
// collection came late in the previous call, while the parameters that
// call then dropped were still its arguments. Short of that, the quarter
// of the live heap still decides.
func TestCollectDueAfterOneRun(t *testing.T) {
	ballast := make([]uint64, 16<<20) // 128 MiB live: a quarter is more than made
	runtime.GC()
	pool.Lock()
	made, returned, run := pool.made, pool.returned, pool.run
	pool.Unlock()
	defer func() {
		pool.Lock()
		pool.made, pool.returned, pool.run = made, returned, run
		pool.Unlock()
	}()
	const words = 1 << 20 // 8 MiB
	for _, c := range []struct {
		returned int
		want     bool
	}{{4 << 20, false}, {24 << 20, true}} {
		pool.Lock()
		pool.made, pool.returned, pool.run = 16<<20, c.returned, 24<<20
		pool.Unlock()
		if got := collectDue(words); got != c.want {
			t.Errorf("returned %d MiB of a Run's 24: collectDue = %v, want %v", c.returned>>20, got, c.want)
		}
	}
	runtime.KeepAlive(ballast)
}
