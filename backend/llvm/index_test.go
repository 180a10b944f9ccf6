package llvm

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// takeCase is one take of x (random values of dtype dt) at idx along axis.
type takeCase struct {
	dt   ir.DType
	dims []int64
	axis int64
	it   ir.DType
	idx  []int64 // shaped [len] or, with idx2, [2, len/2]
	idx2 bool
}

var takeCases = []takeCase{
	// an embedding lookup: rows of a [vocab, d] table, indices out of range on both sides (clamped)
	{ir.F32, []int64{11, 24}, 0, ir.I32, []int64{3, 0, 10, -1, 11, 1 << 30, 5}, false},
	// bf16 table, i64 indices shaped [2,3]
	{ir.BF16, []int64{6, 5}, 0, ir.I64, []int64{5, 4, -9, 0, 6, 2}, true},
	// a middle axis (outer and inner rows), i8 data
	{ir.I8, []int64{3, 4, 5}, 1, ir.I32, []int64{3, 3, 0, 7}, false},
	// the last axis (inner 1), i64 data, u32 indices above the i32 range
	{ir.I64, []int64{2, 7}, 1, ir.U32, []int64{6, 1, 4294967295, 0}, false},
	// bool data, i16 indices
	{ir.I1, []int64{4, 3}, 0, ir.I16, []int64{-2, 3, 1}, false},
	// u8 indices, f16 data, an axis of one
	{ir.F16, []int64{1, 9}, 0, ir.U8, []int64{255, 0}, false},
}

// TestTake compiles every take case into one function and compares the
// results with the reference executor's bit for bit (take moves elements
// and never computes).
func TestTake(t *testing.T) {
	b := testBackend(t)
	var params, body, rets, types []string
	for i, c := range takeCases {
		idxDims := []int64{int64(len(c.idx))}
		if c.idx2 {
			idxDims = []int64{2, int64(len(c.idx) / 2)}
		}
		resDims := append(append(append([]int64{}, c.dims[:c.axis]...), idxDims...), c.dims[c.axis+1:]...)
		params = append(params, fmt.Sprintf("%%x%d: %s, %%i%d: %s", i, ir.Tensor(c.dt, c.dims...), i, ir.Tensor(c.it, idxDims...)))
		types = append(types, ir.Tensor(c.dt, resDims...).String())
		body = append(body, fmt.Sprintf("  %%y%d = take %%x%d, %%i%d {axis=%d}\n", i, i, i, c.axis))
		rets = append(rets, fmt.Sprintf("%%y%d", i))
	}
	src := fmt.Sprintf("func @f(%s) -> (%s) {\n%s  return %s\n}\n", strings.Join(params, ", "),
		strings.Join(types, ", "), strings.Join(body, ""), strings.Join(rets, ", "))
	m, f, x := compileSrc(t, b, src)
	if g, fb := x.Coverage(); !strings.Contains(g, "take") || strings.Contains(fb, "take") {
		t.Fatalf("take not generated: generated %s; reference %s", g, fb)
	}
	in := cpu.RandomInputs(f, 7)
	for i, c := range takeCases {
		in[2*i+1] = backend.FromInts(f.Params[2*i+1].Type, c.idx...)
	}
	want, err := cpu.Run(m, f, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !bytes.Equal(want[i].Bytes(), got[i].Bytes()) {
			t.Errorf("case %d %+v: got %v, want %v", i, takeCases[i], got[i], want[i])
		}
	}
}
