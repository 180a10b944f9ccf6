package cpu

import (
	"fmt"
	"math"
	"testing"
)

// TestMergeSort: the bottom-up merge keeps equal elements in order under a
// strict order, and gives the order its comparisons make under
// comparators that are not strict weak orders (le reverses equal
// neighbours as runs merge; lt leaves a NaN where the merges put it),
// which the llvm backend's kernel reproduces.
func TestMergeSort(t *testing.T) {
	keys := []float64{3, 1, math.NaN(), 1, 0, 3, 2}
	idx := func() []int { return []int{0, 1, 2, 3, 4, 5, 6} }
	for _, c := range []struct {
		name string
		less func(a, b int) bool
		want string
	}{
		{"lt", func(a, b int) bool { return keys[a] < keys[b] }, "[4 1 6 0 2 3 5]"},
		{"le", func(a, b int) bool { return keys[a] <= keys[b] }, "[4 1 6 5 0 2 3]"},
		{"total", func(a, b int) bool {
			if math.IsNaN(keys[a]) || math.IsNaN(keys[b]) {
				return !math.IsNaN(keys[a]) && math.IsNaN(keys[b])
			}
			return keys[a] < keys[b]
		}, "[4 1 3 6 0 5 2]"},
	} {
		if got := fmt.Sprint(mergeSort(idx(), c.less)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
