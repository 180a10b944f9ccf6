//go:build !linux

package backend

// adviseHuge advises nothing: transparent huge pages are Linux's.
func adviseHuge(data []byte) (int, error) { return 0, nil }
