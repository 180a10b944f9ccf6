package llvm

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/tpucc/tpucc/backend"

	"github.com/tpucc/tpucc/ir"
)

// TestPlanMemoryAligned: an i32[1] takes over the arena of a freed u8[5],
// and every arena starts at an address aligned for any dtype. Arenas were
// make([]byte, n), which Go's allocator may place at an odd address for a
// few bytes: FuzzDifferential found an i32[1] that could not be viewed
// there (seed 123148, the corpus entry 410e829dfbaf04e0).
func TestPlanMemoryAligned(t *testing.T) {
	temp := func(dt ir.DType, n int64) slot { return slot{typ: ir.Tensor(dt, n), kind: slotTemp} }
	p := &plan{
		slots: []slot{temp(ir.U8, 5), temp(ir.U8, 3), temp(ir.I32, 1)},
		steps: []step{
			{bufs: []int{0}, outs: 1},
			{bufs: []int{1, 0}, outs: 1}, // the u8[5]'s last use
			{bufs: []int{2, 1}, outs: 1},
		},
	}
	for range 100 { // placements vary from one allocation to the next
		arenas := planMemory(p)
		if &arenas[2][0] != &arenas[0][0] {
			t.Fatalf("the i32[1] did not reuse the freed u8[5]'s arena")
		}
		for s, a := range arenas {
			if addr := uintptr(unsafe.Pointer(&a[0])); addr%8 != 0 {
				t.Fatalf("slot %d (%s): arena at %#x, not 8-byte aligned", s, p.slots[s].typ, addr)
			}
		}
		_ = make([]byte, 3) // move the allocator's tiny block along
	}
}

// TestSortScratchPerPart: an argsort's merge sort needs 8 bytes an element
// of a line in its call's scratch; the executable holds that once per part
// the call is split into (one for one line, three for three lines), not
// once per thread: a sort of one i8[2^26] line held 512 MiB per thread on
// top of its 320 MiB of tensors. Every other region is the plan's own.
func TestSortScratchPerPart(t *testing.T) {
	b := testBackend(t)
	b.threads = 4
	const n = 1 << 14
	for _, lines := range []int{1, 3, 8} {
		src := fmt.Sprintf("func @f(%%x: f32[%d,%d]) -> i32[%d,%d] {\n  %%o = argsort %%x {axis=1} : i32[%d,%d]\n  return %%o\n}\n", lines, n, lines, n, lines, n)
		m, f, x := compileSrc(t, b, src)
		s := x.newState()
		for i, r := range s.scratch {
			switch {
			case i < lines && len(r) != 8*n+64:
				t.Errorf("%d lines: scratch region %d is %d bytes, want %d", lines, i, len(r), 8*n+64)
			case i >= lines && len(r) >= 8*n:
				t.Errorf("%d lines: scratch region %d is %d bytes, want less than %d (no part of the sort uses it)", lines, i, len(r), 8*n)
			}
		}
		in := backend.New(f.Params[0].Type)
		xs := in.Float32s()
		for i := range xs {
			xs[i] = float32((i * 7919) % 1000)
		}
		agree(t, x, m, f, []*backend.Buffer{in})
	}
}
