package compile_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/tpucc/tpucc/tensor"
)

// TestMain pins eager ops to the reference executor: these tests compare
// eager results with programs run by the reference executor more tightly
// than the llvm kernels' tolerance (bit for bit, or 1e-4 relative).
func TestMain(m *testing.M) {
	if err := tensor.SetEagerBackend("reference"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
