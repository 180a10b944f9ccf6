package pjrt

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestUserKey: no key when none is configured; the default file in the
// configuration directory; a file that is short, others may read, or not a
// file (a directory, a FIFO) is refused with the reason.
func TestUserKey(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv(EnvKeyFile, "")
	if key, path, err := UserKey(); key != nil || path != "" || err != nil {
		t.Errorf("UserKey with no key file = %q, %q, %v; want nothing", key, path, err)
	}
	def := filepath.Join(dir, "tpucc", "pjrt.key")
	os.MkdirAll(filepath.Dir(def), 0o700)
	os.WriteFile(def, []byte("sixteen bytes!!!"), 0o400)
	if key, path, err := UserKey(); string(key) != "sixteen bytes!!!" || path != def || err != nil {
		t.Errorf("UserKey with the default file = %q, %q, %v", key, path, err)
	}
	short := filepath.Join(dir, "short.key")
	os.WriteFile(short, []byte("fifteen bytes!!"), 0o600)
	open := filepath.Join(dir, "open.key")
	os.WriteFile(open, []byte("sixteen bytes!!!"), 0o640)
	os.Chmod(open, 0o640)
	fifo := filepath.Join(dir, "fifo.key") // opening it blocked UserKey forever
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{short, "key file " + short + ": 15 bytes, want 16 to 4096"},
		{open, "key file " + open + ": mode 0640 lets others read or write it; want 0600 (chmod 600 it)"},
		{dir, "key file " + dir + ": not a regular file"},
		{fifo, "key file " + fifo + ": not a regular file"},
	} {
		t.Setenv(EnvKeyFile, c.path)
		if _, _, err := UserKey(); err == nil || err.Error() != c.want {
			t.Errorf("UserKey of %s: %v, want %s", c.path, err, c.want)
		}
	}
}
