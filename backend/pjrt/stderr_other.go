//go:build !linux

package pjrt

// CaptureStderr runs f; only on Linux is standard error captured.
func CaptureStderr(f func() error) ([]byte, error) { return nil, f() }
