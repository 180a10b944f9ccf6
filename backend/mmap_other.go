//go:build !unix

package backend

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// MapFile is not available on this system: read the file instead.
func MapFile(path string, offset int64, t ir.Type) (b *Buffer, unmap func() error, err error) {
	return nil, nil, fmt.Errorf("%s: memory-mapping files is not supported on this system", path)
}
