// Command tpucc compiles .tir tensor programs to StableHLO text, runs them (as native
// code for this CPU by default, on a device through PJRT, or on the reference
// executor), checks and formats them. `tpucc help` lists the commands.
//
// Exit status: 0 on success, 1 for an error in the program or its inputs (diagnostics on
// standard error as FILE:LINE:COL: error: MSG, and no output file written), 2 for a usage
// error. No input makes it panic; an internal failure prints `tpucc: internal error: ...`.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
