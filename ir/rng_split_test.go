package ir

import "testing"

// TestRngSplitAxis: the axis both backends pair narrow random elements
// along (XLA's choice, checked bit for bit against XLA by the backends'
// rng tests).
func TestRngSplitAxis(t *testing.T) {
	for _, c := range []struct {
		dims []int64
		want int
	}{
		{[]int64{3, 4, 5}, 1},
		{[]int64{6, 3}, 0},
		{[]int64{3, 7, 5}, 1},
		{[]int64{5, 5, 3}, 0},
		{[]int64{1, 9, 9}, 1},
		{[]int64{7}, 0},
		{nil, 0},
	} {
		if got := RngSplitAxis(c.dims); got != c.want {
			t.Errorf("RngSplitAxis(%v) = %d, want %d", c.dims, got, c.want)
		}
	}
}
