package llvm

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// plantings put something hostile at a cached object's names (so is
// KEY.so, sum KEY.sha256): each must be taken for a miss and rebuilt,
// without hanging (a FIFO), reading without bound (/dev/zero, a huge
// sparse file) or failing the install (a directory).
var plantings = []struct {
	name  string
	plant func(t *testing.T, so, sum string)
}{
	{"fifo record", func(t *testing.T, so, sum string) { replace(t, sum); mkfifo(t, sum) }},
	{"record links to /dev/zero", func(t *testing.T, so, sum string) { replace(t, sum); symlink(t, "/dev/zero", sum) }},
	{"object links to /dev/zero", func(t *testing.T, so, sum string) { replace(t, so); symlink(t, "/dev/zero", so) }},
	{"directory at object", func(t *testing.T, so, sum string) { replace(t, so); mkdirWithFile(t, so) }},
	{"directory at record", func(t *testing.T, so, sum string) { replace(t, sum); mkdirWithFile(t, sum) }},
	{"fifo lock", func(t *testing.T, so, sum string) {
		replace(t, so) // a miss, so that the lock is taken
		lock := strings.TrimSuffix(so, ".so") + ".lock"
		replace(t, lock)
		mkfifo(t, lock)
	}},
	{"oversized record", func(t *testing.T, so, sum string) { sparse(t, sum, 64<<20) }},
	{"oversized object", func(t *testing.T, so, sum string) { sparse(t, so, maxObject+1) }},
}

// TestHostileCacheFilesRebuilt: each planting costs one clang run and
// leaves a verified object and record, and the program computes right.
func TestHostileCacheFilesRebuilt(t *testing.T) {
	for _, p := range plantings {
		t.Run(p.name, func(t *testing.T) {
			b := testBackend(t)
			exe := compileText(t, "f.tir", []byte(cacheProgram))
			if _, err := b.compile(exe.Module, exe.Entry, nil); err != nil {
				t.Fatal(err)
			}
			objs := kernelObjects(b)
			if len(objs) != 1 {
				t.Fatalf("%d objects in the cache, want 1", len(objs))
			}
			so, sum := objs[0], strings.TrimSuffix(objs[0], ".so")+".sha256"
			p.plant(t, so, sum)
			before := ClangRuns()
			x := differential(t, b, exe.Module, exe.Entry, 3)
			if x.Times.Cached || ClangRuns()-before != 1 {
				t.Fatalf("cached %v, %d clang runs; want one rebuild", x.Times.Cached, ClangRuns()-before)
			}
			if _, err := verifyObject(so, sum); err != nil {
				t.Fatalf("rebuilt object does not verify: %v", err)
			}
			if x = differential(t, b, exe.Module, exe.Entry, 3); !x.Times.Cached {
				t.Fatal("the rebuilt object is not found by the next compile")
			}
		})
	}
}

// TestRecordReadIsBounded: a record file far larger than any record is
// refused without being read (it was read whole: /dev/zero took
// gigabytes).
func TestRecordReadIsBounded(t *testing.T) {
	dir := t.TempDir()
	so, sum := filepath.Join(dir, "k.so"), filepath.Join(dir, "k.sha256")
	if err := os.WriteFile(so, []byte("object"), 0o600); err != nil {
		t.Fatal(err)
	}
	sparse(t, sum, 64<<20)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, err := verifyObject(so, sum)
	runtime.ReadMemStats(&m1)
	want := "llvm: " + sum + " is not a regular file of at most 128 bytes"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 1<<20 {
		t.Fatalf("verifying allocated %d bytes for a 64 MiB record; want it refused unread", got)
	}
}

func replace(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func mkdirWithFile(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(path, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
}

// sparse makes path a file of size bytes that takes no disk.
func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		err = f.Truncate(size)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}
