package faults

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFullDisk: with every file the process (and clang, its child) writes
// capped at a few KiB, as on a full disk, a run fails with an error that
// says so or computes right (on the reference executor, with a warning),
// and leaves nothing behind; the next run, with room, computes right.
func TestFullDisk(t *testing.T) {
	for _, limit := range []int64{4 << 10, 10 << 10, 16 << 10, 64 << 10} {
		d := newDirs(t, true)
		r := d.run(t, limit)
		t.Logf("limit %d: status %d, stderr %q", limit, r.code, r.stderr)
		switch {
		case r.code == 0:
			r.wantOK(t, "tpucc: warning: programs run on the reference executor, not llvm: ")
		case r.code != 1 || !saysFull(r.stderr):
			t.Fatalf("limit %d: status %d, stderr:\n%s\nwant a result or an error saying a file is too large", limit, r.code, r.stderr)
		}
		d.wantClean(t)
		entries, _ := filepath.Glob(filepath.Join(d.cache, "*.tpucc"))
		d.run(t, 0).wantOK(t)
		d.wantClean(t)
		if len(entries) > 0 { // what the capped run wrote loads
			d.run(t, 0).wantOK(t)
		}
	}
}

// TestKilledWritersLeftovers: what processes killed while writing leave
// (a program cache's temporary entry, a build directory whose owner is
// gone, a half-made one, a copy made for loading) is removed by the next
// process, which computes right, however recently the writer died. A
// temporary file whose writer is alive (it holds the file's lock) is left
// alone, however old.
func TestKilledWritersLeftovers(t *testing.T) {
	d := newDirs(t, true)
	old := time.Now().Add(-time.Hour)
	plant := func(path string, dir bool) {
		t.Helper()
		var err error
		if dir {
			err = os.MkdirAll(path, 0o700)
			if err == nil {
				err = os.WriteFile(filepath.Join(path, "kernels.ll"), []byte("; partial"), 0o600)
			}
		} else {
			err = os.WriteFile(path, []byte("partial"), 0o600)
		}
		if err == nil {
			err = os.Chtimes(path, old, old)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	plant(filepath.Join(d.cache, ".tmp-123456"), false)
	plant(filepath.Join(d.llvm, "build-1"), true)
	if err := os.WriteFile(filepath.Join(d.llvm, "build-1", "owner"), nil, 0o600); err != nil { // its lock is free: the owner died
		t.Fatal(err)
	}
	plant(filepath.Join(d.llvm, ".build-2"), true)
	plant(filepath.Join(d.llvm, "load-3.so"), false)
	// Killed a moment ago: the temporary's lock is free too, and nobody is
	// inside the llvm cache's gate, so a half-made build directory and a
	// copy for loading are a dead process's however young.
	for _, young := range []struct {
		path string
		dir  bool
	}{{filepath.Join(d.cache, ".tmp-young"), false}, {filepath.Join(d.llvm, ".build-young"), true}, {filepath.Join(d.llvm, "load-young.so"), false}} {
		plant(young.path, young.dir)
		if err := os.Chtimes(young.path, time.Now(), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	live := filepath.Join(d.cache, ".tmp-live")
	plant(live, false)
	f, err := os.Open(live) // a live writer holds its temporary's lock
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	d.run(t, 0).wantOK(t)
	if err := os.Remove(live); err != nil {
		t.Fatalf("a live writer's temporary file was removed: %v", err)
	}
	d.wantClean(t)
}

// saysFull reports whether an error says that a file could not grow:
// EFBIG from Go's writes, or clang's report of its linker's SIGXFSZ.
func saysFull(stderr string) bool {
	return strings.Contains(stderr, "file too large") || strings.Contains(stderr, "File size limit exceeded")
}
