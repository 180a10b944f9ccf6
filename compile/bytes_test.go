package compile_test

import (
	"testing"
	"unsafe"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/tensor"
)

// TestF32TakesFourBytes: a 1024x1024 f32 tensor is 4 MiB from the user's
// slice, through the eager executor and through a compiled call, to the
// result: no float64 copy anywhere on the way.
func TestF32TakesFourBytes(t *testing.T) {
	const n, mib4 = 1024, 4 << 20
	data := make([]float32, n*n)
	for i := range data {
		data[i] = float32(i%7) - 3
	}
	x := tensor.FromSlice(data, n, n)
	held := func(what string, y *tensor.Tensor) {
		t.Helper()
		b := y.Buffer().Bytes()
		if len(b) != mib4 || cap(b) != mib4 || y.Buffer().Len() != n*n {
			t.Errorf("%s %s holds %d bytes (capacity %d), want %d", what, y.Type(), len(b), cap(b), mib4)
		}
	}
	held("the argument", x)
	if unsafe.SliceData(x.Buffer().Bytes()) != (*byte)(unsafe.Pointer(&data[0])) {
		t.Error("FromSlice copied the argument")
	}
	double := func(x *tensor.Tensor) *tensor.Tensor { return x.Add(x).Relu() }
	eager := double(x)
	held("the eager result", eager)
	compiled := compile.Func(double)(x)
	held("the compiled result", compiled)
	if got := compiled.Float32s(); got[0] != 0 || got[6] != 6 || got[n*n-1] != eager.Float32s()[n*n-1] {
		t.Errorf("compiled result %v ... %v", got[:7], got[n*n-1])
	}
}
