//go:build unix

package regfile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// open uses O_NONBLOCK, which changes nothing for a regular file, so that a
// FIFO without a writer cannot block it, and O_NOFOLLOW for NoFollow.
func open(path string, links Links) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if links == NoFollow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if links == NoFollow && (errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)) { // EMLINK: the BSDs' O_NOFOLLOW
		return nil, fmt.Errorf("%s: %w", path, ErrSymlink)
	}
	return f, err
}
