//go:build unix

package llvm

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockTimeout bounds how long a build waits for another process's build
// of the same key; past it, it builds on its own (a hung clang elsewhere
// must not stop this run). A dead holder's lock is released by the kernel,
// so waiting ends as soon as a killed builder is gone.
var lockTimeout = 5 * time.Minute

// lockPoll is how often a waiting build retries the lock.
const lockPoll = 20 * time.Millisecond

// lockFile takes an exclusive flock on path, creating it (a regular file,
// never through a link) if needed, waiting at most timeout. It returns
// the release, or nil when the lock could not be had: the caller then
// goes on without it, which costs a duplicate build, never a wrong one.
func lockFile(path string, timeout time.Duration) func() {
	return flockFile(path, syscall.LOCK_EX, timeout)
}

// shareFile is lockFile's shared form: any number of holders, none while
// someone holds it exclusively.
func shareFile(path string, timeout time.Duration) func() {
	return flockFile(path, syscall.LOCK_SH, timeout)
}

func flockFile(path string, how int, timeout time.Duration) func() {
	f, err := openLock(path)
	if err != nil {
		return nil
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() } // closing the only descriptor releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil
		}
		time.Sleep(lockPoll)
	}
}

// tryLock reports whether path's flock is free (nobody holds it): it takes
// it and returns the release. A missing or odd file is not free.
func tryLock(path string) func() {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil
	}
	return func() { f.Close() }
}

// openLock opens (creating) a lock file that must be a regular file:
// something else planted at its name is removed once and the open retried.
func openLock(path string) (*os.File, error) {
	for try := 0; ; try++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
		if err == nil {
			fi, serr := f.Stat()
			if serr == nil && fi.Mode().IsRegular() {
				return f, nil
			}
			f.Close()
			err = fmt.Errorf("%s is not a regular file", path)
		}
		if try > 0 {
			return nil, err
		}
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			os.RemoveAll(path)
		}
	}
}
