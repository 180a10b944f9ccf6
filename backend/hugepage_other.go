//go:build !linux

package backend

// adviseHuge does nothing here: transparent huge pages are Linux's.
func adviseHuge(b []byte) {}
