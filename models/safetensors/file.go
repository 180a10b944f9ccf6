package safetensors

import (
	"fmt"
	"os"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// File is one open safetensors file. Its tensors are views of a read-only
// memory mapping: they stay valid until Close, and nothing may write to them.
type File struct {
	path    string
	header  *Header
	byName  map[string]int // index into header.Tensors
	data    []byte         // the whole file
	release func() error
}

// OpenFile opens and verifies one safetensors file. Only a regular file is
// accepted (a symbolic link to one is followed, as in a Hub cache).
func OpenFile(path string) (*File, error) {
	data, release, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	h, err := ParseHeader(data, int64(len(data)))
	if err != nil {
		release()
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	f := &File{path: path, header: h, byName: make(map[string]int, len(h.Tensors)), data: data, release: release}
	for i, t := range h.Tensors {
		f.byName[t.Name] = i
	}
	return f, nil
}

// Path is the file's path as given to OpenFile.
func (f *File) Path() string { return f.path }

// Metadata is the header's "__metadata__" object (nil when absent).
func (f *File) Metadata() map[string]string { return f.header.Metadata }

// Names lists the tensors in the order of their bytes in the file.
func (f *File) Names() []string {
	names := make([]string, len(f.header.Tensors))
	for i, t := range f.header.Tensors {
		names[i] = t.Name
	}
	return names
}

// Info describes the tensor called name.
func (f *File) Info(name string) (Info, bool) {
	i, ok := f.byName[name]
	if !ok {
		return Info{}, false
	}
	return f.header.Tensors[i], true
}

// Tensor returns the tensor called name as a view of the file's bytes.
// A BOOL tensor is checked to hold only 0 and 1, as an i1 buffer must.
func (f *File) Tensor(name string) (*backend.Buffer, error) {
	if f.data == nil {
		return nil, fmt.Errorf("%s: tensor %q: the file is closed", f.path, name)
	}
	info, ok := f.Info(name)
	if !ok {
		return nil, fmt.Errorf("%s: no tensor %q", f.path, name)
	}
	at := f.header.DataAt
	bytes := f.data[at+info.Begin : at+info.End : at+info.End]
	if info.DType == ir.I1 {
		for i, b := range bytes {
			if b > 1 {
				return nil, fmt.Errorf("%s: tensor %q: BOOL element %d is the byte %d, not 0 or 1", f.path, name, i, b)
			}
		}
	}
	buf, err := backend.View(info.Type(), bytes)
	if err != nil { // the header check makes this unreachable; keep the error honest
		return nil, fmt.Errorf("%s: tensor %q: %v", f.path, name, err)
	}
	return buf, nil
}

// Close unmaps the file. Every buffer it returned becomes invalid.
func (f *File) Close() error {
	if f.data == nil {
		return nil
	}
	f.data = nil
	return f.release()
}

// openRegular opens path for reading and requires a regular file. On unix the
// open does not block on a FIFO or a device (see openFlags).
func openRegular(path string) (*os.File, int64, error) {
	fh, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		fh.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	return fh, st.Size(), nil
}
