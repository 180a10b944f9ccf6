package tensor_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

func TestFromSlice(t *testing.T) {
	data := []float32{1, 2, 3, 4, 5, 6}
	x := tensor.FromSlice(data, 2, 3)
	expect(t, x, "f32[2,3]", 1, 2, 3, 4, 5, 6)
	if unsafe.SliceData(x.Buffer().Bytes()) != (*byte)(unsafe.Pointer(&data[0])) {
		t.Error("FromSlice copied its data")
	}
	got := x.Float32s()
	got[0] = 9
	if data[0] != 1 {
		t.Error("Float32s shares the tensor's storage")
	}
	expect(t, tensor.FromSlice([]bool{true, false}, 2), "i1[2]", 1, 0)
	expect(t, tensor.FromSlice([]uint8{255, 0}, 2), "u8[2]", 255, 0)
	expect(t, tensor.FromSlice([]int16{-3}), "i16[]", -3)
	wantErr(t, "data_test.go", func(line *int) { at(line); tensor.FromSlice([]float64{1, 2, 3}, 2, 2) },
		"from_slice: 3 values for shape [2,2], which holds 4")
	wantErr(t, "data_test.go", func(line *int) { at(line); tensor.FromSlice([]int32{}, -1) },
		"from_slice: shape [-1] has a negative dimension")
}

func TestInt32s(t *testing.T) {
	for _, c := range []struct {
		x    *tensor.Tensor
		want []int32
	}{
		{i32(sh(3), -7, 0, 1<<30), []int32{-7, 0, 1 << 30}},
		{tensor.FromSlice([]int8{-128, 127}, 2), []int32{-128, 127}},
		{tensor.FromSlice([]uint8{255}, 1), []int32{255}},
		{tensor.FromSlice([]bool{true, false}, 2), []int32{1, 0}},
	} {
		if got := c.x.Int32s(); !slices.Equal(got, c.want) {
			t.Errorf("%s: Int32s %v, want %v", c.x.Type(), got, c.want)
		}
	}
	wantErr(t, "data_test.go", func(line *int) { x := tensor.FromSlice([]uint32{1}, 1); at(line); x.Int32s() },
		"int32s: the tensor is u32[1], whose values do not all fit in int32: use Int64s, or convert it first")
	wantErr(t, "data_test.go", func(line *int) { x := f32(sh(1), 1); at(line); x.Int32s() },
		"int32s: the tensor is f32[1], whose values do not all fit in int32: use Int64s, or convert it first")
}

func TestNPYFiles(t *testing.T) {
	dir := t.TempDir()
	x := f32(sh(2, 2), 1, -2, 0.5, 3).Convert(ir.BF16)
	path := filepath.Join(dir, "x.npy")
	if err := tensor.WriteNPY(path, x); err != nil {
		t.Fatal(err)
	}
	y, err := tensor.ReadNPY(path)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, y, "bf16[2,2]", 1, -2, 0.5, 3)
	if !y.Buffer().Equal(x.Buffer()) {
		t.Errorf("read back %s, wrote %s", y, x)
	}
	if err := os.WriteFile(path, []byte("\x93NUMPY\x01\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tensor.ReadNPY(path); err == nil || err.Error() != path+": truncated: file ends inside the header length" {
		t.Errorf("truncated file: %v", err)
	}
}
