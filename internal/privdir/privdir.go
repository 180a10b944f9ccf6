// Package privdir guards directories whose contents a process will load and
// trust: the persistent compilation cache today, compiled objects and
// plugins later. Such a directory must belong to the user running the
// process and be writable by no one else, or anyone who can write to it can
// choose what the process runs.
package privdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Ensure creates dir (and its missing parents) with mode 0700 if it does
// not exist, then checks that it is safe to load from: a real directory,
// not a symbolic link; owned by the current user (where the system has
// owners); and not writable by its group or by others. The error says
// which rule dir breaks; the caller is expected to refuse the directory.
//
// Only dir itself is checked, not its parents: a user's cache under a
// shared parent (/tmp with its sticky bit) is as safe as the parent's rules
// make it, and checking parents would refuse ordinary home directories on
// systems that make them group-writable.
func Ensure(dir string) error {
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		info, err = os.Lstat(dir)
	}
	if err != nil {
		return err
	}
	return Check(dir, info)
}

// Check applies Ensure's rules to info, which os.Lstat returned for dir.
func Check(dir string, info fs.FileInfo) error {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link", dir)
	case !info.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return checkOwner(dir, info)
}

// EnsureOwnerOnly is Ensure, and also refuses a directory its group or
// others can read or search (any of the mode bits 0077): the runtime's
// persistent cache holds compiled programs with their constants (a
// model's weights among them), which are the user's alone to read.
func EnsureOwnerOnly(dir string) error {
	if err := Ensure(dir); err != nil {
		return err
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	return checkOwnerOnly(dir, info)
}
