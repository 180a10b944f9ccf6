//go:build !unix

package regfile

import (
	"fmt"
	"io/fs"
	"os"
)

// open refuses a symbolic link for NoFollow by a check on the name: without
// O_NOFOLLOW a link made between the check and the open is followed.
func open(path string, links Links) (*os.File, error) {
	if links == NoFollow {
		info, err := os.Lstat(path)
		if err != nil {
			return nil, err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: %w", path, ErrSymlink)
		}
	}
	return os.Open(path)
}
