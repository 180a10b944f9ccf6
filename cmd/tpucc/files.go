package main

import (
	"io"
	"os"
	"path/filepath"
)

// maxSource bounds how much of a model file is read, so that pointing tpucc at a device
// or an enormous file fails with a message instead of exhausting memory.
const maxSource = 1 << 30

// stdinName is the file name diagnostics use for a program read from standard input ("-").
const stdinName = "<stdin>"

// readSource reads the model file at path, or standard input when path is "-". It returns
// the name diagnostics should carry. Every failure is a fileError naming the file.
func readSource(path string, stdin io.Reader) (name string, src []byte, err error) {
	if path == "-" {
		src, err = readLimited(stdinName, stdin)
		return stdinName, src, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return path, nil, osError(path, err)
	}
	if st.IsDir() {
		return path, nil, fileErrorf(path, "is a directory")
	}
	f, err := os.Open(path)
	if err != nil {
		return path, nil, osError(path, err)
	}
	defer f.Close()
	src, err = readLimited(path, f)
	return path, src, err
}

func readLimited(name string, r io.Reader) ([]byte, error) {
	src, err := io.ReadAll(io.LimitReader(r, maxSource+1))
	if err != nil {
		return nil, osError(name, err)
	}
	if len(src) > maxSource {
		return nil, fileErrorf(name, "file is larger than %d bytes", maxSource)
	}
	return src, nil
}

// pending is an output written under a temporary name in its destination's directory. It
// appears at its real path only when commit renames it, so a failed command leaves no
// output file behind, not even a partial one, and an existing file keeps its old contents.
//
// A destination that exists and is not a regular file (-o /dev/null, /dev/stdout, a named
// pipe) is written in place by commit instead: renaming over it would replace the device
// or the pipe with a regular file, which for /dev/null breaks the whole machine.
type pending struct {
	tmp, path string
	direct    func(io.Writer) error // set for a destination written in place
}

// newPending writes an output for path through write into a temporary file beside it.
// On failure nothing is left on disk.
func newPending(path string, write func(io.Writer) error) (*pending, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fileErrorf(path, "is a directory")
	} else if err == nil && !st.Mode().IsRegular() {
		return &pending{path: path, direct: write}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, osError(path, err)
	}
	p := &pending{tmp: f.Name(), path: path}
	err = write(f)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p.tmp)
		return nil, osError(path, err)
	}
	return p, nil
}

// commit renames every pending output into place. If one rename fails, the outputs already
// renamed are removed again and the remaining temporaries deleted, so the outputs appear
// together or (as far as the file system allows) not at all.
func commit(ps []*pending) error {
	for i, p := range ps {
		if err := p.place(); err != nil {
			for _, q := range ps[:i] {
				if q.direct == nil { // what went to a device or a pipe cannot be taken back
					os.Remove(q.path)
				}
			}
			discard(ps[i:])
			return osError(p.path, err)
		}
	}
	return nil
}

// place puts one output at its path: a rename, or a write in place for a destination
// that is not a regular file.
func (p *pending) place() error {
	if p.direct == nil {
		return os.Rename(p.tmp, p.path)
	}
	f, err := os.OpenFile(p.path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = p.direct(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// discard deletes the temporaries of outputs that will not be committed.
func discard(ps []*pending) {
	for _, p := range ps {
		if p.direct == nil {
			os.Remove(p.tmp)
		}
	}
}
