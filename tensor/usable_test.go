package tensor_test

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// TestUsable: nil and the zero Tensor are refused with the caller's line, the op and
// what the tensor is to it; a concrete tensor is accepted.
func TestUsable(t *testing.T) {
	panicWith := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	wantErr(t, "usable_test.go", func(l *int) { at(l); panicWith(tensor.Usable("block", "argument 0", nil)) },
		"block: argument 0 is a nil *tensor.Tensor")
	wantErr(t, "usable_test.go", func(l *int) { at(l); panicWith(tensor.Usable("block", "result 2", &tensor.Tensor{})) },
		"block: result 2 is the zero Tensor, which holds no value")
	if err := tensor.Usable("block", "argument 0", tensor.Zeros(ir.F32, 2)); err != nil {
		t.Errorf("a concrete tensor: %v", err)
	}
}
