//go:build !linux

package backend

// AdviseHugePages advises nothing: transparent huge pages are Linux's
// (hugepage_linux.go).
func AdviseHugePages(data []byte) (int, error) { return 0, nil }
