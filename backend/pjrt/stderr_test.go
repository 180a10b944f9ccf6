package pjrt

import (
	"errors"
	"syscall"
	"testing"
)

// TestCaptureStderr: what is written to descriptor 2 during f is returned,
// with f's error, and descriptor 2 is the process's standard error again
// afterwards.
func TestCaptureStderr(t *testing.T) {
	var before, after syscall.Stat_t
	syscall.Fstat(2, &before)
	boom := errors.New("boom")
	out, err := CaptureStderr(func() error {
		syscall.Write(2, []byte("libtpu noise\n"))
		syscall.Write(2, []byte("more\n")) // not os.Stderr: go test -json gives it a pipe of its own
		return boom
	})
	if string(out) != "libtpu noise\nmore\n" || err != boom {
		t.Errorf("CaptureStderr = %q, %v; want the two lines and boom", out, err)
	}
	syscall.Fstat(2, &after)
	if before.Ino != after.Ino || before.Dev != after.Dev {
		t.Errorf("descriptor 2 is not restored: inode %d, was %d", after.Ino, before.Ino)
	}
}
