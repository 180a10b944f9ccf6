package faults

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// planting puts one hostile thing at path.
type planting struct {
	name  string
	plant func(path string) error
}

// plantings are the corpus files of testdata/hostile/kind, then what git
// cannot hold, made here: a FIFO, a link to /dev/zero, a directory and a
// sparse file of huge bytes (past every reader's cap).
func plantings(t *testing.T, kind string, huge int64) []planting {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "hostile", kind, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus for %s: %v", kind, err)
	}
	var ps []planting
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, planting{filepath.Base(f), func(p string) error { return os.WriteFile(p, data, 0o600) }})
	}
	return append(ps,
		planting{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		planting{"link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
		planting{"directory", func(p string) error { return os.MkdirAll(filepath.Join(p, "sub"), 0o700) }},
		planting{"sparse huge file", func(p string) error {
			f, err := os.Create(p)
			if err == nil {
				err = f.Truncate(huge)
				f.Close()
			}
			return err
		}},
	)
}

// plantAll replaces every file of dir matching pattern with p.
func plantAll(t *testing.T, dir, pattern string, p planting) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(paths) == 0 {
		t.Fatalf("nothing in %s matches %s", dir, pattern)
	}
	for _, path := range paths {
		if err := os.RemoveAll(path); err != nil {
			t.Fatal(err)
		}
		if err := p.plant(path); err != nil {
			t.Fatal(err)
		}
	}
}

// wantRegular fails unless every name of dir matching pattern is a
// regular file again.
func wantRegular(t *testing.T, dir, pattern string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, pattern))
	for _, path := range paths {
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s is not a regular file after the run (%v)", path, err)
		}
	}
}

// TestHostileObjectCache: each hostile file planted at every object's
// record (KEY.sha256) or object (KEY.so) of a filled llvm cache is a miss
// that is rebuilt without a word: no hang, no unbounded read, a right
// result, and nothing left behind. The program cache is off, so that
// every run goes to the object cache.
func TestHostileObjectCache(t *testing.T) {
	golden := newDirs(t, false)
	golden.run(t, 0).wantOK(t)
	for _, target := range []struct{ kind, pattern string }{{"llvm", "*.sha256"}, {"llvm", "*.so"}} {
		for _, p := range plantings(t, target.kind, 300<<20) {
			if !strings.HasSuffix(p.name, filepath.Ext(target.pattern)) && strings.Contains(p.name, ".") {
				continue // a record's corpus goes at records, an object's at objects
			}
			t.Run(target.pattern+"/"+p.name, func(t *testing.T) {
				d := newDirs(t, false)
				d.copyFrom(t, golden)
				plantAll(t, d.llvm, target.pattern, p)
				d.run(t, 0).wantOK(t)
				d.wantClean(t)
				wantRegular(t, d.llvm, "*.so")
				wantRegular(t, d.llvm, "*.sha256")
			})
		}
	}
}

// TestHostileProgramCache: each hostile file planted at the program
// cache's entry is dropped with a warning that names it, the program is
// compiled (from the object cache) and the entry rewritten, which the
// next run loads without a word.
func TestHostileProgramCache(t *testing.T) {
	golden := newDirs(t, true)
	golden.run(t, 0).wantOK(t)
	for _, p := range plantings(t, "runtime", 2<<30) {
		t.Run(p.name, func(t *testing.T) {
			d := newDirs(t, true)
			d.copyFrom(t, golden)
			plantAll(t, d.cache, "*.tpucc", p)
			r := d.run(t, 0)
			r.wantOK(t, "tpucc: warning: dropped corrupt cache entry "+d.cache+"/")
			if !strings.Contains(r.stderr, "dropped corrupt cache entry") {
				t.Errorf("nothing said about the entry:\n%s", r.stderr)
			}
			d.wantClean(t)
			wantRegular(t, d.cache, "*.tpucc")
			d.run(t, 0).wantOK(t)
		})
	}
}
