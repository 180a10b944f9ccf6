// Package regfile opens the small files tpucc reads as input without
// trusting what is at their names (cache records, output manifests, key
// files): a FIFO would block the reader forever, a device or a link to
// /dev/zero would feed it without end, and a directory is no file at all.
// A name is opened without blocking and, when asked, without following a
// final symbolic link, and is checked on the open descriptor, so a name
// swapped between a check and the open is caught.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is the error, wrapped, for a name that is not a regular
// file.
var ErrNotRegular = errors.New("not a regular file")

// ErrSymlink, which is also ErrNotRegular, is the error, wrapped, for a
// symbolic link opened with NoFollow.
var ErrSymlink = fmt.Errorf("%w (a symbolic link)", ErrNotRegular)

// ErrTooLarge is the error, wrapped, for a file longer than Read's limit.
var ErrTooLarge = errors.New("file too large")

// Links says whether Open follows a final symbolic link.
type Links bool

const (
	Follow   Links = true
	NoFollow Links = false
)

// Open opens path for reading when it is a regular file and returns it with
// its description. For anything else it returns an error wrapping
// ErrNotRegular and, where the name could be described, its FileInfo (so
// that a caller can name the mode).
func Open(path string, links Links) (*os.File, fs.FileInfo, error) {
	f, err := open(path, links)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, info, fmt.Errorf("%s: %w (mode %s)", path, ErrNotRegular, info.Mode())
	}
	return f, info, nil
}

// Read returns the bytes of the regular file at path when it holds at most
// limit bytes. A longer file is refused unread (an error wrapping
// ErrTooLarge), and one that grows past limit while it is read is refused
// too, so no more than limit+1 bytes are ever held.
func Read(path string, limit int64, links Links) ([]byte, error) {
	f, info, err := Open(path, links)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info.Size() > limit {
		return nil, fmt.Errorf("%s: %w (%d bytes, more than %d)", path, ErrTooLarge, info.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w (grew past %d bytes while read)", path, ErrTooLarge, limit)
	}
	return data, nil
}
