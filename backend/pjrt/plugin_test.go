package pjrt

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

// fakeAPI lays out a PJRT_Api header with n function slots in Go memory.
func fakeAPI(major, minor int32, n int) []uintptr {
	t := make([]uintptr, 5+n)
	t[0] = uintptr(apiHeaderSize + 8*n)
	ver := (*[2]int32)(unsafe.Pointer(&t[4]))
	ver[0], ver[1] = major, minor
	return t
}

func TestOtherMajorVersionRefused(t *testing.T) {
	api := fakeAPI(1, 0, 130)
	_, err := newPlugin("fake.so", uintptr(unsafe.Pointer(&api[0])))
	if err == nil || err.Error() != "PJRT API version 1.0, this client speaks 0.x" {
		t.Errorf("major 1: %v", err)
	}
}

func TestCallPastTableRefused(t *testing.T) {
	api := fakeAPI(0, 20, 3) // only the three error functions
	p, err := newPlugin("/x/old.so", uintptr(unsafe.Pointer(&api[0])))
	if err != nil {
		t.Fatal(err)
	}
	err = p.call(fnCompile, nil)
	want := "pjrt: PJRT_Compile: not provided by plugin old.so (API 0.20, 3 functions)"
	if err == nil || err.Error() != want {
		t.Errorf("call past the table: %v, want %s", err, want)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	notSO := filepath.Join(dir, "plugin.so")
	os.WriteFile(notSO, []byte("not an ELF file"), 0o600)
	for _, c := range []struct{ path, prefix string }{
		{filepath.Join(dir, "missing.so"), "pjrt: plugin " + filepath.Join(dir, "missing.so") + ": no such file or directory"},
		{dir, "pjrt: plugin " + dir + ": not a regular file"},
		{notSO, "pjrt: plugin " + notSO + ": "},
	} {
		_, err := Load(c.path)
		if err == nil || len(err.Error()) < len(c.prefix) || err.Error()[:len(c.prefix)] != c.prefix {
			t.Errorf("Load(%s) = %v, want %s...", c.path, err, c.prefix)
		}
	}
}
