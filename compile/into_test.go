package compile_test

import (
	"testing"
	"unsafe"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// chain is a streaming elementwise chain: x*sigmoid(x) + b + res.
func chain(x, b, res *tensor.Tensor) *tensor.Tensor {
	return x.Mul(x.Sigmoid()).Add(b).Add(res)
}

// TestCallInto: on the cpu device (the llvm backend) the result is
// computed in the tensor given, which the call returns, with Call's values
// bit for bit, call after call.
func TestCallInto(t *testing.T) {
	c, err := compile.New(chain, compile.Device("cpu"), compile.Name("chain"), compile.CacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	out := tensor.Full(0, ir.F32, 4, 8)
	storage := unsafe.SliceData(out.Buffer().Bytes())
	for seed := range int64(3) {
		x, b, res := tensor.Random(seed, ir.F32, 4, 8), tensor.Random(seed+10, ir.F32, 8), tensor.Random(seed+20, ir.F32, 4, 8)
		want, err := c.Call(x, b, res)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.CallInto([]*tensor.Tensor{out}, x, b, res)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != out || unsafe.SliceData(out.Buffer().Bytes()) != storage {
			t.Fatalf("seed %d: the result is not the tensor given", seed)
		}
		if d := near(out, want[0], 0); d != "" {
			t.Fatalf("seed %d: %s", seed, d)
		}
	}
}

// TestCallIntoErrors: a tensor of the wrong shape, or an argument that is
// not donated, is refused naming the result.
func TestCallIntoErrors(t *testing.T) {
	c, err := compile.New(chain, compile.Device("cpu"), compile.Name("chain"), compile.CacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	x, b, res := tensor.Random(1, ir.F32, 4, 8), tensor.Random(2, ir.F32, 8), tensor.Random(3, ir.F32, 4, 8)
	for _, tc := range []struct {
		into *tensor.Tensor
		want string
	}{
		{tensor.Full(0, ir.F32, 4, 7), "result 0 of @chain: the storage given is f32[4,7], want f32[4,8]"},
		{tensor.Full(0, ir.BF16, 4, 8), "result 0 of @chain: the storage given is bf16[4,8], want f32[4,8]"},
		{res, "result 0 of @chain: the storage given is argument 2's, which the call does not donate"},
	} {
		if _, err := c.CallInto([]*tensor.Tensor{tc.into}, x, b, res); err == nil || err.Error() != tc.want {
			t.Errorf("got error %v, want %q", err, tc.want)
		}
	}
}

// TestCallIntoDonatedCache: a decode step's cache, donated and given back
// as its result's storage, is updated where it lies and stays the same
// usable tensor from step to step.
func TestCallIntoDonatedCache(t *testing.T) {
	c, err := compile.New(writeRow, compile.Device("cpu"), compile.Donate(0), compile.Name("step"), compile.CacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	cache := tensor.Random(1, ir.F32, 2, 6, 4)
	want := tensor.FromSlice(cache.Float32s(), 2, 6, 4)
	for step := range 3 {
		u := tensor.Random(int64(10+step), ir.F32, 2, 1, 4)
		pos := tensor.Scalar(float64(step), ir.I32)
		out, err := c.CallInto([]*tensor.Tensor{cache}, cache, u, pos)
		if err != nil {
			t.Fatal(err)
		}
		want = writeRow(want, u, pos)
		if out[0] != cache {
			t.Fatalf("step %d: the result is not the cache given", step)
		}
		if d := near(cache, want, 0); d != "" {
			t.Fatalf("step %d: %s", step, d)
		}
	}
}
