package backend

import (
	"bytes"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// rowsOf returns n f32 rows of dims, element j of row i being 100·i + j.
func rowsOf(n int, dims ...int64) []*Buffer {
	var out []*Buffer
	for i := range n {
		b := New(ir.Tensor(ir.F32, dims...))
		for j := range b.Len() {
			b.SetFloat64(j, float64(100*i+j))
		}
		out = append(out, b)
	}
	return out
}

// TestStack: a stack of stacks [2, 3, 2, 2] reads every box from its rows
// (no stack made: made is not called) as the made array's box reads, and
// reading it on the host makes the array once, with made given views of
// its rows.
func TestStack(t *testing.T) {
	inner := []*Buffer{Stack(rowsOf(3, 2, 2), nil), Stack(rowsOf(3, 2, 2), nil)}
	calls := 0
	var views []*Buffer
	s := Stack(inner, func(v []*Buffer) { calls, views = calls+1, v })
	if got := s.Type().String(); got != "f32[2,3,2,2]" {
		t.Fatalf("stack type %s", got)
	}
	dims := []int64{2, 3, 2, 2}
	src := s.Device().(BoxReader)
	var boxes [][]byte
	starts := [][]int64{{0, 0, 0, 0}, {1, 2, 1, 0}, {0, 1, 0, 1}, {1, 0, 1, 1}}
	for _, start := range starts {
		piece := make([]byte, 2*2*2*2*4)
		src.ReadBox(dims, piece, []int64{2, 2, 2, 2}, start, 4)
		boxes = append(boxes, piece)
	}
	if calls != 0 {
		t.Fatalf("reading boxes made the stack (%d calls)", calls)
	}
	whole := s.Bytes()
	if calls != 1 || len(views) != 2 || &views[1].Bytes()[0] != &whole[len(whole)/2] {
		t.Fatalf("made called %d times with %d views", calls, len(views))
	}
	if got := s.Float32s(); got[0] != 0 || got[3] != 3 || got[4] != 100 || got[12] != 0 || got[16] != 100 || got[23] != 203 {
		t.Errorf("stacked values %v", got)
	}
	for k, start := range starts {
		want := make([]byte, len(boxes[k]))
		CopyBox(whole, dims, want, []int64{2, 2, 2, 2}, start, 4, true)
		if !bytes.Equal(boxes[k], want) {
			t.Errorf("box at %v read from the rows differs from the made stack's", start)
		}
	}
	s.Bytes()
	if calls != 1 {
		t.Errorf("the stack was made %d times", calls)
	}
}

// TestStackRowsDiffer: rows of different types are a programming error.
func TestStackRowsDiffer(t *testing.T) {
	defer func() {
		if r := recover(); r != "backend: row 1 of a stack is f32[3], row 0 is f32[2]" {
			t.Errorf("panic %v", r)
		}
	}()
	Stack([]*Buffer{New(ir.Tensor(ir.F32, 2)), New(ir.Tensor(ir.F32, 3))}, nil)
}
