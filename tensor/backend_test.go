package tensor_test

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// TestSetEagerBackend: eager ops run on the reference executor by default;
// an unknown backend is refused and leaves the choice as it was.
func TestSetEagerBackend(t *testing.T) {
	if got := tensor.EagerBackend(); got != "reference" {
		t.Fatalf("default eager backend %q, want reference", got)
	}
	err := tensor.SetEagerBackend("nope")
	if want := `unknown backend "nope" (have reference)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if err := tensor.SetEagerBackend("reference"); err != nil {
		t.Fatal(err)
	}
	if got := tensor.Full(ir.F32, 2, 3).Add(tensor.Full(ir.F32, 1, 3)).Float64s(); got[0] != 3 || len(got) != 3 {
		t.Errorf("2+1 = %v", got)
	}
}
