package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the package's tests one LLVM object cache (a private
// temporary directory) that survives the tests' own XDG_CACHE_HOME: they
// isolate the runtime's persistent cache per test, but compiling the same
// tiny model with clang in every test would cost seconds each.
func TestMain(m *testing.M) {
	if os.Getenv("TPUCC_LLVM_CACHE") != "" { // the caller's, kept
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "tpucc-llvm-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TPUCC_LLVM_CACHE", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
