//go:build unix

package safetensors

import (
	"fmt"
	"syscall"
)

// openFlags keeps open(2) from blocking on a FIFO before Stat can refuse it.
const openFlags = syscall.O_NONBLOCK

// mapFile maps a regular file read-only. The mapping outlives the
// descriptor, which is closed at once.
func mapFile(path string) ([]byte, func() error, error) {
	fh, size, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	if size == 0 {
		return []byte{}, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("%s: %d bytes do not fit in the address space", path, size)
	}
	data, err := syscall.Mmap(int(fh.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: mmap: %v", path, err)
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
