//go:build unix

package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRead: a regular file within the limit is read, through a link only
// when links are followed; a FIFO (which blocked a reader forever), a
// directory, a link under NoFollow and a file over the limit are refused
// with the error that names them.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo, link := filepath.Join(dir, "fifo"), filepath.Join(dir, "link")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path  string
		limit int64
		links Links
		data  string
		err   string
		is    error
	}{
		{file, 5, NoFollow, "12345", "", nil},
		{link, 5, Follow, "12345", "", nil},
		{file, 4, NoFollow, "", file + ": file too large (5 bytes, more than 4)", ErrTooLarge},
		{link, 5, NoFollow, "", link + ": not a regular file (a symbolic link)", ErrSymlink},
		{fifo, 5, Follow, "", fifo + ": not a regular file (mode prw-------)", ErrNotRegular},
		{dir, 5, NoFollow, "", dir + ": not a regular file (mode drwx------)", ErrNotRegular},
	} {
		data, err := Read(c.path, c.limit, c.links)
		if c.err == "" {
			if err != nil || string(data) != c.data {
				t.Errorf("Read(%s): %q, %v; want %q", c.path, data, err, c.data)
			}
			continue
		}
		if err == nil || err.Error() != c.err || !errors.Is(err, c.is) {
			t.Errorf("Read(%s, %d, %v): error %v, want %q", c.path, c.limit, c.links, err, c.err)
		}
	}
}
