package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the package's tests one LLVM object cache and one
// persistent compile cache, private temporary directories removed at the
// end. The runtime's default cache is the process's (DefaultCache resolves
// its directory once), so a test cannot isolate it by setting
// XDG_CACHE_HOME: that only left the first test's directory behind, filled
// by the later tests. Compiling the same tiny model with clang in every
// test would cost seconds each.
func TestMain(m *testing.M) {
	var dirs []string
	for _, env := range []string{"TPUCC_LLVM_CACHE", "TPUCC_CACHE_DIR"} {
		if os.Getenv(env) != "" { // the caller's, kept
			continue
		}
		dir, err := os.MkdirTemp("", "tpucc-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Setenv(env, dir)
		dirs = append(dirs, dir)
	}
	code := m.Run()
	for _, d := range dirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}
