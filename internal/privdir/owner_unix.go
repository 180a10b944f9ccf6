//go:build unix

package privdir

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkOwner refuses a directory that its group or others can write, or
// that another user owns.
func checkOwner(dir string, info fs.FileInfo) error {
	if perm := info.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s is writable by others (mode %04o)", dir, perm)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is owned by uid %d, not by this user (uid %d)", dir, st.Uid, os.Getuid())
	}
	return nil
}

// checkOwnerOnly refuses a directory with any permission for its group or
// others.
func checkOwnerOnly(dir string, info fs.FileInfo) error {
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s is open to others (mode %04o, want 0700: chmod 700 it)", dir, perm)
	}
	return nil
}
