package llvm

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// A build works in its own directory, build-*, holding an open flock on
// the file "owner" inside it for as long as it runs; the directory is made
// under another name (.build-*) and renamed to build-* only once the lock
// is held, so a build-* directory whose owner lock is free belongs to a
// process that died (the kernel drops a dead process's locks), whatever
// its age or pid namespace. Such directories are collected when a process
// first opens the cache.
const ownerFile = "owner"

// gateFile closes the windows in which an entry exists without a lock of
// its own: a process holds it shared from before it makes a .build-*
// directory until the directory is renamed under its owner lock, and
// from before it writes a load-*.so copy until the copy is removed. A
// sweeper that takes it exclusively therefore knows that every .build-*
// and load-*.so present belongs to a process that died, however young;
// when it cannot (someone is inside a window), it goes by age alone.
const gateFile = ".gate"

// gateWait bounds how long a process waits for a sweeper to finish with
// the gate (a sweep takes milliseconds); past it, it goes on without the
// gate, which a sweeper could only collide with if it held the gate that
// long.
const gateWait = 10 * time.Second

// enterGate holds dir's gate shared; the release is never nil.
func enterGate(dir string) func() {
	if release := shareFile(filepath.Join(dir, gateFile), gateWait); release != nil {
		return release
	}
	return func() {}
}

// staleAge is how old a leftover without an owner lock must be before it
// is collected: a .build-* directory a build was killed in before it took
// its lock, or a load-*.so copy whose loader died before removing it,
// while someone is inside the gate (gateFile); a build-* directory from a
// tpucc without owner locks. Living ones last milliseconds; the margin
// leaves an older tpucc's builds alone.
var staleAge = 10 * time.Minute

var swept sync.Map // cache directories this process has swept

// sweep removes what dead builds and loads left in dir, once per process.
func sweep(dir string) {
	if _, done := swept.LoadOrStore(dir, true); done {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	dead := old
	if release := lockFile(filepath.Join(dir, gateFile), 0); release != nil {
		defer release()
		dead = func(string) bool { return true }
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch name := e.Name(); {
		case strings.HasPrefix(name, "build-") && e.IsDir():
			if abandoned(path) {
				os.RemoveAll(path)
			}
		case strings.HasPrefix(name, ".build-") && e.IsDir(),
			strings.HasPrefix(name, "load-") && strings.HasSuffix(name, ".so"):
			if dead(path) {
				os.RemoveAll(path)
			}
		case strings.HasPrefix(name, gemmRecordName+".") && e.Type().IsRegular():
			if old(path) { // a GEMM record's writer killed before its rename
				os.Remove(path)
			}
		}
	}
}

// abandoned reports whether the build directory's owner is gone: its lock
// is free, or it has none and is older than staleAge.
func abandoned(dir string) bool {
	owner := filepath.Join(dir, ownerFile)
	if _, err := os.Lstat(owner); err != nil {
		return old(dir)
	}
	release := tryLock(owner)
	if release == nil {
		return false
	}
	release()
	return true
}

// old reports whether path was last modified more than staleAge ago.
func old(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && time.Since(fi.ModTime()) > staleAge
}

// buildDir makes this build's directory in dir and holds its owner lock
// until done is called, which removes the directory.
func buildDir(dir string) (path string, done func(), err error) {
	leave := enterGate(dir)
	defer leave()
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return "", nil, err
	}
	release := lockFile(filepath.Join(tmp, ownerFile), 0)
	if release == nil { // no flock here: the directory is then never collected as abandoned
		release = func() {}
	}
	path = filepath.Join(dir, strings.TrimPrefix(filepath.Base(tmp), "."))
	if err := os.Rename(tmp, path); err != nil {
		release()
		os.RemoveAll(tmp)
		return "", nil, err
	}
	return path, func() { os.RemoveAll(path); release() }, nil
}
