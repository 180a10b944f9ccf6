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

// staleAge is how old a leftover without an owner lock must be before it
// is collected: a .build-* directory a build was killed in before it took
// its lock, a build-* directory from a tpucc without owner locks, or a
// load-*.so copy whose loader died before removing it. Living ones last
// milliseconds; the margin leaves an older tpucc's builds alone.
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
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch name := e.Name(); {
		case strings.HasPrefix(name, "build-") && e.IsDir():
			if abandoned(path) {
				os.RemoveAll(path)
			}
		case strings.HasPrefix(name, ".build-") && e.IsDir(),
			strings.HasPrefix(name, "load-") && strings.HasSuffix(name, ".so"):
			if old(path) {
				os.RemoveAll(path)
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
