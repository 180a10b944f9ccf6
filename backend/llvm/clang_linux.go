package llvm

import "syscall"

// childAttr puts a build tool in its own process group and has the kernel
// SIGKILL it when the thread that started it dies, so that a killed run
// leaves no clang behind. (runTool keeps that thread alive for the
// child's whole life.)
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
