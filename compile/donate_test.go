package compile_test

import (
	"testing"
	"unsafe"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// writeRow is a decode step's cache update: row u goes into slot pos of c.
func writeRow(c, u, pos *tensor.Tensor) *tensor.Tensor {
	zero := tensor.Scalar(0, ir.I32)
	return c.DynamicUpdateSlice(u, []*tensor.Tensor{zero, pos, zero})
}

// TestDonatedCacheUpdatedInPlace: on the cpu device (the llvm backend), a
// donated cache is updated where it lies: each step's result is the
// storage of the cache it was given, and holds what the eager update
// computes on a copy.
func TestDonatedCacheUpdatedInPlace(t *testing.T) {
	c, err := compile.New(writeRow, compile.Device("cpu"), compile.Donate(0), compile.Name("step"), compile.CacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	cache := tensor.Random(1, ir.F32, 2, 6, 4)
	want := tensor.FromSlice(cache.Float32s(), 2, 6, 4)
	for step := range 3 {
		u := tensor.Random(int64(10+step), ir.F32, 2, 1, 4)
		pos := tensor.Scalar(float64(step), ir.I32)
		storage := unsafe.SliceData(cache.Buffer().Bytes())
		out, err := c.Call(cache, u, pos)
		if err != nil {
			t.Fatal(err)
		}
		want = writeRow(want, u, pos)
		cache = out[0]
		if d := near(cache, want, 0); d != "" {
			t.Fatalf("step %d: %s", step, d)
		}
		if unsafe.SliceData(cache.Buffer().Bytes()) != storage {
			t.Fatalf("step %d: the result is not the donated cache's storage", step)
		}
	}
}
