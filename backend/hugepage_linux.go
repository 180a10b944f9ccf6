package backend

import (
	"syscall"
	"unsafe"
)

// AdviseHugePages asks the kernel to back the whole 2 MiB pages inside
// data with transparent huge pages (madvise MADV_HUGEPAGE). Called before
// anything writes to data (a New buffer's storage, fresh from the system,
// is untouched), the pages are then faulted in 2 MiB at a time; pages
// already faulted in stay as they are. It returns the bytes advised (0:
// data holds no whole huge page) and the kernel's error; a refusal (a
// kernel without transparent huge pages says EINVAL) leaves 4 KiB pages,
// slower and never wrong. Elsewhere than Linux it advises nothing.
//
// tpucc advises only storage kept for long (LongLivedBytes: a model's
// stacked weights): a decode step reads every weight each token, faster
// from huge pages, while faulting them in can take several times as long
// (docs/CPU_BACKEND.md, "Huge pages"), a price fresh results would pay
// every call.
func AdviseHugePages(data []byte) (int, error) {
	if len(data) == 0 {
		return 0, nil
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	lo := (p + hugePage - 1) &^ (hugePage - 1)
	hi := (p + uintptr(len(data))) &^ (hugePage - 1)
	if hi <= lo {
		return 0, nil
	}
	whole := data[lo-p : hi-p]
	if err := syscall.Madvise(whole, syscall.MADV_HUGEPAGE); err != nil {
		return 0, err
	}
	return len(whole), nil
}
