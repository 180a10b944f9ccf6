package llvm

import (
	"context"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
)

// TestSplitParts: with more parts than the pool has threads (Threads 7),
// every row of a split loop kernel and of a split product is computed once
// and right, from one caller and from four at once (callers that find the
// pool busy run their parts on their own thread). The kernels over %s
// (301 rows) are fine steps, cut into more ranges than threads
// (fineRanges): the loop into 18 of 17 rows (the last 12), the reduction
// also, the softmax and the norm into 51 of 6 rows (the last 1).
func TestSplitParts(t *testing.T) {
	b, err := Open(Options{CacheDir: filepath.Join(t.TempDir(), "cache"), Threads: 7})
	if err != nil {
		t.Skipf("llvm backend unavailable: %v", err)
	}
	src := `func @f(%x: f32[100,1000], %a: f32[96,256], %w: f32[256,128], %s: f32[301,4000], %g: f32[4000], %h: f32[4000]) -> (f32[100,1000], f32[96,128], f32[301,4000], f32[301], f32[301,4000], f32[301,4000]) {
  %y = mul %x, %x
  %z = add %y, %x
  %d = dot_general %a, %w {lhs_batch=[], lhs_contract=[1], rhs_batch=[], rhs_contract=[0]} : f32[96,128]
  %e = exp %s
  %sum = reduce_sum %s {axes=[1]}
  %p = softmax %s {axis=1}
  %n = layer_norm %s, %g, %h {eps=1e-05}
  return %z, %d, %e, %sum, %p, %n
}
`
	m, err := tir.Parse("split.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x := differential(t, b, m, m.Entry(), 1)
	in := cpu.RandomInputs(m.Entry(), 2)
	want, err := cpu.Run(m, m.Entry(), in)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]string, 4)
	for g := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				got, err := x.Run(in)
				if err != nil {
					errs[g] = err.Error()
					return
				}
				for i := range want {
					if msg := compare(want[i], got[i]); msg != "" {
						errs[g] = msg
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for g, e := range errs {
		if e != "" {
			t.Errorf("caller %d: %s", g, e)
		}
	}
}

// TestPoolLateThread: a pool thread late for the last call, arriving while
// tpucc_pool_run writes the next call's job (testdata/pool_late.c plays it
// at that moment), takes no part. Before rt/pool.c's begin it read the next
// call's larger part count against the last call's exhausted counter, ran
// parts that did not exist and counted them off the next call, whose
// caller then waited for ever (a bf16 decode hung so); the driver hung too.
func TestPoolLateThread(t *testing.T) {
	tc, err := findToolchain()
	if err != nil {
		t.Skip(err)
	}
	exe := filepath.Join(t.TempDir(), "pool_late")
	if out, err := exec.Command(tc.clang, "-O2", "-o", exe, filepath.Join("testdata", "pool_late.c")).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe).Output()
	if err != nil {
		t.Fatalf("%v (a minute is a hang)\n%s", err, out)
	}
	want := "late thread took 0 parts; left 2\nlate thread took 0 parts; left 64\nrows run other than once: 0; left 0\n"
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}
