package llvm

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// maxRecord bounds a KEY.sha256 record: 64 hex digits and a newline.
const maxRecord = 128

// readRegular returns the bytes of path when it is a regular file of at
// most limit bytes. Everything in the cache is input: a FIFO, a device, a
// symbolic link (to /dev/zero, say), a directory or an oversized file is
// refused without being read, so a planted name can neither hang a run nor
// make it allocate without bound. The file is opened without following
// links and without blocking, then checked again on the descriptor.
func readRegular(path string, limit int64) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, oddFile(path, limit)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, oddFile(path, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit { // it grew since the check
		return nil, oddFile(path, limit)
	}
	return data, nil
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
