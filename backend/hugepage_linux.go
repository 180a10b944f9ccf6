package backend

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back b with transparent huge pages (2 MiB)
// when it first touches it: madvise(MADV_HUGEPAGE) over the whole 2 MiB
// pages inside b. Where THP is "madvise" (Debian's default) memory gets
// huge pages only when asked, and streaming through a 64 MiB operand on
// 4 KiB pages costs a TLB miss, and in a virtual machine a two-level page
// walk, every 4 KiB: bench/cpu's chain (three 64 MiB arrays) ran 15-20%
// faster with its operands on huge pages, and a C triad over the same
// arrays likewise (docs/PERFORMANCE.md). Memory Go has touched before
// keeps its small pages; an error (THP off, an old kernel) changes
// nothing but the speed, so it is ignored.
func adviseHuge(b []byte) {
	const huge = 2 << 20
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (p + huge - 1) &^ (huge - 1)
	hi := (p + uintptr(len(b))) &^ (huge - 1)
	if hi <= lo {
		return
	}
	syscall.Madvise(b[lo-p:hi-p], syscall.MADV_HUGEPAGE)
}
