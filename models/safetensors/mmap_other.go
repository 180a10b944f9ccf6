//go:build !unix

package safetensors

import (
	"fmt"
	"io"
)

const openFlags = 0

// mapFile reads the whole file where there is no mmap: the same bytes,
// without the laziness.
func mapFile(path string) ([]byte, func() error, error) {
	fh, size, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("%s: %d bytes do not fit in memory", path, size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(fh, data); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	return data, func() error { return nil }, nil
}
