package backend

import (
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestOverlap: buffers share storage when their byte ranges meet, not
// when they are neighbours; device, donated and empty buffers share none.
func TestOverlap(t *testing.T) {
	whole := New(ir.Tensor(ir.F32, 8))
	view := func(lo, hi int) *Buffer {
		b, err := View(ir.Tensor(ir.F32, int64(hi-lo)), whole.Bytes()[4*lo:4*hi])
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	gone := New(ir.Tensor(ir.F32, 8))
	if err := gone.Donate("was donated to a test"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		a, b *Buffer
		want bool
	}{
		{"itself", whole, whole, true},
		{"a part", whole, view(2, 5), true},
		{"parts that meet", view(0, 4), view(3, 8), true},
		{"neighbours", view(0, 4), view(4, 8), false},
		{"other storage", whole, New(ir.Tensor(ir.F32, 8)), false},
		{"empty", whole, view(3, 3), false},
		{"donated", gone, gone, false},
	} {
		if got := Overlap(c.a, c.b); got != c.want || Overlap(c.b, c.a) != c.want {
			t.Errorf("%s: Overlap = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCopyInto: a result not already in the storage given is copied
// there, and the storage takes its place; a nil entry leaves the result.
func TestCopyInto(t *testing.T) {
	a, b := FromFloats(ir.Tensor(ir.F32, 3), 1, 2, 3), FromFloats(ir.Tensor(ir.F32, 2), 4, 5)
	into := []*Buffer{New(ir.Tensor(ir.F32, 3)), nil}
	got := CopyInto([]*Buffer{a, b}, into)
	if got[0] != into[0] || got[1] != b || !into[0].Equal(a) {
		t.Fatalf("CopyInto gave %v, %v; want the storage given holding %v, and %v", got[0], got[1], a, b)
	}
}
