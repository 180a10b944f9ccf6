package llvm

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSweepGate: a young .build-* directory or load-*.so copy is a dead
// process's only when nobody is inside the cache's gate. With the gate
// held (by another process, here a descriptor of its own), a sweep leaves
// the young ones alone and collects only those older than staleAge; with
// the gate free, it collects every one. A GEMM record's temporary goes by
// age.
func TestSweepGate(t *testing.T) {
	dir := t.TempDir()
	long := time.Now().Add(-2 * staleAge)
	plant := func() map[string]bool {
		t.Helper()
		want := map[string]bool{}
		for _, e := range []struct {
			name string
			dir  bool
			old  bool
		}{{".build-young", true, false}, {"load-young.so", false, false}, {".build-old", true, true}, {"load-old.so", false, true}} {
			path := filepath.Join(dir, e.name)
			var err error
			if e.dir {
				err = os.MkdirAll(path, 0o700) // the young ones may still be there
			} else {
				err = os.WriteFile(path, []byte("partial"), 0o600)
			}
			if err == nil && e.old {
				err = os.Chtimes(path, long, long)
			}
			if err != nil {
				t.Fatal(err)
			}
			want[e.name] = e.old
		}
		return want
	}
	left := func() map[string]bool {
		got := map[string]bool{}
		for _, n := range []string{".build-young", "load-young.so", ".build-old", "load-old.so"} {
			_, err := os.Lstat(filepath.Join(dir, n))
			got[n] = err != nil // removed
		}
		return got
	}

	want := plant()
	inside := shareFile(filepath.Join(dir, gateFile), 0)
	if inside == nil {
		t.Fatal("could not hold the gate")
	}
	swept.Delete(dir)
	sweep(dir)
	inside()
	if got := left(); !maps.Equal(got, want) {
		t.Errorf("gate held: removed %v, want %v", got, want)
	}

	// A GEMM record written aside by a process killed before its rename
	// goes by age alone (the gate does not cover it).
	for _, name := range []string{gemmRecordName + ".123", gemmRecordName + ".456"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(filepath.Join(dir, gemmRecordName+".123"), long, long); err != nil {
		t.Fatal(err)
	}
	plant()
	swept.Delete(dir)
	sweep(dir)
	if _, err := os.Lstat(filepath.Join(dir, gemmRecordName+".123")); err == nil {
		t.Errorf("an old record written aside was not removed")
	}
	if _, err := os.Lstat(filepath.Join(dir, gemmRecordName+".456")); err != nil {
		t.Errorf("a young record written aside was removed: %v", err)
	}
	all := map[string]bool{".build-young": true, "load-young.so": true, ".build-old": true, "load-old.so": true}
	if got := left(); !maps.Equal(got, all) {
		t.Errorf("gate free: removed %v, want %v", got, all)
	}
}
