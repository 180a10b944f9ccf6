//go:build unix

package engine

import (
	"errors"
	"os"
	"syscall"
)

// openEntry opens an entry for reading without following a symbolic link
// and without blocking on a FIFO (readBounded then refuses both).
func openEntry(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) { // EMLINK: the BSDs' O_NOFOLLOW
		return nil, errSymlink
	}
	return f, err
}
