package backend

import (
	"bytes"
	"testing"
)

// TestCopyBox: boxes of a 3×4×5 array of bytes (one byte an element, the
// value its offset) read and written back at every start and size, padded
// past the edges, against the element-by-element definition.
func TestCopyBox(t *testing.T) {
	dims := []int64{3, 4, 5}
	whole := make([]byte, 60)
	for i := range whole {
		whole[i] = byte(i + 1)
	}
	for _, pd := range [][]int64{{1, 1, 1}, {2, 2, 3}, {3, 4, 5}, {2, 3, 2}} {
		for s0 := int64(0); s0 < 3; s0++ {
			for s2 := int64(0); s2 < 5; s2++ {
				start := []int64{s0, 1, s2}
				piece := make([]byte, pd[0]*pd[1]*pd[2])
				CopyBox(whole, dims, piece, pd, start, 1, true)
				want := make([]byte, len(piece))
				for i := range pd[0] {
					for j := range pd[1] {
						for k := range pd[2] {
							a, b, c := start[0]+i, start[1]+j, start[2]+k
							if a < 3 && b < 4 && c < 5 {
								want[(i*pd[1]+j)*pd[2]+k] = whole[(a*4+b)*5+c]
							}
						}
					}
				}
				if !bytes.Equal(piece, want) {
					t.Fatalf("box %v at %v: %v, want %v", pd, start, piece, want)
				}
				back := make([]byte, 60)
				CopyBox(back, dims, piece, pd, start, 1, false)
				for i := range back {
					if back[i] != 0 && back[i] != whole[i] {
						t.Fatalf("box %v at %v written back: element %d is %d", pd, start, i, back[i])
					}
				}
			}
		}
	}
	scalar := make([]byte, 4)
	CopyBox([]byte{1, 2, 3, 4}, nil, scalar, nil, nil, 4, true)
	if !bytes.Equal(scalar, []byte{1, 2, 3, 4}) {
		t.Errorf("a scalar's box: %v", scalar)
	}
}
