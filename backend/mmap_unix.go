//go:build unix

package backend

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/tpucc/tpucc/ir"
)

// MapFile maps the bytes of the regular file at path from offset on, as many
// as the static type t needs, read-only into memory and returns a buffer over
// them, without copying: a 10 GB checkpoint costs page-cache pages as they
// are read, not 10 GB of heap. unmap releases the mapping; the buffer, and
// any slice taken from it (Elems, Bytes), must not be used after it;
// writing through them faults, since the pages are read-only (kernels never
// write their operands); and the file must not shrink while it is mapped.
// The data must be aligned for t's dtype: offset a multiple of its size.
// Errors name the file.
func MapFile(path string, offset int64, t ir.Type) (b *Buffer, unmap func() error, err error) {
	size := byteLen(t)
	if size < 0 {
		return nil, nil, fmt.Errorf("%s: %s is not a static type of reasonable size", path, t)
	}
	if offset < 0 || offset%int64(t.DType.Size()) != 0 {
		return nil, nil, fmt.Errorf("%s: offset %d is not a non-negative multiple of %d for %s", path, offset, t.DType.Size(), t)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &fs.PathError{Op: "mmap", Path: path, Err: errors.New("not a regular file")}
	}
	if offset > fi.Size() || int64(size) > fi.Size()-offset {
		return nil, nil, fmt.Errorf("%s: %s needs %d bytes at offset %d, the file has %d", path, t, size, offset, fi.Size())
	}
	if size == 0 {
		return New(t), func() error { return nil }, nil
	}
	// mmap needs a page-aligned offset: map from the page holding offset.
	page := int64(os.Getpagesize())
	start := offset / page * page
	mem, err := syscall.Mmap(int(f.Fd()), start, size+int(offset-start), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "mmap", Path: path, Err: err}
	}
	data := mem[offset-start:]
	b, err = View(t, data)
	if err != nil {
		syscall.Munmap(mem)
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, func() error { return syscall.Munmap(mem) }, nil
}
