package compile_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/tpucc/tpucc/tensor"
)

// TestMain pins eager ops to the reference executor: these tests hold
// compiled functions (the default backend) to eager results as the oracle,
// the reference executor's numbers.
func TestMain(m *testing.M) {
	if err := tensor.SetEagerBackend("reference"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
