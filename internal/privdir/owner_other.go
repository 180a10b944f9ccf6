//go:build !unix

package privdir

import "io/fs"

// checkOwner accepts the directory: where files have no uid and mode bits
// do not describe access (Windows ACLs), only the symbolic-link and
// directory rules apply.
func checkOwner(string, fs.FileInfo) error { return nil }

// checkOwnerOnly accepts the directory: mode bits do not describe access
// here.
func checkOwnerOnly(string, fs.FileInfo) error { return nil }
