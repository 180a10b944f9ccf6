//go:build unix

package engine

import (
	"os"
	"syscall"
	"testing"
)

// hold locks the temporary file path as a live writer does, until the test
// ends.
func hold(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}
