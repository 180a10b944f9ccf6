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
