package engine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tpucc/tpucc/internal/privdir"
	"github.com/tpucc/tpucc/internal/regfile"
	"github.com/tpucc/tpucc/ir"
)

// errSymlink is readBounded's error for an entry that is a symbolic link.
var errSymlink = errors.New("it is a symbolic link")

// readEntry loads and checks the entry file at path. A missing file is
// fs.ErrNotExist; every other failure says what is wrong with the file.
func readEntry(path string, k fullKey, target string, want *ir.Func) (*Executable, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	return decodeEntry(data, k, target, want)
}

// readBounded reads an entry file without trusting it: it opens regular
// files only and never follows a symbolic link (internal/regfile: a FIFO
// would block the reader, a link to /dev/zero would exhaust its memory),
// and reads exactly the length the header declares, when the file has that
// length, up to maxEntryBytes.
func readBounded(path string) ([]byte, error) {
	f, info, err := regfile.Open(path, regfile.NoFollow)
	switch {
	case errors.Is(err, regfile.ErrSymlink):
		return nil, errSymlink
	case errors.Is(err, regfile.ErrNotRegular):
		return nil, fmt.Errorf("it is not a regular file (mode %s)", info.Mode())
	case errors.Is(err, fs.ErrNotExist):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("unreadable: %v", err)
	}
	defer f.Close()
	head := make([]byte, min(info.Size(), maxHeaderBytes))
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, fmt.Errorf("unreadable: %v", err)
	}
	_, n, start, err := parseHeader(head)
	if err != nil {
		return nil, err
	}
	switch have := info.Size() - int64(start); {
	case have < n:
		return nil, fmt.Errorf("truncated: %d of %d bytes", have, n)
	case have > n:
		return nil, fmt.Errorf("%d bytes, want %d", have, n)
	}
	data := make([]byte, int64(start)+n)
	copy(data, head)
	if _, err := io.ReadFull(f, data[len(head):]); err != nil {
		return nil, fmt.Errorf("unreadable: %v", err)
	}
	return data, nil
}

// writeAtomic writes data to path through a temporary file in the cache's
// directory, flushed to disk before a rename makes it the entry, so that
// neither a reader nor a crash ever leaves a partial entry under its name.
// The temporary is locked until it is renamed (templock_unix.go).
func (c *Cache) writeAtomic(path string, data []byte) error {
	tmp, err := c.createTemp()
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer func() {
		tmp.Close() // after the rename: the lock covers the file until it is the entry
		c.mu.Lock()
		delete(c.ours, name)
		c.mu.Unlock()
	}()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	syncDir(c.dir)
	return nil
}

// createTemp creates and locks a temporary file in the cache's directory,
// marked as this Cache's. A sweeper that took the file for a dead writer's
// between its creation and its lock has removed it: then another is made.
func (c *Cache) createTemp() (*os.File, error) {
	for try := 0; ; try++ {
		tmp, err := os.CreateTemp(c.dir, ".tmp-*")
		if errors.Is(err, fs.ErrNotExist) { // the directory was removed since it was opened
			if err = privdir.EnsureOwnerOnly(c.dir); err == nil {
				tmp, err = os.CreateTemp(c.dir, ".tmp-*")
			}
		}
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.ours[tmp.Name()] = true
		c.mu.Unlock()
		if err := lockTemp(tmp); err != nil {
			return tmp, nil // no lock here: the age rule alone protects it
		}
		held, err1 := tmp.Stat()
		named, err2 := os.Lstat(tmp.Name())
		if err1 == nil && err2 == nil && os.SameFile(held, named) || try == 2 {
			return tmp, nil
		}
		tmp.Close()
		c.mu.Lock()
		delete(c.ours, tmp.Name())
		c.mu.Unlock()
	}
}

// syncDir makes a rename in dir durable. Some systems cannot sync a
// directory; the entry is complete either way, only its survival of a
// crash is less certain, so a failure is ignored.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// cacheFile is an entry or a temporary file of the directory.
type cacheFile struct {
	path string
	size int64
	mod  time.Time
	temp bool
}

// scan lists the directory's entries and temporary files, removing the
// temporaries of dead writers (sweepAbandoned), never this Cache's.
func (c *Cache) scan() []cacheFile {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return nil
	}
	var files []cacheFile
	for _, e := range ents {
		temp := strings.HasPrefix(e.Name(), ".tmp-")
		if !temp && !strings.HasSuffix(e.Name(), ".tpucc") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		f := cacheFile{filepath.Join(c.dir, e.Name()), info.Size(), info.ModTime(), temp}
		if temp {
			c.mu.Lock()
			ours := c.ours[f.path]
			c.mu.Unlock()
			if !ours && sweepAbandoned(f.path, f.mod) {
				c.swept.Add(1)
				continue
			}
		}
		files = append(files, f)
	}
	return files
}

// trim removes the least recently used entries until the directory
// (temporary files included) is under the cap, never the entry just
// written (keep).
func (c *Cache) trim(keep string) int {
	files := c.scan()
	total := int64(0)
	for _, f := range files {
		total += f.size
	}
	sort.Slice(files, func(i, j int) bool {
		if !files[i].mod.Equal(files[j].mod) {
			return files[i].mod.Before(files[j].mod)
		}
		return files[i].path < files[j].path
	})
	n := 0
	for _, f := range files {
		if total <= c.maxBytes {
			break
		}
		if f.path == keep || f.temp {
			continue
		}
		if os.Remove(f.path) == nil {
			total -= f.size
			n++
			c.evictions.Add(1)
		}
	}
	return n
}
