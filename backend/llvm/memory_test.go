package llvm

import (
	"testing"
	"unsafe"

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
