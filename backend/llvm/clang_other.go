//go:build unix && !linux

package llvm

import "syscall"

// childAttr puts a build tool in its own process group. These systems have
// no parent-death signal: a clang started by a run that is killed finishes
// its build on its own, and its directory is collected by the next run.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
