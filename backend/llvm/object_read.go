package llvm

import (
	"errors"
	"fmt"
	"os"

	"github.com/tpucc/tpucc/internal/regfile"
)

// maxRecord bounds a KEY.sha256 record: 64 hex digits and a newline.
const maxRecord = 128

// readRegular returns the bytes of path when it is a regular file of at
// most limit bytes. Everything in the cache is input: a FIFO, a device, a
// symbolic link (to /dev/zero, say), a directory or an oversized file is
// refused without being read (internal/regfile), so a planted name can
// neither hang a run nor make it allocate without bound.
func readRegular(path string, limit int64) ([]byte, error) {
	data, err := regfile.Read(path, limit, regfile.NoFollow)
	if errors.Is(err, regfile.ErrNotRegular) || errors.Is(err, regfile.ErrTooLarge) {
		return nil, oddFile(path, limit)
	}
	return data, err
}

func oddFile(path string, limit int64) error {
	return fmt.Errorf("llvm: %s is not a regular file of at most %d bytes", path, limit)
}

// clearOdd removes whatever is at path unless it is a regular file (or
// nothing): a directory, FIFO or link planted at one of a key's names
// would make the rename that installs a fresh build fail. The cache
// directory is private, so what is there is this user's to remove.
func clearOdd(path string) {
	fi, err := os.Lstat(path)
	if err == nil && !fi.Mode().IsRegular() {
		os.RemoveAll(path)
	}
}
