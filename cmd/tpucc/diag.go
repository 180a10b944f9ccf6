package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
)

// usageError is a mistake in the command line itself (exit status 2): an unknown command
// or flag, a missing file argument, a flag value that names nothing in the program.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// fileError is a failure that belongs to a file but to no position in it: a missing or
// unreadable file, a bad .npy input, a program with no function. It prints as
// FILE: error: MSG, the same shape as a positioned diagnostic without the position.
type fileError struct {
	file string
	msg  string
}

func (e *fileError) Error() string { return e.file + ": error: " + e.msg }

func fileErrorf(file, format string, args ...any) error {
	return &fileError{file: file, msg: fmt.Sprintf(format, args...)}
}

// osError turns an error from the os package into a fileError for file, keeping only the
// reason ("no such file or directory", "permission denied"): the path is already in front.
func osError(file string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	if errors.Is(err, syscall.EISDIR) {
		return fileErrorf(file, "is a directory")
	}
	return fileErrorf(file, "%v", err)
}

// internalError is a broken invariant inside tpucc (a recovered panic), not a problem of
// the user's program; it prints as tpucc: internal error: MSG, without a stack trace.
type internalError struct{ msg string }

func (e *internalError) Error() string { return "tpucc: " + e.msg }

// diag makes every error of the program's own stages (parse, passes, lowering, execution)
// print as a diagnostic about file: positioned errors keep their position and gain the file
// name if they lack one; anything else is prefixed with FILE: error:.
func diag(file string, err error) error {
	if err == nil {
		return nil
	}
	switch e := err.(type) {
	case *ir.Error:
		return withFile(file, e)
	case *ir.ErrorList:
		l := &ir.ErrorList{Errs: make([]*ir.Error, len(e.Errs))}
		for i, x := range e.Errs {
			l.Errs[i] = withFile(file, x)
		}
		return l
	case *fileError, *usageError, *internalError:
		return err
	}
	var pe *passes.PanicError
	if errors.As(err, &pe) {
		return &internalError{msg: pe.Error()}
	}
	if msg := err.Error(); strings.HasPrefix(msg, "internal error") {
		// A panic recovered below (cpu.Run does this) that is not a *passes.PanicError.
		return &internalError{msg: msg}
	}
	return fileErrorf(file, "%v", err)
}

func withFile(file string, e *ir.Error) *ir.Error {
	if e.Pos.File != "" {
		return e
	}
	c := *e
	c.Pos.File = file
	return &c
}
