//go:build !unix

package engine

import (
	"io/fs"
	"os"
)

// openEntry opens an entry for reading, refusing a symbolic link. Without
// O_NOFOLLOW a link made between the check and the open is followed; the
// directory is private (internal/privdir), so only its owner could make it.
func openEntry(path string) (*os.File, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return nil, errSymlink
	}
	return os.Open(path)
}
