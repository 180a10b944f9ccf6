package backend

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back the whole 2 MiB pages inside data
// with transparent huge pages (madvise MADV_HUGEPAGE), before anything
// touches them: where transparent_hugepage is "madvise" (the usual
// default), memory nothing advised is mapped 4 KiB at a time. It returns
// the bytes advised (0: none, the slice holds no whole huge page) and the
// kernel's error. A failure (a kernel without transparent huge pages says
// EINVAL) costs nothing but the speed, so callers may ignore it.
func adviseHuge(data []byte) (int, error) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	lo := (p + hugePage - 1) &^ (hugePage - 1)
	hi := (p + uintptr(len(data))) &^ (hugePage - 1)
	if len(data) == 0 || hi <= lo {
		return 0, nil
	}
	whole := data[lo-p : hi-p]
	if err := syscall.Madvise(whole, syscall.MADV_HUGEPAGE); err != nil {
		return 0, err
	}
	return len(whole), nil
}
