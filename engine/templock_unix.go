//go:build unix

package engine

import (
	"os"
	"syscall"
	"time"
)

// A writer holds an exclusive flock on its temporary file from just after
// creating it until it has renamed it into place (or removed it), and the
// kernel drops the lock when the writer dies. So a temporary that nobody
// holds is a killed writer's whatever its age, and the next Cache to open
// the directory removes it at once: a process killed while it wrote an
// entry leaves nothing behind once another has run (internal/faults'
// TestKillAtAnyTime), where an age rule kept such files for a minute.

// lockTemp takes the writer's lock on its temporary file, waiting while a
// sweeper holds it (that sweeper then removed the file: writeAtomic checks).
func lockTemp(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

// sweepAbandoned removes the temporary file path if no writer holds its
// lock, reporting whether it did. The lock is held while it removes, so a
// writer that had created the file but not yet locked it waits, then finds
// its name gone and starts again.
func sweepAbandoned(path string, _ time.Time) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	return os.Remove(path) == nil
}
